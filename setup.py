"""Build script for the optional native core; all metadata lives in pyproject.toml.

The C extensions ``tokviz.engine._native`` (the engine's hot loops: BPE merges, the Unigram
Viterbi, the SentencePiece kernels and the encode's column loop) and ``tokviz.training._count``
(BPE training's pair queue) are built when a C compiler works. When it does not, the build warns and goes on without it, and the
engine runs its pure-Python kernels with identical results (the pattern of MarkupSafe's optional
speedups). ``TOKVIZ_PURE_PYTHON=1`` at run time selects the pure-Python kernels as well.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:  # setuptools >= 59 names them itself; older ones take them from distutils
    from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError, PlatformError
except ImportError:  # pragma: no cover
    from distutils.errors import (  # type: ignore[no-redef]
        CCompilerError,
        CompileError,
        DistutilsExecError as ExecError,
        DistutilsPlatformError as PlatformError,
        LinkError,
    )

_FAILURES = (CCompilerError, CompileError, ExecError, LinkError, PlatformError, OSError)


def _warn(error: BaseException) -> None:
    print(
        f"WARNING: tokviz's optional native core was not built ({error}); "
        "the pure-Python engine runs instead, with identical results.",
        file=sys.stderr,
    )


class OptionalBuildExt(build_ext):
    """``build_ext`` that warns instead of failing when no C compiler works."""

    def run(self) -> None:
        try:
            super().run()
        except _FAILURES as error:
            _warn(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except _FAILURES as error:
            _warn(error)


# One extension, one source file per kernel family, one shared header (table.h).
_SOURCES = [f"tokviz/engine/_native/{name}.c" for name in ("module", "bpe", "unigram", "spm", "columns", "wordpiece")]

setup(
    ext_modules=[
        Extension("tokviz.engine._native", _SOURCES, depends=["tokviz/engine/_native/table.h"], optional=True),
        Extension("tokviz.engine._scan", ["tokviz/engine/_scan.c"], depends=["tokviz/engine/_scan_tables.h"], optional=True),
        # BPE training's pair queue (tokviz.training.merges.PyPairQueue is its pure-Python twin)
        Extension("tokviz.training._count", ["tokviz/training/_count.c"], optional=True),
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
