"""Character sets as HF tokenizers 0.23.3 sees them, where they differ from Python's `unicodedata`.

HF's components classify characters with tables frozen at different Unicode versions: the
``unicode_categories`` crate (Unicode 8.0: BertNormalizer's control/accent tests,
BertPreTokenizer's punctuation), ``unicode-normalization-alignments`` (Unicode 9.0: NFC & co.,
StripAccents' combining marks), Rust's ``std`` (``to_lowercase``, ``is_numeric``: newer than the
Python 3.11 ``unicodedata`` 14.0) and Oniguruma / the ``regex`` crate (Unicode 16.0; the Python
`regex` module used here knows 17.0). Each table below is the exact set HF uses, found by
asking ``tokenizers`` about every code point (the test suite re-checks them); sets are written as
hex code points and ranges.

>>> in_set(OTHER, "\u200b"), in_set(OTHER, "a")
(True, False)
"""

from __future__ import annotations

from bisect import bisect_right

__all__ = [
    "CharSet",
    "in_set",
    "OTHER",
    "NONSPACING_MARK",
    "COMBINING_MARK",
    "PUNCTUATION",
    "NUMERIC",
    "UNKNOWN_TO_HF_REGEX",
    "LOWERCASE_EXTRA",
    "WHITE_SPACE",
    "ranges_class",
]


class CharSet:
    """A set of code points given as sorted ranges; ``c in charset`` by bisection."""

    __slots__ = ("starts", "ends", "ranges")

    def __init__(self, spec: str) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for item in spec.split():
            a, _, b = item.partition("-")
            self.starts.append(int(a, 16))
            self.ends.append(int(b or a, 16))
        self.ranges = list(zip(self.starts, self.ends))

    def __contains__(self, c: str) -> bool:
        cp = ord(c)
        i = bisect_right(self.starts, cp) - 1
        return i >= 0 and cp <= self.ends[i]


def in_set(charset: CharSet, c: str) -> bool:
    return c in charset


def ranges_class(charset: CharSet) -> str:
    """The set as the body of a regex character class (``\\Uxxxxxxxx-\\Uyyyyyyyy...``)."""
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in charset.ranges)


#: Rust ``char::is_whitespace`` (the White_Space property; stable across versions).
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

#: BertNormalizer ``clean_text`` removes these: NUL, U+FFFD and ``is_other`` (Cc, Cf, Co in
#: Unicode 8.0) except tab, newline and carriage return.
OTHER = CharSet((
    "0-8 b-c e-1f 7f-9f ad 600-605 61c 6dd 70f 180e 200b-200f 202a-202e 2060-2064 2066-206f "
    "e000-f8ff feff fff9-fffb fffd 110bd 1bca0-1bca3 1d173-1d17a e0001 e0020-e007f f0000-ffffd "
    "100000-10fffd "
))

