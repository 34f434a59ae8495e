import enum
from collections.abc import Iterable, Sequence
from typing import Any

from .tree import Tree

class Event(enum.IntEnum):
    ENTER = 0
    MIDDLE = 1
    EXIT = 2

MEMO_SIZE: int

def role(relation: str, tag: str) -> int: ...
def normalize(
    heads: Sequence[int], roles: Sequence[int], collapse_prepositions: bool
) -> tuple[list[int], list[int], int, list[tuple[int, list[int]]]]: ...
def tour(heads: Sequence[int]) -> list[tuple[int, int]]: ...
def emit_trees(
    heads: Sequence[int], representations: Iterable[str], synt: list, pos: list, lex: list, comp: list
) -> dict[str, Tree | None]: ...
def annotated(rows: Any) -> list[bool]: ...
def array_trees(
    rows: Any, strings: Any, representations: Iterable[str], lowercase: bool, collapse_prepositions: bool
) -> dict[str, Tree | None]: ...
