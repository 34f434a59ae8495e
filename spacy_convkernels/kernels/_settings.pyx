# cython: language_level=3
"""Engine settings (see ``_settings.pxd``), checked against the tables when made and
against the packed structures of each call, and the one table of what the engine knows
of each kernel kind (:data:`KIND_TRAITS`)."""
from typing import NamedTuple

from ..errors import InvalidParameterError
from ._packing cimport PackedForests, PackedSequences, PackedTrees


class KindTraits(NamedTuple):
    """One kernel kind as the engine's modules read it (``_settings``, ``_index``,
    ``_driver`` and ``explain``).

    ``operands`` the packed type it reads; ``match_keys`` (trees) the keys it can pair
    nodes by; ``table`` the label table it needs: ``"similarity"`` (SPTK), ``"tuples"``
    (Zelenko, path), ``"weights"`` (optional label weights) or None (it takes none);
    ``bucket_rule`` how a one-against-many index sorts its nodes; ``sums_of_deltas``
    whether K is the sum of Delta over node pairs (``deltas`` exports the table and
    ``explain`` draws it); ``aligned_by_position`` (sums of Deltas) whether a fragment's
    children align by position (ST, SST) or as a subsequence (PTK, SPTK)."""

    operands: type
    match_keys: tuple
    table: str | None
    bucket_rule: int
    sums_of_deltas: bool
    aligned_by_position: bool


KIND_TRAITS = {
    SUBTREE_KELP: KindTraits(PackedTrees, ("production",), "weights", BY_KEY, True, True),
    SUBTREE_TEXTBOOK: KindTraits(PackedTrees, ("production",), "weights", BY_KEY, True, True),
    SUBSET_TREE: KindTraits(PackedTrees, ("production",), "weights", BY_KEY, True, True),
    PARTIAL_TREE: KindTraits(PackedTrees, ("content",), "weights", BY_KEY, True, False),
    # SPTK without vectors matches contents, as KeLP
    SMOOTHED_PARTIAL_TREE: KindTraits(PackedTrees, ("label", "content"), "similarity", BY_KEY_OR_GROUP, True, False),
    ZELENKO_TREE: KindTraits(PackedTrees, ("label",), "tuples", BY_TUPLE, False, False),
    SUBSEQUENCE_PATH: KindTraits(PackedSequences, (), "tuples", BY_TUPLE, False, False),
    FOREST: KindTraits(PackedForests, (), None, NO_BUCKETS, False, False),
}
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
        table = KIND_TRAITS[kind].table
        if table in _NEEDS and {"similarity": similarity, "tuples": tuples}[table] is None:
            raise InvalidParameterError(f"kernel kind {KernelKind(kind).name} needs {_NEEDS[table]}")
        self.similarity, self.tuples = similarity, tuples
        self.settings.kind = kind
        self.settings.lam = lam
        self.settings.lam2 = lam * lam
        self.settings.mu = mu
        self.settings.terminal_factor = terminal_factor
        self.settings.aligned = KIND_TRAITS[kind].aligned_by_position
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
        for name, packed in (("A", A), ("B", B)):
            if packed is None or not packed.ready:
                raise InvalidParameterError(f"{name} is not a packed set of structures")
            if not isinstance(packed, traits.operands):
                raise InvalidParameterError(f"kernel kind {KernelKind(kind).name} takes {traits.operands.__name__}; "
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
            if kind == SMOOTHED_PARTIAL_TREE and not (<PackedTrees>packed).smoothed_like(self.similarity.kinds):
                raise InvalidParameterError(f"{name} was packed against other similarity kinds than the table's "
                                            "(its smoothed nodes differ)")

    def __repr__(self):
        return (f"EngineSettings({self.kind.name}, lam={self.lam}, mu={self.mu}, "
                f"terminal_factor={self.terminal_factor})")
