"""``tokviz encode`` with model-input options (--pair, --max-length, --stride, --truncation,
--padding): every field equal to HF tokenizers' run here, windows included; bad values are one
line and exit status 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import bundle_bytes, require_module

from tokviz.cli import main

QUESTION = "Where do the windows overlap?"
CONTEXT = "A long context, cut into windows that overlap by a stride of a few tokens, for question answering."


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("bert") / "tokenizer.json"
    p.write_bytes(bundle_bytes("bert-base-uncased/tokenizer.json"))
    return p


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def hf_fields(enc: Any) -> dict[str, Any]:
    return {
        "ids": enc.ids, "tokens": enc.tokens, "offsets": [list(o) for o in enc.offsets], "type_ids": enc.type_ids,
        "attention_mask": enc.attention_mask, "special_tokens_mask": enc.special_tokens_mask,
        "sequence_ids": enc.sequence_ids, "word_ids": enc.word_ids,
        "overflowing": [hf_fields(o) for o in enc.overflowing],
    }


def _hf(path: Path) -> Any:
    return require_module("tokenizers").Tokenizer.from_file(str(path))


@pytest.mark.parametrize(
    ("options", "configure"),
    [
        (["--max-length", "16", "--stride", "4", "--truncation", "only_second"],
         lambda t: t.enable_truncation(16, stride=4, strategy="only_second")),
        (["--max-length", "14", "--stride", "2", "--truncation-side", "left", "--padding", "max_length",
          "--padding-side", "left"],
         lambda t: (t.enable_truncation(14, stride=2, direction="left"),
                    t.enable_padding(direction="left", length=14, pad_id=0, pad_token="[PAD]"))),
        (["--max-length", "18", "--padding", "multiple:8"],
         lambda t: (t.enable_truncation(18), t.enable_padding(pad_to_multiple_of=8, pad_id=0, pad_token="[PAD]"))),
        (["--padding", "longest"], lambda t: t.enable_padding(pad_id=0, pad_token="[PAD]")),
    ],
    ids=["only_second-stride", "left-both", "multiple", "longest"],
)
def test_json_fields_equal_hf(capsys, bert: Path, options: list[str], configure: Any) -> None:  # noqa: ANN001
    code, out, err = run(capsys, "encode", str(bert), QUESTION, "--pair", CONTEXT, "--json", *options)
    assert (code, err) == (0, "")
    ref = _hf(bert)
    configure(ref)
    want = hf_fields(ref.encode(QUESTION, CONTEXT))
    assert json.loads(out) == json.loads(json.dumps(want))
    if "--stride" in options:
        assert want["overflowing"], "the case must make windows"


def test_plain_output_prints_one_line_per_window(capsys, bert: Path) -> None:  # noqa: ANN001
    code, out, _ = run(capsys, "encode", str(bert), CONTEXT, "--max-length", "10", "--stride", "3")
    ref = _hf(bert)
    ref.enable_truncation(10, stride=3)
    enc = ref.encode(CONTEXT)
    assert code == 0
    assert out.splitlines() == [" ".join(map(str, e.ids)) for e in [enc, *enc.overflowing]]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--max-length", "ten"], "--max-length expects a whole number"),
        (["--max-length", "-3"], "--max-length expects a whole number"),
        (["--stride", "2"], "need --max-length"),
        (["--max-length", "8", "--truncation", "shortest"], "--truncation expects one of"),
        (["--max-length", "8", "--truncation-side", "up"], "--truncation-side expects right or left"),
        (["--padding", "max_length"], "--padding max_length needs --max-length"),
        (["--padding", "multiple:0"], "--padding expects max_length, longest or multiple:K"),
        (["--padding", "wide"], "--padding expects"),
        (["--padding-side", "left"], "--padding-side needs --padding"),
        (["--max-length", "6", "--stride", "5"], "stride 5 must be less than"),
        (["--max-length", "12", "--truncation", "only_second"], "needs a second sequence"),
    ],
)
def test_bad_values_are_one_line_exit_2(capsys, bert: Path, options: list[str], message: str) -> None:  # noqa: ANN001
    code, out, err = run(capsys, "encode", str(bert), CONTEXT, *options)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err, err
