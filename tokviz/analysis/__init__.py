"""Analysis over the public engine API: compare, vocabulary audit, offset lint, chat templates,
special literals and token healing.

Pure Python (no Qt): above ``tokviz.engine`` and ``tokviz.io``, below ``tokviz.gui``. The GUI tabs
and the CLI commands (``tokviz.commands``) call the same functions here and show or print their
results (``--json`` prints the ``to_json()`` of the result objects).
"""

from __future__ import annotations
