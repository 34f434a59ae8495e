"""Corpus readers: KeLP examples, CoNLL-U treebanks, AMR graphs in PENMAN notation."""

from ..errors import CorpusFileError, CorpusWarning
from .amr import read_penman
from .conllu import read_conllu
from .klp import KlpExample, parse_klp_line, read_klp

__all__ = ["read_klp", "parse_klp_line", "KlpExample", "read_conllu", "read_penman", "CorpusWarning", "CorpusFileError"]
