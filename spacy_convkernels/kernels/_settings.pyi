from ._tables import NodeSimilarity, TupleTable
from .kinds import KernelKind

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
