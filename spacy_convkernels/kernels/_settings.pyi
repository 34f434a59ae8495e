from enum import IntEnum
from typing import NamedTuple

from ._tables import NodeSimilarity, TupleTable

class KernelKind(IntEnum):
    SUBTREE_KELP = 0
    SUBTREE_TEXTBOOK = 1
    SUBSET_TREE = 2
    PARTIAL_TREE = 3
    SMOOTHED_PARTIAL_TREE = 4
    ZELENKO_TREE = 5
    SUBSEQUENCE_PATH = 6
    FOREST = 7

class BucketRule(IntEnum):
    BY_KEY = 0
    BY_KEY_OR_GROUP = 1
    BY_TUPLE = 2
    NO_BUCKETS = 3

class KindTraits(NamedTuple):
    operands: type
    match_keys: tuple[str, ...]
    table: str | None
    bucket_rule: int
    sums_of_deltas: bool
    aligned_by_position: bool

KIND_TRAITS: dict[int, KindTraits]

class EngineSettings:
    kind: KernelKind
    lam: float
    mu: float
    terminal_factor: float
    similarity: NodeSimilarity | None
    tuples: TupleTable | None
    def __init__(
        self,
        kind: int,
        *,
        lam: float,
        mu: float = 1.0,
        terminal_factor: float = 1.0,
        similarity: NodeSimilarity | None = None,
        tuples: TupleTable | None = None,
    ) -> None: ...
