# cython: language_level=3
"""Engine settings (see ``_settings.pxd``), checked against the tables when made and
against the packed structures of each call."""
from ..errors import InvalidParameterError
from ._packing cimport PackedForests, PackedSequences, PackedTrees

# the match keys each tree kernel can use (SPTK without vectors matches contents, as KeLP)
_MATCH_KEYS = {SUBTREE_KELP: ("production",), SUBTREE_TEXTBOOK: ("production",), SUBSET_TREE: ("production",),
               PARTIAL_TREE: ("content",), SMOOTHED_PARTIAL_TREE: ("label", "content"), ZELENKO_TREE: ("label",)}


cdef class EngineSettings:
    """One kernel configuration for :func:`~._driver.gram` and :func:`~._driver.pairs`:
    the recursion ``kind`` (a :class:`KernelKind`), its numbers, and its label tables:
    ``similarity`` (SPTK: the node similarity; the exact tree kernels: label weights, or
    None) or ``tuples`` (the path and Zelenko kernels)."""

    def __init__(self, kind, *, double lam, double mu=1.0, double terminal_factor=1.0,
                 NodeSimilarity similarity=None, TupleTable tuples=None):
        if self.ready:
            raise InvalidParameterError("an EngineSettings cannot be initialized twice")
        if (similarity is not None and not similarity.ready) or (tuples is not None and not tuples.ready):
            raise InvalidParameterError("a table of the settings was not initialized")
        if kind not in _MATCH_KEYS and kind not in (SUBSEQUENCE_PATH, FOREST):
            raise InvalidParameterError(f"unknown kernel kind {kind}")
        if kind == SMOOTHED_PARTIAL_TREE and similarity is None:
            raise InvalidParameterError("the smoothed partial tree kernel needs a NodeSimilarity")
        if kind in (ZELENKO_TREE, SUBSEQUENCE_PATH) and tuples is None:
            raise InvalidParameterError("the Zelenko and path kernels need a TupleTable")
        self.similarity, self.tuples = similarity, tuples
        self.settings.kind = kind
        self.settings.lam = lam
        self.settings.lam2 = lam * lam
        self.settings.mu = mu
        self.settings.terminal_factor = terminal_factor
        self.settings.similarity = &similarity.similarity if similarity is not None else NULL
        self.settings.tuples = &tuples.table if tuples is not None else NULL
        self.ready = True

    @property
    def kind(self):
        return KernelKind(self.settings.kind)

    @property
    def lam(self):
        return self.settings.lam

    @property
    def mu(self):
        return self.settings.mu

    @property
    def terminal_factor(self):
        return self.settings.terminal_factor

    cdef check_operands(self, PackedStructures A, PackedStructures B):
        """Raise unless A and B are packed as this kernel reads them and the tables cover
        their labels: every read the engine makes is then in bounds."""
        cdef int kind = self.settings.kind
        for name, packed in (("A", A), ("B", B)):
            if packed is None or not packed.ready:
                raise InvalidParameterError(f"{name} is not a packed set of structures")
            if kind == SUBSEQUENCE_PATH and not isinstance(packed, PackedSequences):
                raise InvalidParameterError(f"the path kernel takes PackedSequences; {name} is {type(packed).__name__}")
            if kind == FOREST and not isinstance(packed, PackedForests):
                raise InvalidParameterError(f"the forest kernel takes PackedForests; {name} is {type(packed).__name__}")
            if kind in _MATCH_KEYS and (not isinstance(packed, PackedTrees)
                                        or packed.match_key not in _MATCH_KEYS[kind]):
                raise InvalidParameterError(f"kernel kind {KernelKind(kind).name} takes PackedTrees keyed by "
                                            f"{' or '.join(map(repr, _MATCH_KEYS[kind]))}; {name} is {packed!r}")
        if kind == FOREST and (self.similarity is not None or self.tuples is not None):
            raise InvalidParameterError("the forest kernel takes no tables")
        if kind in (ZELENKO_TREE, SUBSEQUENCE_PATH):
            table_size, table = len(self.tuples.edges), "tuple table"
        elif self.similarity is not None:
            table_size, table = len(self.similarity.kinds), "similarity table"
        else:
            table_size = None
        for name, packed in (("A", A), ("B", B)):
            if table_size is not None and packed.max_label >= table_size:
                raise InvalidParameterError(f"the {table} covers label ids 0..{table_size - 1}, but {name} holds "
                                            f"label id {packed.max_label}")
            if kind == SMOOTHED_PARTIAL_TREE and not (<PackedTrees>packed).smoothed_like(self.similarity.kinds):
                raise InvalidParameterError(f"{name} was packed against other similarity kinds than the table's "
                                            "(its smoothed nodes differ)")

    def __repr__(self):
        return (f"EngineSettings({self.kind.name}, lam={self.lam}, mu={self.mu}, "
                f"terminal_factor={self.terminal_factor})")
