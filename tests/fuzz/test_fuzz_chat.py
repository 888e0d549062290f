"""Fuzz family "chat": hostile chat templates and hostile conversations.

Templates are drawn from a small grammar of what explodes: big and tiny integers, strings and
lists through ``*``, ``**``, ``+``, ``~``, ``%``, the string filters with any argument, string
methods, slices, loops that accumulate into a namespace, recursive macros, deep nesting. The
conversations of the second test are random JSON (deep, long, odd keys) rendered with the real
templates of the shared set. The only outcomes allowed are a render (no longer than the output
limit) and `ChatTemplateError`, each within the time guard and the memory limit of `run_case`.
"""

from __future__ import annotations

from pathlib import Path

from fuzzkit import fuzz_settings, run_case
from hypothesis import given, strategies as st
from support import SHARED

from tokviz.analysis.chat_render import RenderLimits, render_template

#: the render limits of the family: the default sizes, a short deadline (a case that loops
#: costs a quarter of a second, on the same watchdog path as the real three)
LIMITS = RenderLimits(seconds=0.25)

NUMBERS = st.sampled_from(["0", "1", "-1", "2", "7", "64", "4096", "100000", "10**6", "10**9", "10**12",
                           "(10 ** 4096)", "2 ** 64", "-(10**9)"])
STRINGS = st.sampled_from(["''", "'x'", "'ab\\n'", "'\\t'", "'%s'", "'%999999s'", "'%(a)s'", "'{}'", "'{0}{0}'",
                           "'{:>99999999}'", "'&<>'", "'é中🙂'", "'a b c d'"])
LISTS = st.sampled_from(["[]", "[1]", "['x' * 1000]", "[[0] * 1000]", "range(100)", "messages", "[ns.v]"])
FILTERS = st.sampled_from([
    "center({n})", "indent({n})", "indent({s})", "format({s}, {s})", "join({s})", "replace({s}, {s})",
    "replace('', {s})", "wordwrap({n}, wrapstring={s})", "batch({n}, 0)", "slice({n}, 0)", "tojson(indent={n})",
    "tojson", "truncate({n})", "sum(start=[])", "list", "string", "upper", "e", "pprint", "first", "reverse",
    "unique", "sort", "int", "abs", "length", "trim", "title", "urlize", "striptags", "wordcount", "xmlattr",
    "attr({s})", "default({s})", "map('string')", "select", "dictsort", "items", "round({n})", "filesizeformat",
])
METHODS = st.sampled_from([
    "center({n})", "ljust({n})", "zfill({n})", "expandtabs({n})", "replace({s}, {s})", "join({l})",
    "format({s}, {s})", "split()", "splitlines()", "strip()", "upper()", "translate({{97: {s}}})", "encode()",
    "count({s})", "startswith({s})", "__class__",
])


@st.composite
def expression(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.sampled_from(["n", "s", "l", "op", "filter", "method", "slice", "concat", "call"]
                                if depth < 3 else ["n", "s", "l"]))
    if kind == "n":
        return draw(NUMBERS)
    if kind == "s":
        return draw(STRINGS)
    if kind == "l":
        return draw(LISTS)
    sub = lambda: draw(expression(depth + 1))  # noqa: E731
    if kind == "op":
        return f"({sub()} {draw(st.sampled_from(['*', '**', '+', '%', '-', '//']))} {sub()})"
    if kind == "concat":
        return f"({sub()} ~ {sub()})"
    if kind == "slice":
        return f"({sub()})[{draw(NUMBERS)}:]"
    if kind == "call":
        return draw(st.sampled_from(["lipsum({n})", "range({n})|list", "dict(a={s})", "namespace(v={s})",
                                     "cycler({s}, {s}).next()", "raise_exception({s})", "strftime_now({s})"])
                    ).format(n=draw(NUMBERS), s=sub())
    template = draw(FILTERS if kind == "filter" else METHODS)
    args = template.format(n=draw(NUMBERS), s=sub(), l=draw(LISTS))
    return f"({sub()}) | {args}" if kind == "filter" else f"({sub()}).{args}"


@st.composite
def template(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(["print", "loop", "macro", "nest", "set"]))
    e = draw(expression())
    if shape == "print":
        return "{{ %s }}" % e
    if shape == "loop":
        op = draw(st.sampled_from(["ns.v ~ ns.v", "ns.v + ns.v", "ns.v * 2", "[ns.v, ns.v]", "ns.v | e | string",
                                   "ns.v[1:]", "ns.v ~ (%s)" % e]))
        return ("{%% set ns = namespace(v=%s) %%}{%% for i in range(%s) %%}{%% set ns.v = %s %%}{%% endfor %%}"
                "{{ ns.v | length }}" % (draw(STRINGS | LISTS), draw(NUMBERS), op))
    if shape == "macro":
        return "{%% macro f(n) %%}{{ %s }}{{ f(n + 1) if n < %s }}{%% endmacro %%}{{ f(0) }}" % (e, draw(NUMBERS))
    if shape == "nest":
        k = draw(st.integers(1, 400))
        return draw(st.sampled_from(["{{ " + "(" * k + "1" + ")" * k + " }}", "{% if 1 %}" * k + "x" + "{% endif %}" * k,
                                     "{{ 1" + "|abs" * k + " }}", "{{ messages" + "[0]" * k + " }}"]))
    return "{%% set x %%}{%% for i in range(%s) %%}{{ %s }}{%% endfor %%}{%% endset %%}{{ x | length }}" % (
        draw(NUMBERS), e)


def render(source: str, messages: list) -> None:
    out = render_template(source, messages, limits=LIMITS)
    assert len(out.text) <= LIMITS.max_chars


MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]


@fuzz_settings(60)
@given(source=template())
def test_hostile_templates(source: str) -> None:
    run_case("chat", lambda: render(source, MESSAGES))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "tool", "x"]) | st.text(max_size=5)},
    optional={"content": st.text(max_size=60) | JSON, "tool_calls": JSON, "reasoning_content": st.text(max_size=20),
              "name": st.text(max_size=8)},
)


def _templates() -> list[Path]:
    folder = SHARED / "chat-templates" if SHARED is not None else None
    return sorted(folder.glob("*.jinja")) if folder is not None and folder.is_dir() else []


@fuzz_settings(15)
@given(index=st.integers(0, 10_000), messages=st.lists(MESSAGE, max_size=5), agp=st.booleans())
def test_real_templates_with_random_conversations(index: int, messages: list, agp: bool) -> None:
    paths = _templates()
    assert paths, "the shared chat templates are missing"
    source = paths[index % len(paths)].read_text(encoding="utf-8")

    def case() -> None:
        out = render_template(source, messages, add_generation_prompt=agp, limits=LIMITS,
                              variables={"bos_token": "<s>", "eos_token": "</s>"})
        assert len(out.text) <= LIMITS.max_chars

    run_case("chat", case)
