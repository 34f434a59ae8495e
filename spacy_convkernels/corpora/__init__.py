"""Corpus readers: KeLP examples, CoNLL-U treebanks, AMR graphs in PENMAN notation, BioNLP
standoff documents, Prodigy relations JSONL.

A reader's module is imported when its name is first read (PEP 562): the readers that
make spaCy Docs import spaCy, seconds that a command on KeLP trees need not wait."""

import importlib
from typing import TYPE_CHECKING

from ..errors import CorpusFileError, CorpusWarning

if TYPE_CHECKING:
    from .amr import read_penman
    from .conllu import read_conllu
    from .klp import KlpExample, parse_klp_line, read_klp
    from .relations_jsonl import read_relations_jsonl
    from .standoff import read_standoff

_MODULE_OF = {
    "read_klp": "klp",
    "parse_klp_line": "klp",
    "KlpExample": "klp",
    "read_conllu": "conllu",
    "read_penman": "amr",
    "read_standoff": "standoff",
    "read_relations_jsonl": "relations_jsonl",
}

__all__ = [
    "read_klp",
    "parse_klp_line",
    "KlpExample",
    "read_conllu",
    "read_penman",
    "read_standoff",
    "read_relations_jsonl",
    "CorpusWarning",
    "CorpusFileError",
]


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_MODULE_OF[name]}", __name__), name)
