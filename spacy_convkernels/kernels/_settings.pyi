from enum import IntEnum

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
