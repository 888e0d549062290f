"""One named regression test per class of issue #27 ("Reliability, round 2") in this task's scope.

Chat templates (every operation bounded, a watchdog for the deadline), JSON from the user and
from files (one bounded reader, no exit 3), safetensors headers, ``--json`` output, discovery,
and the loader regex of a vocabulary without joinable characters. Each test builds the smallest
input that showed the class and checks the documented outcome: one clean error line (exit 2 in
the CLI), never a hang, a RecursionError or a traceback.
"""

from __future__ import annotations

import json
import os
import struct
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from fuzzkit import run_case
from support import bundle_path

import tokviz
from tokviz.analysis.chat_render import ChatTemplateError, RenderLimits, render_template
from tokviz.engine.errors import TokvizFormatError

#: one line each, from the issue's list and the operations it names
BOMBS = {
    "pow-tower": "{{ ((10 ** 4096) ** 4096) ** 4096 }}",
    # (the long fuzz profile: a hostile template sat in jinja's round for over 120 s)
    "round-floor-precision": "{{ 1.5 | round(100000000, 'floor') }}",
    "round-int-negative-precision": "{{ 5 | round(-100000000) }}",
    "center": "{{ 'x' | center(1000000000) }}",
    "indent-width": "{{ ('a\n' * 1000000) | indent(1000) }}",
    "indent-string": "{{ ('a\n' * 100000) | indent('x' * 100000) }}",
    "format-width": "{{ '%999999999s' | format('x') }}",
    "format-many": "{{ ('%s' * 100000) | format(*(['x' * 1000] * 100000)) }}",
    "join-items": "{{ (['x' * 1000000] * 1000) | join }}",
    "join-separator": "{{ ([1] * 1000000) | join('x' * 1000) }}",
    "slice-count": "{{ [1] | slice(1000000000) | list }}",
    "batch-fill": "{{ [1] | batch(1000000000, 0) | list }}",
    "wordwrap-wrapstring": "{{ ('a ' * 100000) | wordwrap(1, wrapstring='x' * 100000) }}",
    "replace-count": "{{ ('a' * 1000000) | replace('a', 'b' * 1000) }}",
    "replace-empty": "{{ ('a' * 1000000) | replace('', 'b' * 30) }}",
    "tojson-indent": "{{ [[[[1] * 100] * 100] * 100] | tojson(indent=100000) }}",
    "percent-star": "{{ '%*s' % (1000000000, 'x') }}",
    "percent-mapping": "{{ '%(a)s' * 100000 % {'a': 'x' * 1000} }}",
    "tilde-loop": "{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "string-times": "{{ 'x' * 10**12 }}",
    "list-times": "{{ [[0] * 1000000] * 1000000 }}",
    "list-plus-loop": "{% set ns = namespace(l=[1]) %}{% for i in range(100) %}{% set ns.l = ns.l + ns.l %}{% endfor %}",
    "print-shared-refs": "{% set ns = namespace(l=['x' * 1000000]) %}{% for i in range(30) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}",
    "expandtabs": "{{ ('\t' * 1000000).expandtabs(1000) }}",
    "str-format-width": "{{ '{:>999999999}'.format('x') }}",
    "str-format-repeat": "{{ ('{0}' * 100000).format('x' * 1000) }}",
    "translate": "{{ ('a' * 1000000).translate({97: 'b' * 1000}) }}",
    "join-method": "{{ ('x' * 1000).join(['y' * 1000000] * 1000) }}",
    "sum-lists": "{{ ([[1] * 1000] * 100000) | sum(start=[]) }}",
    "slice-copies": "{% set ns = namespace(l=[], s='x' * 3000000) %}{% for i in range(100000) %}{% set ns.l = ns.l + [ns.s[i:]] %}{% endfor %}",
    "block-set": "{% set x %}{% for i in range(100000) %}{{ 'y' * 1000000 }}{% endfor %}{% endset %}",
    "lipsum": "{{ lipsum(1000000000) }}",
    "int-square-loop": "{% set ns = namespace(x=2) %}{% for i in range(100000) %}{% set ns.x = ns.x * ns.x %}{% endfor %}",
    "constant-folded-filters": "{{ 'x' | center(100000000) }}" * 50,
    "recursive-macro": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "deep-parentheses": "{{ " + "(" * 500 + "1" + ")" * 500 + " }}",
    "deep-filter-chain": "{{ 1" + " | abs" * 3000 + " }}",
    "deep-attributes": "{{ a" + ".b" * 5000 + " }}",
    "deep-blocks": "{% if 1 %}" * 300 + "x" + "{% endif %}" * 300,
    "nested-loops": "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
}


