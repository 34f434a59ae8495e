# cython: language_level=3
"""Engine settings (see ``_settings.pxd``): a kind's row of the table of kinds
(:data:`~.kinds.KIND_TRAITS`) with its numbers and tables, checked against the tables when
made and against the packed structures of each call."""
from ..errors import InvalidParameterError
from ._packing cimport PackedForests, PackedSequences, PackedTrees
from .kinds import KIND_TRAITS, KernelKind

_OPERANDS = {TREE: PackedTrees, PATH: PackedSequences, FOREST: PackedForests}  # the packed type of each family
_NEEDS = {"similarity": "a NodeSimilarity", "tuples": "a TupleTable"}


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
        if kind not in KIND_TRAITS:
            raise InvalidParameterError(f"unknown kernel kind {kind}")
        traits = KIND_TRAITS[kind]
        if traits.table in _NEEDS and {"similarity": similarity, "tuples": tuples}[traits.table] is None:
            raise InvalidParameterError(f"kernel kind {KernelKind(kind).name} needs {_NEEDS[traits.table]}")
        self.similarity, self.tuples = similarity, tuples
        self.settings.kind = kind
        self.settings.family = traits.family
        self.settings.smoothed = traits.table == "similarity"
        self.settings.sums_of_deltas = traits.sums_of_deltas
        self.settings.aligned = traits.aligned_by_position
        self.settings.child_offset = traits.child_offset
        self.settings.mismatch_factor = traits.mismatch_factor
        self.settings.factor_first = traits.factor_first
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
        traits = KIND_TRAITS[kind]
        operands = _OPERANDS[traits.family]
        for name, packed in (("A", A), ("B", B)):
            if packed is None or not packed.ready:
                raise InvalidParameterError(f"{name} is not a packed set of structures")
            if not isinstance(packed, operands):
                raise InvalidParameterError(f"kernel kind {KernelKind(kind).name} takes {operands.__name__}; "
                                            f"{name} is {type(packed).__name__}")
            if traits.match_keys and packed.match_key not in traits.match_keys:
                raise InvalidParameterError(f"kernel kind {KernelKind(kind).name} takes PackedTrees keyed by "
                                            f"{' or '.join(map(repr, traits.match_keys))}; {name} is {packed!r}")
        if traits.table is None and (self.similarity is not None or self.tuples is not None):
            raise InvalidParameterError(f"kernel kind {KernelKind(kind).name} takes no tables")
        if traits.table == "tuples":
            table_size, table = len(self.tuples.edges), "tuple table"
        elif self.similarity is not None:
            table_size, table = len(self.similarity.kinds), "similarity table"
        else:
            table_size = None
        for name, packed in (("A", A), ("B", B)):
            if table_size is not None and packed.max_label >= table_size:
                raise InvalidParameterError(f"the {table} covers label ids 0..{table_size - 1}, but {name} holds "
                                            f"label id {packed.max_label}")
            if self.settings.smoothed and not (<PackedTrees>packed).smoothed_like(self.similarity.kinds):
                raise InvalidParameterError(f"{name} was packed against other similarity kinds than the table's "
                                            "(its smoothed nodes differ)")

    def __repr__(self):
        return (f"EngineSettings({self.kind.name}, lam={self.lam}, mu={self.mu}, "
                f"terminal_factor={self.terminal_factor})")
