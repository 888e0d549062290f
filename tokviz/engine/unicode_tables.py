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

import re
from bisect import bisect_right
from collections.abc import Container, Iterable, Sequence
from functools import lru_cache

__all__ = [
    "CharSet",
    "in_set",
    "OTHER",
    "NONSPACING_MARK",
    "COMBINING_MARK",
    "PUNCTUATION",
    "NUMERIC",
    "UNKNOWN_TO_HF_REGEX",
    "UNKNOWN_HIDDEN_AS",
    "LOWERCASE_EXTRA",
    "WHITE_SPACE",
    "ranges_class",
    "chars_class",
    "code_ranges",
    "class_runs",
    "SCRIPT_NAMES",
    "script_of",
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

    @classmethod
    def from_ranges(cls, ranges: list[tuple[int, int]] | list[list[int]]) -> CharSet:
        return cls(" ".join(f"{a:x}" if a == b else f"{a:x}-{b:x}" for a, b in ranges))


@lru_cache(maxsize=512)
def _runs_regex(chars: frozenset[str]) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(c) for c in sorted(chars)) + "]+")


def class_runs(text: str, members: Container[str]) -> list[tuple[int, int]]:
    """Spans of the maximal runs of ``text`` made of characters in ``members``.

    Fast for large texts and large classes: the distinct characters of the text are tested once
    and only those present go into a (cached) small character class, because a regex class with
    thousands of ranges costs microseconds per character.
    """
    if len(text) < _SHORT_TEXT:
        # Short texts (a line, a word) would each compile their own class: a plain scan is cheaper.
        runs: list[tuple[int, int]] = []
        start = -1
        for i, c in enumerate(text):
            if c in members:
                if start < 0:
                    start = i
            elif start >= 0:
                runs.append((start, i))
                start = -1
        if start >= 0:
            runs.append((start, len(text)))
        return runs
    present = frozenset(c for c in set(text) if c in members)
    if not present:
        return []
    return [m.span() for m in _runs_regex(present).finditer(text)]


_SHORT_TEXT = 512


def in_set(charset: CharSet, c: str) -> bool:
    return c in charset


def ranges_class(charset: CharSet) -> str:
    """The set as the body of a regex character class (``\\Uxxxxxxxx-\\Uyyyyyyyy...``)."""
    return _format_class(charset.ranges)


def chars_class(chars: Iterable[str]) -> str:
    """`ranges_class` of a set of characters (runs of consecutive code points become ranges)."""
    return _format_class(code_ranges(sorted(set(map(ord, chars)))))


def code_ranges(codes: Sequence[int]) -> list[list[int]]:
    """Sorted distinct code points as ``[first, last]`` runs of consecutive values."""
    ranges: list[list[int]] = []
    for cp in codes:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return ranges


def _format_class(ranges: Iterable[Sequence[int]]) -> str:
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


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

#: What a character of `UNKNOWN_TO_HF_REGEX` becomes before matching: a permanent
#: noncharacter (general category Cn in every engine), one code point like the one it replaces.
UNKNOWN_HIDDEN_AS = "\ufdd0"

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