#: BertNormalizer ``strip_accents`` removes these after NFD (Mn in Unicode 8.0; the table also
#: lists characters whose whole NFD is such marks).
NONSPACING_MARK = CharSet((
    "300-36f 483-487 591-5bd 5bf 5c1-5c2 5c4-5c5 5c7 610-61a 64b-65f 670 6d6-6dc 6df-6e4 6e7-6e8 "
    "6ea-6ed 711 730-74a 7a6-7b0 7eb-7f3 816-819 81b-823 825-827 829-82d 859-85b 8e3-902 93a 93c "
    "941-948 94d 951-957 962-963 981 9bc 9c1-9c4 9cd 9e2-9e3 a01-a02 a3c a41-a42 a47-a48 a4b-a4d "
    "a51 a70-a71 a75 a81-a82 abc ac1-ac5 ac7-ac8 acd ae2-ae3 b01 b3c b3f b41-b44 b4d b56 b62-b63 "
    "b82 bc0 bcd c00 c3e-c40 c46-c48 c4a-c4d c55-c56 c62-c63 c81 cbc cbf cc6 ccc-ccd ce2-ce3 d01 "
    "d41-d44 d4d d62-d63 dca dd2-dd4 dd6 e31 e34-e3a e47-e4e eb1 eb4-eb9 ebb-ebc ec8-ecd f18-f19 "
    "f35 f37 f39 f71-f7e f80-f84 f86-f87 f8d-f97 f99-fbc fc6 102d-1030 1032-1037 1039-103a "
    "103d-103e 1058-1059 105e-1060 1071-1074 1082 1085-1086 108d 109d 135d-135f 1712-1714 "
    "1732-1734 1752-1753 1772-1773 17b4-17b5 17b7-17bd 17c6 17c9-17d3 17dd 180b-180d 18a9 "
    "1920-1922 1927-1928 1932 1939-193b 1a17-1a18 1a1b 1a56 1a58-1a5e 1a60 1a62 1a65-1a6c "
    "1a73-1a7c 1a7f 1ab0-1abd 1b00-1b03 1b34 1b36-1b3a 1b3c 1b42 1b6b-1b73 1b80-1b81 1ba2-1ba5 "
    "1ba8-1ba9 1bab-1bad 1be6 1be8-1be9 1bed 1bef-1bf1 1c2c-1c33 1c36-1c37 1cd0-1cd2 1cd4-1ce0 "
    "1ce2-1ce8 1ced 1cf4 1cf8-1cf9 1dc0-1df5 1dfc-1dff 20d0-20dc 20e1 20e5-20f0 2cef-2cf1 2d7f "
    "2de0-2dff 302a-302d 3099-309a a66f a674-a67d a69e-a69f a6f0-a6f1 a802 a806 a80b a825-a826 "
    "a8c4 a8e0-a8f1 a926-a92d a947-a951 a980-a982 a9b3 a9b6-a9b9 a9bc a9e5 aa29-aa2e aa31-aa32 "
    "aa35-aa36 aa43 aa4c aa7c aab0 aab2-aab4 aab7-aab8 aabe-aabf aac1 aaec-aaed aaf6 abe5 abe8 "
    "abed fb1e fe00-fe0f fe20-fe2f 101fd 102e0 10376-1037a 10a01-10a03 10a05-10a06 10a0c-10a0f "
    "10a38-10a3a 10a3f 10ae5-10ae6 11001 11038-11046 1107f-11081 110b3-110b6 110b9-110ba "
    "11100-11102 11127-1112b 1112d-11134 11173 11180-11181 111b6-111be 111ca-111cc 1122f-11231 "
    "11234 11236-11237 112df 112e3-112ea 11300-11301 1133c 11340 11366-1136c 11370-11374 "
    "114b3-114b8 114ba 114bf-114c0 114c2-114c3 115b2-115b5 115bc-115bd 115bf-115c0 115dc-115dd "
    "11633-1163a 1163d 1163f-11640 116ab 116ad 116b0-116b5 116b7 1171d-1171f 11722-11725 "
    "11727-1172b 16af0-16af4 16b30-16b36 16f8f-16f92 1bc9d-1bc9e 1d167-1d169 1d17b-1d182 "
    "1d185-1d18b 1d1aa-1d1ad 1d242-1d244 1da00-1da36 1da3b-1da6c 1da75 1da84 1da9b-1da9f "
    "1daa1-1daaf 1e8d0-1e8d6 e0100-e01ef "
))

