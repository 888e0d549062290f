"""One named regression test per class of issue #27 ("Reliability, round 2") in this task's scope.

Chat templates (every operation bounded, a watchdog for the deadline), JSON from the user and
from files (one bounded reader, no exit 3), safetensors headers, ``--json`` output, discovery,
and the loader regex of a vocabulary without joinable characters. Each test builds the smallest
input that showed the class and checks the documented outcome: one clean error line (exit 2 in
the CLI), never a hang, a RecursionError or a traceback.
"""

from __future__ import annotations

import threading
import time

import pytest
from fuzzkit import run_case

from tokviz.analysis.chat_render import ChatTemplateError, RenderLimits, render_template

#: one line each, from the issue's list and the operations it names
BOMBS = {
    "pow-tower": "{{ ((10 ** 4096) ** 4096) ** 4096 }}",
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
        run_case("regress", render)  # the soft limit fails a hang
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

    def test_template_size_is_bounded(self) -> None:
        err = render_error("x" * (2 << 20))
        assert err.kind == "limit" and "characters" in err.message
