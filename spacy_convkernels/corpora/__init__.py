"""Corpus readers."""
from .klp import KlpExample, parse_klp_line, read_klp

__all__ = ["read_klp", "parse_klp_line", "KlpExample"]