#: UnicodeScripts: HF's script of each character, after its fix-ups (Hiragana, Katakana and
#: U+30FC count as Han; the space is "Any"). Characters not listed are "Any" (they never start a
#: new chunk). ``start-end:k`` means script ``SCRIPT_NAMES[k]``.
SCRIPT_NAMES: tuple[str, ...] = (
    'Common', 'Latin', 'Bopomofo', 'Inherited', 'Greek', 'Coptic', 'Cyrillic', 'Armenian', 'Hebrew',
    'Arabic', 'Syriac', 'Thaana', 'Nko', 'Samaritan', 'Mandaic', 'Devanagari', 'Bengali',
    'Gurmukhi', 'Gujarati', 'Oriya', 'Tamil', 'Telugu', 'Kannada', 'Malayalam', 'Sinhala', 'Thai',
    'Lao', 'Tibetan', 'Myanmar', 'Georgian', 'Hangul', 'Ethiopic', 'Cherokee', 'CanadianAboriginal',
    'Ogham', 'Runic', 'Tagalog', 'Hanunoo', 'Buhid', 'Tagbanwa', 'Khmer', 'Mongolian', 'Limbu',
    'TaiLe', 'NewTaiLue', 'Buginese', 'TaiTham', 'Balinese', 'Sundanese', 'Batak', 'Lepcha',
    'OlChiki', 'Braille', 'Glagolitic', 'Tifinagh', 'Han', 'Yi', 'Lisu', 'Vai', 'Bamum',
    'SylotiNagri', 'PhagsPa', 'Saurashtra', 'KayahLi', 'Rejang', 'Javanese', 'Cham', 'TaiViet',
    'MeeteiMayek', 'LinearB', 'Lycian', 'Carian', 'OldItalic', 'Gothic', 'OldPermic', 'Ugaritic',
    'OldPersian', 'Deseret', 'Shavian', 'Osmanya', 'Osage', 'Elbasan', 'CaucasianAlbanian',
    'LinearA', 'Cypriot', 'ImperialAramaic', 'Palmyrene', 'Nabataean', 'Hatran', 'Phoenician',
    'Lydian', 'MeroiticHieroglyphs', 'MeroiticCursive', 'Kharoshthi', 'OldSouthArabian',
    'OldNorthArabian', 'Manichaean', 'Avestan', 'InscriptionalParthian', 'InscriptionalPahlavi',
    'PsalterPahlavi', 'OldTurkic', 'OldHungarian', 'Brahmi', 'Kaithi', 'SoraSompeng', 'Chakma',
    'Mahajani', 'Sharada', 'Khojki', 'Multani', 'Khudawadi', 'Grantha', 'Newa', 'Tirhuta',
    'Siddham', 'Modi', 'Takri', 'Ahom', 'WarangCiti', 'PauCinHau', 'Bhaiksuki', 'Marchen',
    'Cuneiform', 'EgyptianHieroglyphs', 'AnatolianHieroglyphs', 'Mro', 'BassaVah', 'PahawhHmong',
    'Miao', 'Tangut', 'Duployan', 'SignWriting', 'MendeKikakui', 'Adlam',
)
SCRIPT_RANGES = (
    "0-1f:0 21-40:0 41-5a:1 5b-60:0 61-7a:1 7b-a9:0 aa:1 ab-b9:0 ba:1 bb-bf:0 c0-d6:1 d7:0 "
    "d8-f6:1 f7:0 f8-2b8:1 2b9-2df:0 2e0-2e4:1 2e5-2e9:0 2ea-2eb:2 2ec-2ff:0 300-36f:3 370-373:4 "
    "374:0 375-377:4 37a-37d:4 37e:0 37f:4 384:4 385:0 386:4 387:0 388-38a:4 38c:4 38e-3a1:4 "
    "3a3-3e1:4 3e2-3ef:5 3f0-3ff:4 400-484:6 485-486:3 487-52f:6 531-556:7 559-55f:7 561-587:7 "
    "589:0 58a:7 58d-58f:7 591-5c7:8 5d0-5ea:8 5f0-5f4:8 600-604:9 605:0 606-60b:9 60c:0 "
    "60d-61a:9 61b-61c:0 61e:9 61f:0 620-63f:9 640:0 641-64a:9 64b-655:3 656-66f:9 670:3 "
    "671-6dc:9 6dd:0 6de-6ff:9 700-70d:10 70f-74a:10 74d-74f:10 750-77f:9 780-7b1:11 7c0-7fa:12 "
    "800-82d:13 830-83e:13 840-85b:14 85e:14 8a0-8b4:9 8b6-8bd:9 8d4-8e1:9 8e2:0 8e3-8ff:9 "
    "900-950:15 951-952:3 953-963:15 964-965:0 966-97f:15 980-983:16 985-98c:16 98f-990:16 "
    "993-9a8:16 9aa-9b0:16 9b2:16 9b6-9b9:16 9bc-9c4:16 9c7-9c8:16 9cb-9ce:16 9d7:16 9dc-9dd:16 "
    "9df-9e3:16 9e6-9fb:16 a01-a03:17 a05-a0a:17 a0f-a10:17 a13-a28:17 a2a-a30:17 a32-a33:17 "
    "a35-a36:17 a38-a39:17 a3c:17 a3e-a42:17 a47-a48:17 a4b-a4d:17 a51:17 a59-a5c:17 a5e:17 "
    "a66-a75:17 a81-a83:18 a85-a8d:18 a8f-a91:18 a93-aa8:18 aaa-ab0:18 ab2-ab3:18 ab5-ab9:18 "
    "abc-ac5:18 ac7-ac9:18 acb-acd:18 ad0:18 ae0-ae3:18 ae6-af1:18 af9:18 b01-b03:19 b05-b0c:19 "
    "b0f-b10:19 b13-b28:19 b2a-b30:19 b32-b33:19 b35-b39:19 b3c-b44:19 b47-b48:19 b4b-b4d:19 "
    "b56-b57:19 b5c-b5d:19 b5f-b63:19 b66-b77:19 b82-b83:20 b85-b8a:20 b8e-b90:20 b92-b95:20 "
    "b99-b9a:20 b9c:20 b9e-b9f:20 ba3-ba4:20 ba8-baa:20 bae-bb9:20 bbe-bc2:20 bc6-bc8:20 "
    "bca-bcd:20 bd0:20 bd7:20 be6-bfa:20 c00-c03:21 c05-c0c:21 c0e-c10:21 c12-c28:21 c2a-c39:21 "
    "c3d-c44:21 c46-c48:21 c4a-c4d:21 c55-c56:21 c58-c5a:21 c60-c63:21 c66-c6f:21 c78-c7f:21 "
    "c80-c83:22 c85-c8c:22 c8e-c90:22 c92-ca8:22 caa-cb3:22 cb5-cb9:22 cbc-cc4:22 cc6-cc8:22 "
    "cca-ccd:22 cd5-cd6:22 cde:22 ce0-ce3:22 ce6-cef:22 cf1-cf2:22 d01-d03:23 d05-d0c:23 "
    "d0e-d10:23 d12-d3a:23 d3d-d44:23 d46-d48:23 d4a-d4f:23 d54-d63:23 d66-d7f:23 d82-d83:24 "
    "d85-d96:24 d9a-db1:24 db3-dbb:24 dbd:24 dc0-dc6:24 dca:24 dcf-dd4:24 dd6:24 dd8-ddf:24 "
    "de6-def:24 df2-df4:24 e01-e3a:25 e3f:0 e40-e5b:25 e81-e82:26 e84:26 e87-e88:26 e8a:26 e8d:26 "
    "e94-e97:26 e99-e9f:26 ea1-ea3:26 ea5:26 ea7:26 eaa-eab:26 ead-eb9:26 ebb-ebd:26 ec0-ec4:26 "
    "ec6:26 ec8-ecd:26 ed0-ed9:26 edc-edf:26 f00-f47:27 f49-f6c:27 f71-f97:27 f99-fbc:27 "
    "fbe-fcc:27 fce-fd4:27 fd5-fd8:0 fd9-fda:27 1000-109f:28 10a0-10c5:29 10c7:29 10cd:29 "
    "10d0-10fa:29 10fb:0 10fc-10ff:29 1100-11ff:30 1200-1248:31 124a-124d:31 1250-1256:31 1258:31 "
    "125a-125d:31 1260-1288:31 128a-128d:31 1290-12b0:31 12b2-12b5:31 12b8-12be:31 12c0:31 "
    "12c2-12c5:31 12c8-12d6:31 12d8-1310:31 1312-1315:31 1318-135a:31 135d-137c:31 1380-1399:31 "
    "13a0-13f5:32 13f8-13fd:32 1400-167f:33 1680-169c:34 16a0-16ea:35 16eb-16ed:0 16ee-16f8:35 "
    "1700-170c:36 170e-1714:36 1720-1734:37 1735-1736:0 1740-1753:38 1760-176c:39 176e-1770:39 "
    "1772-1773:39 1780-17dd:40 17e0-17e9:40 17f0-17f9:40 1800-1801:41 1802-1803:0 1804:41 1805:0 "
    "1806-180e:41 1810-1819:41 1820-1877:41 1880-18aa:41 18b0-18f5:33 1900-191e:42 1920-192b:42 "
    "1930-193b:42 1940:42 1944-194f:42 1950-196d:43 1970-1974:43 1980-19ab:44 19b0-19c9:44 "
    "19d0-19da:44 19de-19df:44 19e0-19ff:40 1a00-1a1b:45 1a1e-1a1f:45 1a20-1a5e:46 1a60-1a7c:46 "
    "1a7f-1a89:46 1a90-1a99:46 1aa0-1aad:46 1ab0-1abe:3 1b00-1b4b:47 1b50-1b7c:47 1b80-1bbf:48 "
    "1bc0-1bf3:49 1bfc-1bff:49 1c00-1c37:50 1c3b-1c49:50 1c4d-1c4f:50 1c50-1c7f:51 1c80-1c88:6 "
    "1cc0-1cc7:48 1cd0-1cd2:3 1cd3:0 1cd4-1ce0:3 1ce1:0 1ce2-1ce8:3 1ce9-1cec:0 1ced:3 "
    "1cee-1cf3:0 1cf4:3 1cf5-1cf6:0 1cf8-1cf9:3 1d00-1d25:1 1d26-1d2a:4 1d2b:6 1d2c-1d5c:1 "
    "1d5d-1d61:4 1d62-1d65:1 1d66-1d6a:4 1d6b-1d77:1 1d78:6 1d79-1dbe:1 1dbf:4 1dc0-1df5:3 "
    "1dfb-1dff:3 1e00-1eff:1 1f00-1f15:4 1f18-1f1d:4 1f20-1f45:4 1f48-1f4d:4 1f50-1f57:4 1f59:4 "
    "1f5b:4 1f5d:4 1f5f-1f7d:4 1f80-1fb4:4 1fb6-1fc4:4 1fc6-1fd3:4 1fd6-1fdb:4 1fdd-1fef:4 "
    "1ff2-1ff4:4 1ff6-1ffe:4 2000-200b:0 200c-200d:3 200e-2064:0 2066-2070:0 2071:1 2074-207e:0 "
    "207f:1 2080-208e:0 2090-209c:1 20a0-20be:0 20d0-20f0:3 2100-2125:0 2126:4 2127-2129:0 "
    "212a-212b:1 212c-2131:0 2132:1 2133-214d:0 214e:1 214f-215f:0 2160-2188:1 2189-218b:0 "
    "2190-23fe:0 2400-2426:0 2440-244a:0 2460-27ff:0 2800-28ff:52 2900-2b73:0 2b76-2b95:0 "
    "2b98-2bb9:0 2bbd-2bc8:0 2bca-2bd1:0 2bec-2bef:0 2c00-2c2e:53 2c30-2c5e:53 2c60-2c7f:1 "
    "2c80-2cf3:5 2cf9-2cff:5 2d00-2d25:29 2d27:29 2d2d:29 2d30-2d67:54 2d6f-2d70:54 2d7f:54 "
    "2d80-2d96:31 2da0-2da6:31 2da8-2dae:31 2db0-2db6:31 2db8-2dbe:31 2dc0-2dc6:31 2dc8-2dce:31 "
    "2dd0-2dd6:31 2dd8-2dde:31 2de0-2dff:6 2e00-2e44:0 2e80-2e99:55 2e9b-2ef3:55 2f00-2fd5:55 "
    "2ff0-2ffb:0 3000-3004:0 3005:55 3006:0 3007:55 3008-3020:0 3021-3029:55 302a-302d:3 "
    "302e-302f:30 3030-3037:0 3038-303b:55 303c-303f:0 3041-3096:55 3099-309a:3 309b-309c:0 "
    "309d-309f:55 30a0:0 30a1-30fa:55 30fb:0 30fc-30ff:55 3105-312d:2 3131-318e:30 3190-319f:0 "
    "31a0-31ba:2 31c0-31e3:0 31f0-31ff:55 3200-321e:30 3220-325f:0 3260-327e:30 327f-32cf:0 "
    "32d0-32fe:55 3300-3357:55 3358-33ff:0 3400-4db5:55 4dc0-4dff:0 4e00-9fd5:55 a000-a48c:56 "
    "a490-a4c6:56 a4d0-a4ff:57 a500-a62b:58 a640-a69f:6 a6a0-a6f7:59 a700-a721:0 a722-a787:1 "
    "a788-a78a:0 a78b-a7ae:1 a7b0-a7b7:1 a7f7-a7ff:1 a800-a82b:60 a830-a839:0 a840-a877:61 "
    "a880-a8c5:62 a8ce-a8d9:62 a8e0-a8fd:15 a900-a92d:63 a92e:0 a92f:63 a930-a953:64 a95f:64 "
    "a960-a97c:30 a980-a9cd:65 a9cf:0 a9d0-a9d9:65 a9de-a9df:65 a9e0-a9fe:28 aa00-aa36:66 "
    "aa40-aa4d:66 aa50-aa59:66 aa5c-aa5f:66 aa60-aa7f:28 aa80-aac2:67 aadb-aadf:67 aae0-aaf6:68 "
    "ab01-ab06:31 ab09-ab0e:31 ab11-ab16:31 ab20-ab26:31 ab28-ab2e:31 ab30-ab5a:1 ab5b:0 "
    "ab5c-ab64:1 ab65:4 ab70-abbf:32 abc0-abed:68 abf0-abf9:68 ac00-d7a3:30 d7b0-d7c6:30 "
    "d7cb-d7fb:30 f900-fa6d:55 fa70-fad9:55 fb00-fb06:1 fb13-fb17:7 fb1d-fb36:8 fb38-fb3c:8 "
    "fb3e:8 fb40-fb41:8 fb43-fb44:8 fb46-fb4f:8 fb50-fbc1:9 fbd3-fd3d:9 fd3e-fd3f:0 fd50-fd8f:9 "
    "fd92-fdc7:9 fdf0-fdfd:9 fe00-fe0f:3 fe10-fe19:0 fe20-fe2d:3 fe2e-fe2f:6 fe30-fe52:0 "
    "fe54-fe66:0 fe68-fe6b:0 fe70-fe74:9 fe76-fefc:9 feff:0 ff01-ff20:0 ff21-ff3a:1 ff3b-ff40:0 "
    "ff41-ff5a:1 ff5b-ff65:0 ff66-ff6f:55 ff70:0 ff71-ff9d:55 ff9e-ff9f:0 ffa0-ffbe:30 "
    "ffc2-ffc7:30 ffca-ffcf:30 ffd2-ffd7:30 ffda-ffdc:30 ffe0-ffe6:0 ffe8-ffee:0 fff9-fffd:0 "
    "10000-1000b:69 1000d-10026:69 10028-1003a:69 1003c-1003d:69 1003f-1004d:69 10050-1005d:69 "
    "10080-100fa:69 10100-10102:0 10107-10133:0 10137-1013f:0 10140-1018e:4 10190-1019b:0 101a0:4 "
    "101d0-101fc:0 101fd:3 10280-1029c:70 102a0-102d0:71 102e0:3 102e1-102fb:0 10300-10323:72 "
    "10330-1034a:73 10350-1037a:74 10380-1039d:75 1039f:75 103a0-103c3:76 103c8-103d5:76 "
    "10400-1044f:77 10450-1047f:78 10480-1049d:79 104a0-104a9:79 104b0-104d3:80 104d8-104fb:80 "
    "10500-10527:81 10530-10563:82 1056f:82 10600-10736:83 10740-10755:83 10760-10767:83 "
    "10800-10805:84 10808:84 1080a-10835:84 10837-10838:84 1083c:84 1083f:84 10840-10855:85 "
    "10857-1085f:85 10860-1087f:86 10880-1089e:87 108a7-108af:87 108e0-108f2:88 108f4-108f5:88 "
    "108fb-108ff:88 10900-1091b:89 1091f:89 10920-10939:90 1093f:90 10980-1099f:91 109a0-109b7:92 "
    "109bc-109cf:92 109d2-109ff:92 10a00-10a03:93 10a05-10a06:93 10a0c-10a13:93 10a15-10a17:93 "
    "10a19-10a33:93 10a38-10a3a:93 10a3f-10a47:93 10a50-10a58:93 10a60-10a7f:94 10a80-10a9f:95 "
    "10ac0-10ae6:96 10aeb-10af6:96 10b00-10b35:97 10b39-10b3f:97 10b40-10b55:98 10b58-10b5f:98 "
    "10b60-10b72:99 10b78-10b7f:99 10b80-10b91:100 10b99-10b9c:100 10ba9-10baf:100 "
    "10c00-10c48:101 10c80-10cb2:102 10cc0-10cf2:102 10cfa-10cff:102 10e60-10e7e:9 "
    "11000-1104d:103 11052-1106f:103 1107f:103 11080-110c1:104 110d0-110e8:105 110f0-110f9:105 "
    "11100-11134:106 11136-11143:106 11150-11176:107 11180-111cd:108 111d0-111df:108 "
    "111e1-111f4:24 11200-11211:109 11213-1123e:109 11280-11286:110 11288:110 1128a-1128d:110 "
    "1128f-1129d:110 1129f-112a9:110 112b0-112ea:111 112f0-112f9:111 11300-11303:112 "
    "11305-1130c:112 1130f-11310:112 11313-11328:112 1132a-11330:112 11332-11333:112 "
    "11335-11339:112 1133c-11344:112 11347-11348:112 1134b-1134d:112 11350:112 11357:112 "
    "1135d-11363:112 11366-1136c:112 11370-11374:112 11400-11459:113 1145b:113 1145d:113 "
    "11480-114c7:114 114d0-114d9:114 11580-115b5:115 115b8-115dd:115 11600-11644:116 "
    "11650-11659:116 11660-1166c:41 11680-116b7:117 116c0-116c9:117 11700-11719:118 "
    "1171d-1172b:118 11730-1173f:118 118a0-118f2:119 118ff:119 11ac0-11af8:120 11c00-11c08:121 "
    "11c0a-11c36:121 11c38-11c45:121 11c50-11c6c:121 11c70-11c8f:122 11c92-11ca7:122 "
    "11ca9-11cb6:122 12000-12399:123 12400-1246e:123 12470-12474:123 12480-12543:123 "
    "13000-1342e:124 14400-14646:125 16800-16a38:59 16a40-16a5e:126 16a60-16a69:126 "
    "16a6e-16a6f:126 16ad0-16aed:127 16af0-16af5:127 16b00-16b45:128 16b50-16b59:128 "
    "16b5b-16b61:128 16b63-16b77:128 16b7d-16b8f:128 16f00-16f44:129 16f50-16f7e:129 "
    "16f8f-16f9f:129 16fe0:130 17000-187ec:130 18800-18af2:130 1b000-1b001:55 1bc00-1bc6a:131 "
    "1bc70-1bc7c:131 1bc80-1bc88:131 1bc90-1bc99:131 1bc9c-1bc9f:131 1bca0-1bca3:0 1d000-1d0f5:0 "
    "1d100-1d126:0 1d129-1d166:0 1d167-1d169:3 1d16a-1d17a:0 1d17b-1d182:3 1d183-1d184:0 "
    "1d185-1d18b:3 1d18c-1d1a9:0 1d1aa-1d1ad:3 1d1ae-1d1e8:0 1d200-1d245:4 1d300-1d356:0 "
    "1d360-1d371:0 1d400-1d454:0 1d456-1d49c:0 1d49e-1d49f:0 1d4a2:0 1d4a5-1d4a6:0 1d4a9-1d4ac:0 "
    "1d4ae-1d4b9:0 1d4bb:0 1d4bd-1d4c3:0 1d4c5-1d505:0 1d507-1d50a:0 1d50d-1d514:0 1d516-1d51c:0 "
    "1d51e-1d539:0 1d53b-1d53e:0 1d540-1d544:0 1d546:0 1d54a-1d550:0 1d552-1d6a5:0 1d6a8-1d7cb:0 "
    "1d7ce-1d7ff:0 1d800-1da8b:132 1da9b-1da9f:132 1daa1-1daaf:132 1e000-1e006:53 1e008-1e018:53 "
    "1e01b-1e021:53 1e023-1e024:53 1e026-1e02a:53 1e800-1e8c4:133 1e8c7-1e8d6:133 1e900-1e94a:134 "
    "1e950-1e959:134 1e95e-1e95f:134 1ee00-1ee03:9 1ee05-1ee1f:9 1ee21-1ee22:9 1ee24:9 1ee27:9 "
    "1ee29-1ee32:9 1ee34-1ee37:9 1ee39:9 1ee3b:9 1ee42:9 1ee47:9 1ee49:9 1ee4b:9 1ee4d-1ee4f:9 "
    "1ee51-1ee52:9 1ee54:9 1ee57:9 1ee59:9 1ee5b:9 1ee5d:9 1ee5f:9 1ee61-1ee62:9 1ee64:9 "
    "1ee67-1ee6a:9 1ee6c-1ee72:9 1ee74-1ee77:9 1ee79-1ee7c:9 1ee7e:9 1ee80-1ee89:9 1ee8b-1ee9b:9 "
    "1eea1-1eea3:9 1eea5-1eea9:9 1eeab-1eebb:9 1eef0-1eef1:9 1f000-1f02b:0 1f030-1f093:0 "
    "1f0a0-1f0ae:0 1f0b1-1f0bf:0 1f0c1-1f0cf:0 1f0d1-1f0f5:0 1f100-1f10c:0 1f110-1f12e:0 "
    "1f130-1f16b:0 1f170-1f1ac:0 1f1e6-1f1ff:0 1f200:55 1f201-1f202:0 1f210-1f23b:0 1f240-1f248:0 "
    "1f250-1f251:0 1f300-1f6d2:0 1f6e0-1f6ec:0 1f6f0-1f6f6:0 1f700-1f773:0 1f780-1f7d4:0 "
    "1f800-1f80b:0 1f810-1f847:0 1f850-1f859:0 1f860-1f887:0 1f890-1f8ad:0 1f910-1f91e:0 "
    "1f920-1f927:0 1f930:0 1f933-1f93e:0 1f940-1f94b:0 1f950-1f95e:0 1f980-1f991:0 1f9c0:0 "
    "20000-2a6d6:55 2a700-2b734:55 2b740-2b81d:55 2b820-2cea1:55 2f800-2fa1d:55 e0001:0 "
    "e0020-e007f:0 e0100-e01ef:3 "
)


def _parse_script_ranges(spec: str) -> tuple[list[int], list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    ids: list[int] = []
    for item in spec.split():
        span, _, k = item.partition(":")
        a, _, b = span.partition("-")
        starts.append(int(a, 16))
        ends.append(int(b or a, 16))
        ids.append(int(k))
    return starts, ends, ids


_SC_STARTS, _SC_ENDS, _SC_IDS = _parse_script_ranges(SCRIPT_RANGES)


def script_of(c: str) -> int:
    """Index into `SCRIPT_NAMES` of ``c``'s script as HF's UnicodeScripts sees it, or -1 (Any)."""
    cp = ord(c)
    i = bisect_right(_SC_STARTS, cp) - 1
    if i >= 0 and cp <= _SC_ENDS[i]:
        return _SC_IDS[i]
    return -1
