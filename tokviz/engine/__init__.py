"""Tokenizer engine: stages, components and the pipeline. Never imports Qt.

Pure Python, with an optional native core for the BPE merge loop and the Unigram Viterbi
(`backend()` says which runs; results are identical).
"""

from .kernels import backend

__all__ = ["backend"]