#: StripAccents removes these (``is_combining_mark``: Mn, Mc, Me in Unicode 9.0).
COMBINING_MARK = CharSet((
    "300-36f 483-489 591-5bd 5bf 5c1-5c2 5c4-5c5 5c7 610-61a 64b-65f 670 6d6-6dc 6df-6e4 6e7-6e8 "
    "6ea-6ed 711 730-74a 7a6-7b0 7eb-7f3 816-819 81b-823 825-827 829-82d 859-85b 8d4-8e1 8e3-903 "
    "93a-93c 93e-94f 951-957 962-963 981-983 9bc 9be-9c4 9c7-9c8 9cb-9cd 9d7 9e2-9e3 a01-a03 a3c "
    "a3e-a42 a47-a48 a4b-a4d a51 a70-a71 a75 a81-a83 abc abe-ac5 ac7-ac9 acb-acd ae2-ae3 b01-b03 "
    "b3c b3e-b44 b47-b48 b4b-b4d b56-b57 b62-b63 b82 bbe-bc2 bc6-bc8 bca-bcd bd7 c00-c03 c3e-c44 "
    "c46-c48 c4a-c4d c55-c56 c62-c63 c81-c83 cbc cbe-cc4 cc6-cc8 cca-ccd cd5-cd6 ce2-ce3 d01-d03 "
    "d3e-d44 d46-d48 d4a-d4d d57 d62-d63 d82-d83 dca dcf-dd4 dd6 dd8-ddf df2-df3 e31 e34-e3a "
    "e47-e4e eb1 eb4-eb9 ebb-ebc ec8-ecd f18-f19 f35 f37 f39 f3e-f3f f71-f84 f86-f87 f8d-f97 "
    "f99-fbc fc6 102b-103e 1056-1059 105e-1060 1062-1064 1067-106d 1071-1074 1082-108d 108f "
    "109a-109d 135d-135f 1712-1714 1732-1734 1752-1753 1772-1773 17b4-17d3 17dd 180b-180d "
    "1885-1886 18a9 1920-192b 1930-193b 1a17-1a1b 1a55-1a5e 1a60-1a7c 1a7f 1ab0-1abe 1b00-1b04 "
    "1b34-1b44 1b6b-1b73 1b80-1b82 1ba1-1bad 1be6-1bf3 1c24-1c37 1cd0-1cd2 1cd4-1ce8 1ced "
    "1cf2-1cf4 1cf8-1cf9 1dc0-1df5 1dfb-1dff 20d0-20f0 2cef-2cf1 2d7f 2de0-2dff 302a-302f "
    "3099-309a a66f-a672 a674-a67d a69e-a69f a6f0-a6f1 a802 a806 a80b a823-a827 a880-a881 "
    "a8b4-a8c5 a8e0-a8f1 a926-a92d a947-a953 a980-a983 a9b3-a9c0 a9e5 aa29-aa36 aa43 aa4c-aa4d "
    "aa7b-aa7d aab0 aab2-aab4 aab7-aab8 aabe-aabf aac1 aaeb-aaef aaf5-aaf6 abe3-abea abec-abed "
    "fb1e fe00-fe0f fe20-fe2f 101fd 102e0 10376-1037a 10a01-10a03 10a05-10a06 10a0c-10a0f "
    "10a38-10a3a 10a3f 10ae5-10ae6 11000-11002 11038-11046 1107f-11082 110b0-110ba 11100-11102 "
    "11127-11134 11173 11180-11182 111b3-111c0 111ca-111cc 1122c-11237 1123e 112df-112ea "
    "11300-11303 1133c 1133e-11344 11347-11348 1134b-1134d 11357 11362-11363 11366-1136c "
    "11370-11374 11435-11446 114b0-114c3 115af-115b5 115b8-115c0 115dc-115dd 11630-11640 "
    "116ab-116b7 1171d-1172b 11c2f-11c36 11c38-11c3f 11c92-11ca7 11ca9-11cb6 16af0-16af4 "
    "16b30-16b36 16f51-16f7e 16f8f-16f92 1bc9d-1bc9e 1d165-1d169 1d16d-1d172 1d17b-1d182 "
    "1d185-1d18b 1d1aa-1d1ad 1d242-1d244 1da00-1da36 1da3b-1da6c 1da75 1da84 1da9b-1da9f "
    "1daa1-1daaf 1e000-1e006 1e008-1e018 1e01b-1e021 1e023-1e024 1e026-1e02a 1e8d0-1e8d6 "
    "1e944-1e94a e0100-e01ef "
))