def render_error(source: str, **limits: float) -> ChatTemplateError:
    def render() -> None:
        render_template(source, [], limits=RenderLimits(**limits) if limits else None)

    with pytest.raises(ChatTemplateError) as info:
        run_case("regress", render, swallow=False)  # the soft limit fails a hang
    return info.value


class TestChatTemplateBounds:
    @pytest.mark.parametrize("name", sorted(BOMBS))
    def test_bomb_stops_with_one_line(self, name: str) -> None:
        err = render_error(BOMBS[name])
        assert err.kind in ("limit", "syntax"), err
        text = str(err)
        assert "\n" not in text and len(text) < 600 and "Traceback" not in text, text

    def test_pow_tower_names_the_bound(self) -> None:
        err = render_error(BOMBS["pow-tower"])
        assert "'**' would build an integer of" in err.message

    def test_one_level_of_the_tower_still_renders(self) -> None:
        # 10 ** 4096 has 4,097 digits: inside Python's own printing limit and inside the bound
        assert render_template("{{ (10 ** 4096) | string | length }}", []).text == "4097"

    def test_truncate_assertion_is_a_template_error(self) -> None:
        # jinja asserts length >= len(end); transformers raises that AssertionError's text
        err = render_error("{{ 'abc' | truncate(1) }}")
        assert err.kind == "runtime" and err.message == "expected length >= 3, got 1"

    def test_watchdog_interrupts_a_long_filter(self) -> None:
        # textwrap is Python code outside the template: no line of the template runs meanwhile
        err = render_error("{{ ('a ' * 1000000) | wordwrap(1) }}", seconds=0.3)
        assert err.kind == "limit" and "took longer than 0.3 s" in err.message

    def test_no_interrupt_lands_after_the_render(self) -> None:
        rendered = render_template("{{ 'ok' }}", [], limits=RenderLimits(seconds=0.05))
        time.sleep(0.2)  # past the deadline: the disarmed watchdog must not raise here
        assert rendered.text == "ok"

    def test_renders_in_threads_stop_independently(self) -> None:
        errors: dict[str, str] = {}

        def work(name: str, source: str, seconds: float) -> None:
            try:
                errors[name] = render_template(source, [], limits=RenderLimits(seconds=seconds)).text
            except ChatTemplateError as exc:
                errors[name] = exc.kind

        threads = [
            threading.Thread(target=work, args=("loop", BOMBS["nested-loops"], 0.3)),
            threading.Thread(target=work, args=("fine", "{% for i in range(2000) %}{{ i }}{% endfor %}", 30)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors["loop"] == "limit"
        assert errors["fine"] == "".join(map(str, range(2000)))

    def test_deep_input_is_refused_not_recursed(self) -> None:
        deep: list = []
        for _ in range(5000):
            deep = [deep]
        with pytest.raises(ChatTemplateError) as info:
            render_template("{{ messages }}", [{"role": "user", "content": deep}])
        assert info.value.kind == "input" and "nested more than" in info.value.message

    def test_huge_raise_message_is_one_bounded_line(self) -> None:
        err = render_error("{{ raise_exception('x\n' * 100000) }}")
        assert err.kind == "raised" and len(err.message) == 200_000
        assert "\n" not in str(err) and len(str(err)) < 600

    def test_huge_integer_literal_is_a_syntax_error(self) -> None:
        err = render_error("{{ " + "9" * 5000 + " }}")
        assert err.kind == "syntax"

    @pytest.mark.parametrize("name", ["pow-tower", "recursive-macro", "deep-parentheses", "join-items"])
    def test_cli_exit_2(self, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        messages, template = tmp_path / "m.json", tmp_path / "bomb.jinja"
        messages.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
        template.write_text(BOMBS[name], encoding="utf-8")
        err = cli_error(["chat", str(tiny_tokenizer(tmp_path)), "--template", str(template),
                         "--messages", str(messages)], capsys)
        assert "chat template " in err

    def test_template_size_is_bounded(self) -> None:
        err = render_error("x" * (2 << 20))
        assert err.kind == "limit" and "characters" in err.message


# ---------------------------------------------------------------------------- JSON from the user
def cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI in-process; the run must exit 2 with one line on stderr, which is returned."""
    from tokviz import cli

    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.startswith("tokviz: error: ") and "internal error" not in err, err
    return err


DEEP = "[" * 100_000 + "]" * 100_000
QWEN = str(bundle_path("qwen3/tokenizer.json"))


class TestJsonInputs:
    def test_messages_file_nested_deep(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        messages = tmp_path / "m.json"
        messages.write_text(DEEP, encoding="utf-8")
        err = cli_error(["chat", QWEN, "--messages", str(messages)], capsys)
        assert f"{messages}: JSON nested 100000 levels deep" in err

    def test_tools_file_nested_deep(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        messages, tools = tmp_path / "m.json", tmp_path / "t.json"
        messages.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
        tools.write_text(DEEP, encoding="utf-8")
        err = cli_error(["chat", QWEN, "--messages", str(messages), "--tools", str(tools)], capsys)
        assert f"{tools}: JSON nested" in err

    @pytest.mark.parametrize("value", [DEEP, "NaN", "[Infinity]", "unquoted"])
    def test_var_value(self, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        messages = tmp_path / "m.json"
        messages.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
        template = tmp_path / "t.jinja"
        template.write_text("{{ x }}", encoding="utf-8")
        err = cli_error(["chat", str(tiny_tokenizer(tmp_path)), "--template", str(template), "--messages",
                         str(messages), "--var", f"x={value}"], capsys)
        assert "--var x: " in err

    @pytest.mark.parametrize("value", [DEEP, "[1, 2]", '{"<|x|>": NaN}'])
    def test_special_tokens_option(self, value: str, capsys: pytest.CaptureFixture[str]) -> None:
        err = cli_error(["encode", QWEN, "hi", "--special-tokens", value], capsys)
        assert "--special-tokens: " in err

    def test_special_tokens_of_compare_are_checked(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        # compare read the option with json.loads and called .items() on whatever came back
        corpus = tmp_path / "c.txt"
        corpus.write_text("hello world\n", encoding="utf-8")
        tiny = str(tiny_tokenizer(tmp_path))
        err = cli_error(["compare", tiny, tiny, "--file", str(corpus), "--stats", "--workers", "1",
                         "--special-tokens", "[1, 2]"], capsys)
        assert "--special-tokens: expected a JSON object" in err

    def test_jsonl_corpus_line_nested_deep(self, tmp_path: Path) -> None:
        from tokviz.analysis.corpus import iter_documents

        corpus = tmp_path / "c.jsonl"
        corpus.write_text('{"text": "ok"}\n' + DEEP + "\n", encoding="utf-8")
        msg = error_of(lambda: list(iter_documents(corpus, "jsonl:text")))
        assert msg.startswith(f"{corpus}: line 2: JSON nested 100000 levels deep")


def error_of(fn) -> str:  # noqa: ANN001
    with pytest.raises(TokvizFormatError) as info:
        run_case("regress", fn, swallow=False)
    return str(info.value)


# ---------------------------------------------------------------------------- safetensors
def safetensors_bytes(header: object, data: bytes = b"") -> bytes:
    raw = json.dumps(header).encode() if not isinstance(header, (bytes, str)) else (
        header.encode() if isinstance(header, str) else header)
    return struct.pack("<Q", len(raw)) + raw + data


EMBED = "model.embed_tokens.weight"
GOOD_ENTRY = {"dtype": "F32", "shape": [4, 2], "data_offsets": [0, 32]}
BAD_HEADERS = {
    "infinity-shape": ('{"%s": {"dtype": "F32", "shape": [Infinity, 2], "data_offsets": [0, 32]}}' % EMBED,
                       "not JSON"),
    "null-shape": ({EMBED: {**GOOD_ENTRY, "shape": None}}, "shape must be a list of non-negative integers"),
    "float-shape": ({EMBED: {**GOOD_ENTRY, "shape": [4.0, 2]}}, "shape must be a list of non-negative integers"),
    "negative-shape": ({EMBED: {**GOOD_ENTRY, "shape": [-4, 2]}}, "shape must be a list of non-negative integers"),
    "negative-offsets": ({EMBED: {**GOOD_ENTRY, "data_offsets": [-32, 0]}}, "data_offsets must be two non-negative"),
    "one-offset": ({EMBED: {**GOOD_ENTRY, "data_offsets": [0]}}, "data_offsets must be two non-negative"),
    "offsets-past-the-data": ({EMBED: {**GOOD_ENTRY, "data_offsets": [0, 3200]}}, "outside the 32 data bytes"),
    "reversed-offsets": ({EMBED: {**GOOD_ENTRY, "data_offsets": [32, 0]}}, "outside the 32 data bytes"),
    "non-object-entry": ({EMBED: [1, 2]}, "expected an object, got list"),
    "string-entry": ({EMBED: "F32"}, "expected an object, got str"),
    "dtype-size-mismatch": ({EMBED: {**GOOD_ENTRY, "dtype": "F64"}}, "shape [4, 2] of F64 needs 64 bytes"),
    "dtype-not-a-string": ({EMBED: {**GOOD_ENTRY, "dtype": 7}}, "dtype must be a string"),
    "metadata-not-strings": ({"__metadata__": {"a": 1}, EMBED: GOOD_ENTRY}, "__metadata__ must be an object"),
    "header-not-an-object": ([1, 2], "the header is not a JSON object"),
    "header-nested-deep": (DEEP, "JSON nested 100000 levels deep"),
    "header-not-utf8": (b"\xff\xfe{}", "not valid UTF-8"),
}


def tiny_tokenizer(folder: Path) -> Path:
    """A four-word WordLevel tokenizer.json (the audit of a big vocabulary takes minutes)."""
    path = folder / "tiny.json"
    path.write_text(json.dumps({
        "version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None, "decoder": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "model": {"type": "WordLevel", "vocab": {"aa": 0, "bb": 1, "cc": 2, "dd": 3}, "unk_token": "aa"},
    }), encoding="utf-8")
    return path


class TestSafetensorsHeaders:
    @pytest.mark.parametrize("name", sorted(BAD_HEADERS))
    def test_bad_header_names_the_file(self, name: str, tmp_path: Path) -> None:
        from tokviz.analysis.embeddings import read_embedding

        header, expected = BAD_HEADERS[name]
        path = tmp_path / "w.safetensors"
        path.write_bytes(safetensors_bytes(header, bytes(32)))
        msg = error_of(lambda: read_embedding(path, EMBED))
        assert msg.startswith(f"{path}: ") and expected in msg, msg

    def test_a_tensor_name_with_a_line_break_keeps_the_message_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """(The long fuzz profile: a weight_map key "\\n" made the "which tensor?" message two lines.)"""
        path = tmp_path / "w.safetensors"
        path.write_bytes(safetensors_bytes({"a\nb": GOOD_ENTRY}, bytes(32)))
        tok = hostile_vocab_file(tmp_path, "WordLevel", 5)
        msg = cli_error(["audit", str(tok), "--embeddings", str(path)], capsys)
        assert str(path) in msg and "'a\\nb' [4, 2]" in msg, msg

    def test_header_length_past_the_end(self, tmp_path: Path) -> None:
        from tokviz.analysis.embeddings import read_embedding

        path = tmp_path / "w.safetensors"
        path.write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
        msg = error_of(lambda: read_embedding(path, EMBED))
        assert msg.startswith(f"{path}: header length 1,099,511,627,776 is implausible")

    def test_cli_exit_2(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = tmp_path / "w.safetensors"
        path.write_bytes(safetensors_bytes({EMBED: {**GOOD_ENTRY, "shape": None}}, bytes(32)))
        err = cli_error(["audit", str(tiny_tokenizer(tmp_path)), "--embeddings", str(path)], capsys)
        assert str(path) in err

    def test_nan_embeddings_give_valid_json(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        # every row NaN: norms, the threshold and the candidates' values are NaN; JSON has no NaN
        from tokviz import cli

        tok = tiny_tokenizer(tmp_path)
        rows = tokviz.load(tok).vocab_size
        path = tmp_path / "w.safetensors"
        data = np.full((rows, 2), np.nan, dtype=np.float32).tobytes()
        path.write_bytes(safetensors_bytes({EMBED: {"dtype": "F32", "shape": [rows, 2],
                                                    "data_offsets": [0, len(data)]}}, data))
        assert cli.main(["audit", str(tok), "--embeddings", str(path), "--json"]) == 0
        out = capsys.readouterr().out

        def refuse(name: str) -> None:
            raise AssertionError(f"{name} in --json output")

        report = json.loads(out, parse_constant=refuse)
        assert report["embeddings"]["threshold"] is None


class TestJsonOutput:
    def test_writer_maps_non_finite_to_null(self) -> None:
        from tokviz.io.json_text import dumps

        text = dumps({"a": [float("nan"), float("inf"), -float("inf"), 1.5], "b": {"c": float("nan")}})
        assert json.loads(text) == {"a": [None, None, None, 1.5], "b": {"c": None}}
        assert "NaN" not in text and "Infinity" not in text


# ---------------------------------------------------------------------------- discovery and FIFOs
def returns_within(fn, seconds: float = 60):  # noqa: ANN001, ANN201
    """``fn()`` run in a thread that must finish (a FIFO opened for reading blocks forever)."""
    box: list = []
    worker = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "blocked"
    return box[0] if box else None


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def ollama_store(root: Path) -> Path:
    """An Ollama store: one good model, a FIFO manifest, a deep one, a non-object one, a bad digest."""
    good_digest = "sha256:" + "0" * 64
    (root / "blobs").mkdir(parents=True)
    (root / "blobs" / good_digest.replace(":", "-")).write_bytes(b"GGUF")
    manifests = root / "manifests" / "registry.ollama.ai" / "library"
    layer = {"mediaType": "application/vnd.ollama.image.model", "digest": good_digest}
    (manifests / "good").mkdir(parents=True)
    (manifests / "good" / "latest").write_text(json.dumps({"layers": [layer]}), encoding="utf-8")
    fifo(manifests / "pipe" / "latest")
    (manifests / "deep").mkdir()
    (manifests / "deep" / "latest").write_text(DEEP, encoding="utf-8")
    (manifests / "list").mkdir()
    (manifests / "list" / "latest").write_text("[1, 2]", encoding="utf-8")
    (manifests / "escape").mkdir()
    bad = {"mediaType": layer["mediaType"], "digest": "sha256:../../../etc/passwd"}
    (manifests / "escape" / "latest").write_text(json.dumps({"layers": [bad]}), encoding="utf-8")
    return root


class TestDiscovery:
    def test_fifos_are_never_opened(self, tmp_path: Path) -> None:
        from tokviz.io.discovery import discover

        fifo(tmp_path / "hub" / "models--a--b" / "snapshots" / "r1" / "tokenizer.json")
        fifo(tmp_path / "tiktoken" / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4")
        fifo(tmp_path / "lms" / "pub" / "repo" / "m.gguf")
        found = returns_within(lambda: discover(hf_hub=tmp_path / "hub", tiktoken_dir=tmp_path / "tiktoken",
                                                ollama_dir=tmp_path / "none", lmstudio_dirs=[tmp_path / "lms"]))
        assert found == []

    def test_bad_manifests_are_skipped_with_a_warning(self, tmp_path: Path) -> None:
        from tokviz.io.discovery import discover

        problems: list[str] = []
        found = returns_within(lambda: discover(hf_hub=tmp_path / "none", tiktoken_dir=tmp_path / "none",
                                                ollama_dir=ollama_store(tmp_path / "ollama"), lmstudio_dirs=[],
                                                problems=problems))
        assert [d.name for d in found] == ["good:latest"]
        text = "\n".join(problems)
        assert len(problems) == 4, problems
        for what in ("pipe/latest: is a FIFO", "deep/latest: JSON nested 100000 levels deep",
                     'list/latest: not an Ollama manifest (no "layers" list)', "is not a digest"):
            assert what in text, (what, problems)

    def test_list_and_unknown_names_still_work(self, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
        from tokviz import cli

        monkeypatch.setenv("OLLAMA_MODELS", str(ollama_store(tmp_path / "ollama")))
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "none"))
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "none"))
        assert returns_within(lambda: cli.main(["list"])) == 0
        captured = capsys.readouterr()
        assert "good:latest" in captured.out and captured.err.count("tokviz: warning: ") == 4
        err = cli_error(["encode", "nothing:here", "hi"], capsys)
        assert "nothing:here: no such file" in err

    def test_loading_a_fifo_is_an_error(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        from tokviz import cli

        pipe = fifo(tmp_path / "model" / "tokenizer.json")
        code = returns_within(lambda: cli.main(["encode", str(pipe), "hi"]))
        err = capsys.readouterr().err
        assert code == 2 and f"{pipe}: is a FIFO (named pipe)" in err, err
        code = returns_within(lambda: cli.main(["encode", str(pipe.parent), "hi"]))  # the folder: a FIFO is no candidate
        assert code == 2 and "no tokenizer file in this folder" in capsys.readouterr().err


# ---------------------------------------------------------------------------- loaders
class TestNoJoinableCharacters:
    """A vocabulary whose pieces are all single characters: the cut at characters no piece joins
    compiled ``[]{2,}`` (re.error, exit 3); fixed in engine/models/sentencepiece_bpe.py."""

    TEXT = "ab" * 400  # longer than the length below which the text is not cut

    def test_sentencepiece_bpe_model(self) -> None:
        from fuzz_bundles import model_file

        data = model_file([(b"<unk>", 0.0, 2), (b"a", -1.0, 1), (b"b", -2.0, 1)], trainer={"model_type": 2})
        assert len(data) < 64
        tok = run_case("regress", lambda: tokviz.load(data), swallow=False)
        assert tok.decode(tok.encode(self.TEXT).ids).endswith(self.TEXT[-10:])

    def test_llama_gguf(self, tmp_path: Path) -> None:
        gguf = pytest.importorskip("gguf")
        path = tmp_path / "chars.gguf"
        w = gguf.GGUFWriter(str(path), "llama")
        w.add_tokenizer_model("llama")
        w.add_token_list(["<unk>", "a", "b"])
        w.add_token_types([2, 1, 1])
        w.add_token_scores([0.0, -1.0, -2.0])
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        tok = run_case("regress", lambda: tokviz.load(path), swallow=False)
        assert "a" in tok.encode(self.TEXT).tokens


class TestAddedTokenCompile:
    def test_megabyte_literal(self) -> None:
        # one alternation of every literal took seconds per megabyte to compile (regex module)
        literal = "<" + "ab" * 1_000_000 + ">"
        source = json.dumps({
            "version": "1.0", "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "added_tokens": [{"id": 3, "content": literal, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": True}],
            "model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1, "<unk>": 2}, "unk_token": "<unk>"},
        }).encode()

        def load_and_match() -> list[int]:
            return tokviz.load(source).encode("a" + literal + "b", add_special_tokens=False).ids

        assert run_case("regress", load_and_match, swallow=False) == [0, 3, 1]


def hostile_vocab_file(folder: Path, kind: str, big: int) -> Path:
    """A tokenizer.json whose token "x" (in no merge) has id ``big``: the native pair key
    ``left << 32 | right`` of ("a", "b") and of (big - 2**32, ...) met, and ``"bx"`` encoded as
    ``["ab"]`` natively."""
    vocab = {"a": 0, "b": 1, "ab": 2, "##x": 3, "x": big, "[UNK]": 4}
    model: dict[str, object] = {"type": kind, "vocab": vocab, "unk_token": "[UNK]"}
    if kind == "BPE":
        model["merges"] = [["a", "b"]]
    path = folder / "tokenizer.json"
    path.write_text(json.dumps({"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
                                "post_processor": None, "decoder": None, "model": model}))
    return path


class TestIdsAtLoad:
    @pytest.mark.parametrize("kind", ["BPE", "WordPiece", "WordLevel"])
    @pytest.mark.parametrize("big", [2**31, 2**32, 2**32 + 1, 2**63, 2**64])
    def test_ids_above_the_native_limit_are_refused_on_both_backends(self, kind: str, big: int,
                                                                     tmp_path: Path) -> None:
        from support import python_twin
        path = hostile_vocab_file(tmp_path, kind, big)
        native = error_of(lambda: tokviz.load(path))
        python = python_twin(lambda: error_of(lambda: tokviz.load(path)))
        assert native == python
        assert str(path) in native and "vocab['x']" in native and "2**31-1" in native

    def test_the_largest_id_loads_and_agrees(self, tmp_path: Path) -> None:
        from support import python_twin
        path = hostile_vocab_file(tmp_path, "BPE", 2**31 - 1)
        native = tokviz.load(path).encode("bx ab").tokens
        assert native == python_twin(lambda: tokviz.load(path).encode("bx ab").tokens)

    def test_added_token_and_rank_file_ids(self, tmp_path: Path) -> None:
        path = hostile_vocab_file(tmp_path, "WordLevel", 5)
        obj = json.loads(path.read_text())
        obj["added_tokens"] = [{"id": 2**40, "content": "<s>", "single_word": False, "lstrip": False,
                                "rstrip": False, "normalized": False, "special": True}]
        path.write_text(json.dumps(obj))
        assert "added_tokens[0].id" in error_of(lambda: tokviz.load(path))
        ranks = tmp_path / "r.tiktoken"
        ranks.write_bytes(b"YQ== 0\nYg== 4294967296\n")  # "a" 0, "b" 2**32
        assert "2**31-1" in error_of(lambda: tokviz.load(ranks))

    @pytest.mark.parametrize("big", ["2147483648", "18446744073709551616"])
    def test_cli_exit_2(self, big: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = hostile_vocab_file(tmp_path, "WordPiece", int(big))
        msg = cli_error(["encode", str(path), "bx"], capsys)
        assert str(path) in msg and big in msg


def _with(path: Path, **keys: object) -> Path:
    obj = json.loads(path.read_text())
    obj.update(keys)
    path.write_text(json.dumps(obj))
    return path


class TestModelInputIdsAtLoad:
    """The long fuzz profile's one crash class: a template type id of 2**31 loaded and then made
    every encode raise OverflowError (exit 3) when the int32 type-id column was filled. Type ids,
    pad ids and padding lengths are now checked when the file is read."""

    @pytest.mark.parametrize("piece", [
        {"Sequence": {"id": "A", "type_id": 2**31}},
        "$A:2147483648",
        "$2147483648",
        "[UNK]:-1",
    ], ids=["object", "string", "shorthand", "negative"])
    def test_template_type_ids(self, piece: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = _with(hostile_vocab_file(tmp_path, "WordLevel", 5), post_processor={
            "type": "TemplateProcessing", "single": [piece], "pair": ["$A", "$B:1"],
            "special_tokens": {"[UNK]": {"id": "[UNK]", "ids": [4], "tokens": ["[UNK]"]}},
        })
        msg = cli_error(["encode", str(path), "ab"], capsys)
        assert str(path) in msg and "post_processor" in msg and "type" in msg

    @pytest.mark.parametrize("kind", ["BertProcessing", "RobertaProcessing"])
    @pytest.mark.parametrize("big", [2**31, 2**64])
    def test_cls_and_sep_ids(self, kind: str, big: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """(The second crash of the same class: a BertProcessing ``cls`` id of 2**31.)"""
        path = _with(hostile_vocab_file(tmp_path, "WordLevel", 5),
                     post_processor={"type": kind, "sep": ["[UNK]", 4], "cls": ["[UNK]", big]})
        msg = cli_error(["encode", str(path), "ab"], capsys)
        assert str(path) in msg and "cls" in msg and "2**31-1" in msg

    @pytest.mark.parametrize("padding", [
        {"strategy": {"Fixed": 2**40}, "pad_id": 0, "pad_type_id": 0, "pad_token": "[UNK]", "direction": "Right"},
        {"strategy": "BatchLongest", "pad_to_multiple_of": 2**40, "pad_id": 0, "pad_type_id": 0, "pad_token": "[UNK]"},
        {"strategy": "BatchLongest", "pad_id": 2**31, "pad_type_id": 0, "pad_token": "[UNK]"},
        {"strategy": "BatchLongest", "pad_id": 0, "pad_type_id": 2**31, "pad_token": "[UNK]"},
    ], ids=["length", "multiple", "pad-id", "pad-type-id"])
    def test_padding(self, padding: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = _with(hostile_vocab_file(tmp_path, "WordLevel", 5), padding=padding)
        msg = cli_error(["encode", str(path), "ab"], capsys)
        assert str(path) in msg and "padding" in msg

    def test_the_largest_values_load(self, tmp_path: Path) -> None:
        from tokviz.engine.model_inputs import MAX_PADDED_LENGTH

        path = _with(hostile_vocab_file(tmp_path, "WordLevel", 5), post_processor={
            "type": "TemplateProcessing", "single": ["$A:2147483647"], "pair": ["$A", "$B:1"], "special_tokens": {},
        })
        assert set(tokviz.load(path).encode("ab").type_ids) == {2**31 - 1}
        tok = tokviz.load(path)
        tok.enable_padding(length=MAX_PADDED_LENGTH)
        with pytest.raises(ValueError, match="length"):
            tok.enable_padding(length=MAX_PADDED_LENGTH + 1)
