"""What one engine call computes: its kind's row of the table (``kinds.py``), its numbers and its tables."""
from ._packing cimport PackedStructures
from ._tables cimport NodeSimilarity, Similarity, TupleSimilarity, TupleTable


cdef enum:  # the families of kinds (``kinds.Family``)
    TREE = 0
    PATH = 1
    FOREST = 2


cdef enum:  # how a one-against-many index (``_index.pyx``) sorts a kind's nodes (``kinds.BucketRule``)
    BY_KEY = 0              # ST, SST, PTK: nodes pair when their match keys are equal
    BY_KEY_OR_GROUP = 1     # SPTK: exact labels by match key, smoothed ones by similarity group
    BY_TUPLE = 2            # Zelenko, path: tuples by edge and node label, or edge and node group
    NO_BUCKETS = 3          # the forest kernel: no index of nodes


cdef struct Settings:
    int kind
    # the kind's row (``kinds.KindTraits``)
    int family
    bint smoothed                   # smoothed nodes pair by similarity (SPTK)
    bint sums_of_deltas             # K sums Delta over node pairs; a tree kind without: K is its roots' value
    bint aligned                    # a Delta's children align by position (ST, SST), else as subsequences
    double child_offset             # ST, SST: f = child_offset + Delta of a pair of inner children
    double mismatch_factor          # ST, SST: f of a pair of children that do not match, not both leaves
    bint factor_first               # PTK, SPTK: a Delta multiplies its factor first (SPTK) or last (PTK)
    # its numbers and tables
    double lam
    double lam2
    double mu
    double terminal_factor          # PTK, SPTK: leaf pairs; forest kernel: pairs of equal terminals
    const Similarity* similarity    # SPTK; the exact tree kernels: label weights (or NULL)
    const TupleSimilarity* tuples   # Zelenko and path kernels only


cdef class EngineSettings:
    cdef Settings settings
    cdef readonly NodeSimilarity similarity
    cdef readonly TupleTable tuples
    cdef bint ready
    cdef check_operands(self, PackedStructures A, PackedStructures B)