#: BertPreTokenizer / Punctuation: ASCII punctuation or P* in Unicode 8.0.
PUNCTUATION = CharSet((
    "21-2f 3a-40 5b-60 7b-7e a1 a7 ab b6-b7 bb bf 37e 387 55a-55f 589-58a 5be 5c0 5c3 5c6 5f3-5f4 "
    "609-60a 60c-60d 61b 61e-61f 66a-66d 6d4 700-70d 7f7-7f9 830-83e 85e 964-965 970 af0 df4 e4f "
    "e5a-e5b f04-f12 f14 f3a-f3d f85 fd0-fd4 fd9-fda 104a-104f 10fb 1360-1368 1400 166d-166e "
    "169b-169c 16eb-16ed 1735-1736 17d4-17d6 17d8-17da 1800-180a 1944-1945 1a1e-1a1f 1aa0-1aa6 "
    "1aa8-1aad 1b5a-1b60 1bfc-1bff 1c3b-1c3f 1c7e-1c7f 1cc0-1cc7 1cd3 2010-2027 2030-2043 "
    "2045-2051 2053-205e 207d-207e 208d-208e 2308-230b 2329-232a 2768-2775 27c5-27c6 27e6-27ef "
    "2983-2998 29d8-29db 29fc-29fd 2cf9-2cfc 2cfe-2cff 2d70 2e00-2e2e 2e30-2e42 3001-3003 "
    "3008-3011 3014-301f 3030 303d 30a0 30fb a4fe-a4ff a60d-a60f a673 a67e a6f2-a6f7 a874-a877 "
    "a8ce-a8cf a8f8-a8fa a8fc a92e-a92f a95f a9c1-a9cd a9de-a9df aa5c-aa5f aade-aadf aaf0-aaf1 "
    "abeb fd3e-fd3f fe10-fe19 fe30-fe52 fe54-fe61 fe63 fe68 fe6a-fe6b ff01-ff03 ff05-ff0a "
    "ff0c-ff0f ff1a-ff1b ff1f-ff20 ff3b-ff3d ff3f ff5b ff5d ff5f-ff65 10100-10102 1039f 103d0 "
    "1056f 10857 1091f 1093f 10a50-10a58 10a7f 10af0-10af6 10b39-10b3f 10b99-10b9c 11047-1104d "
    "110bb-110bc 110be-110c1 11140-11143 11174-11175 111c5-111c9 111cd 111db 111dd-111df "
    "11238-1123d 112a9 114c6 115c1-115d7 11641-11643 1173c-1173e 12470-12474 16a6e-16a6f 16af5 "
    "16b37-16b3b 16b44 1bc9f 1da87-1da8b "
))

#: Digits: Rust ``char::is_numeric`` (Nd, Nl, No).
NUMERIC = CharSet((
    "30-39 b2-b3 b9 bc-be 660-669 6f0-6f9 7c0-7c9 966-96f 9e6-9ef 9f4-9f9 a66-a6f ae6-aef b66-b6f "
    "b72-b77 be6-bf2 c66-c6f c78-c7e ce6-cef d58-d5e d66-d78 de6-def e50-e59 ed0-ed9 f20-f33 "
    "1040-1049 1090-1099 1369-137c 16ee-16f0 17e0-17e9 17f0-17f9 1810-1819 1946-194f 19d0-19da "
    "1a80-1a89 1a90-1a99 1b50-1b59 1bb0-1bb9 1c40-1c49 1c50-1c59 2070 2074-2079 2080-2089 "
    "2150-2182 2185-2189 2460-249b 24ea-24ff 2776-2793 2cfd 3007 3021-3029 3038-303a 3192-3195 "
    "3220-3229 3248-324f 3251-325f 3280-3289 32b1-32bf a620-a629 a6e6-a6ef a830-a835 a8d0-a8d9 "
    "a900-a909 a9d0-a9d9 a9f0-a9f9 aa50-aa59 abf0-abf9 ff10-ff19 10107-10133 10140-10178 "
    "1018a-1018b 102e1-102fb 10320-10323 10341 1034a 103d1-103d5 104a0-104a9 10858-1085f "
    "10879-1087f 108a7-108af 108fb-108ff 10916-1091b 109bc-109bd 109c0-109cf 109d2-109ff "
    "10a40-10a48 10a7d-10a7e 10a9d-10a9f 10aeb-10aef 10b58-10b5f 10b78-10b7f 10ba9-10baf "
    "10cfa-10cff 10d30-10d39 10d40-10d49 10e60-10e7e 10f1d-10f26 10f51-10f54 10fc5-10fcb "
    "11052-1106f 110f0-110f9 11136-1113f 111d0-111d9 111e1-111f4 112f0-112f9 11450-11459 "
    "114d0-114d9 11650-11659 116c0-116c9 116d0-116e3 11730-1173b 118e0-118f2 11950-11959 "
    "11bf0-11bf9 11c50-11c6c 11d50-11d59 11da0-11da9 11de0-11de9 11f50-11f59 11fc0-11fd4 "
    "12400-1246e 16130-16139 16a60-16a69 16ac0-16ac9 16b50-16b59 16b5b-16b61 16d70-16d79 "
    "16e80-16e96 16ff4-16ff6 1ccf0-1ccf9 1d2c0-1d2d3 1d2e0-1d2f3 1d360-1d378 1d7ce-1d7ff "
    "1e140-1e149 1e2f0-1e2f9 1e4f0-1e4f9 1e5f1-1e5fa 1e8c7-1e8cf 1e950-1e959 1ec71-1ecab "
    "1ecad-1ecaf 1ecb1-1ecb4 1ed01-1ed2d 1ed2f-1ed3d 1f100-1f10c 1fbf0-1fbf9 "
))

