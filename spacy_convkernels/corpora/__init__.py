"""Corpus readers: KeLP examples, CoNLL-U treebanks, AMR graphs in PENMAN notation, BioNLP
standoff documents, Prodigy relations JSONL."""

from ..errors import CorpusFileError, CorpusWarning
from .amr import read_penman
from .conllu import read_conllu
from .klp import KlpExample, parse_klp_line, read_klp
from .relations_jsonl import read_relations_jsonl
from .standoff import read_standoff

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