#: Characters the Python `regex` module knows (Unicode 17.0) but Oniguruma and Rust's ``regex``
#: (Unicode 16.0) treat as unassigned; they are hidden from the pattern before matching.
UNKNOWN_TO_HF_REGEX = CharSet((
    "558 58b-58c 5c8-5c9 88f b53-b54 c5c cdc 1acf-1af0 208f 209d-209f a7ce-a7cf a7d2 a7d4 a7dd "
    "a7e2 a7f1 ab6c-ab6d 107bb-107bf 10940-10959 10ec5-10ec7 10ecb-10ecf 10ed9-10eee 10ef0-10efb "
    "11b0a 11b60-11b67 11db0-11ddb 11de0-11de9 11df0-11df1 1246f 12475-1247f 12550-12686 "
    "16ea0-16eb8 16ebb-16ed3 16ff2-16ff6 187f8-187ff 18cd6-18cda 18d09-18d20 18d80-18df2 "
    "18e00-19191 191a0-191d2 1b123-1b128 1b168 1d127-1d128 1d250-1d252 1d25b-1d25c 1d25f "
    "1d280-1d281 1d6a6 1df1f-1df24 1df2b-1df81 1df90-1df96 1dfcd-1dfff 1e6c0-1e6de 1e6e0-1e6f5 "
    "1e6fe-1e6ff 2b73a-2b73f 2b81e 2cea2-2cead 323b0-33479 3d000-3fc3f "
))

#: Rust ``char::to_lowercase`` mappings that Python 3.11's ``str.lower`` lacks (newer Unicode).
LOWERCASE_EXTRA: dict[str, str] = {
    '\u1c89': '\u1c8a',
    '\ua7cb': 'ɤ',
    '\ua7cc': '\ua7cd',
    '\ua7ce': '\ua7cf',
    '\ua7d2': 'ꟓ',
    '\ua7d4': 'ꟕ',
    '\ua7da': '\ua7db',
    '\ua7dc': 'ƛ',
    '\U00010d50': '\U00010d70',
    '\U00010d51': '\U00010d71',
    '\U00010d52': '\U00010d72',
    '\U00010d53': '\U00010d73',
    '\U00010d54': '\U00010d74',
    '\U00010d55': '\U00010d75',
    '\U00010d56': '\U00010d76',
    '\U00010d57': '\U00010d77',
    '\U00010d58': '\U00010d78',
    '\U00010d59': '\U00010d79',
    '\U00010d5a': '\U00010d7a',
    '\U00010d5b': '\U00010d7b',
    '\U00010d5c': '\U00010d7c',
    '\U00010d5d': '\U00010d7d',
    '\U00010d5e': '\U00010d7e',
    '\U00010d5f': '\U00010d7f',
    '\U00010d60': '\U00010d80',
    '\U00010d61': '\U00010d81',
    '\U00010d62': '\U00010d82',
    '\U00010d63': '\U00010d83',
    '\U00010d64': '\U00010d84',
    '\U00010d65': '\U00010d85',
    '\U00016ea0': '\U00016ebb',
    '\U00016ea1': '\U00016ebc',
    '\U00016ea2': '\U00016ebd',
    '\U00016ea3': '\U00016ebe',
    '\U00016ea4': '\U00016ebf',
    '\U00016ea5': '\U00016ec0',
    '\U00016ea6': '\U00016ec1',
    '\U00016ea7': '\U00016ec2',
    '\U00016ea8': '\U00016ec3',
    '\U00016ea9': '\U00016ec4',
    '\U00016eaa': '\U00016ec5',
    '\U00016eab': '\U00016ec6',
    '\U00016eac': '\U00016ec7',
    '\U00016ead': '\U00016ec8',
    '\U00016eae': '\U00016ec9',
    '\U00016eaf': '\U00016eca',
    '\U00016eb0': '\U00016ecb',
    '\U00016eb1': '\U00016ecc',
    '\U00016eb2': '\U00016ecd',
    '\U00016eb3': '\U00016ece',
    '\U00016eb4': '\U00016ecf',
    '\U00016eb5': '\U00016ed0',
    '\U00016eb6': '\U00016ed1',
    '\U00016eb7': '\U00016ed2',
    '\U00016eb8': '\U00016ed3',
}
