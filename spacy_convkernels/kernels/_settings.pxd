"""What one engine call computes: the kernel's recursion, its numbers and its tables."""
from ._packing cimport PackedStructures
from ._tables cimport NodeSimilarity, Similarity, TupleSimilarity, TupleTable


cpdef enum KernelKind:
    SUBTREE_KELP = 0
    SUBTREE_TEXTBOOK = 1
    SUBSET_TREE = 2
    PARTIAL_TREE = 3
    SMOOTHED_PARTIAL_TREE = 4
    ZELENKO_TREE = 5
    SUBSEQUENCE_PATH = 6
    FOREST = 7


cpdef enum BucketRule:  # how a one-against-many index (``_index.pyx``) sorts a kind's nodes
    BY_KEY = 0              # ST, SST, PTK: nodes pair when their match keys are equal
    BY_KEY_OR_GROUP = 1     # SPTK: exact labels by match key, smoothed ones by similarity group
    BY_TUPLE = 2            # Zelenko, path: tuples by edge and node label, or edge and node group
    NO_BUCKETS = 3          # the forest kernel: no index of nodes


cdef struct Settings:
    int kind
    double lam
    double lam2
    double mu
    double terminal_factor          # PTK, SPTK: leaf pairs; forest kernel: pairs of equal terminals
    bint aligned                    # a Delta's children align by position (ST, SST), else as subsequences
    const Similarity* similarity    # SPTK; the exact tree kernels: label weights (or NULL)
    const TupleSimilarity* tuples   # Zelenko and path kernels only


cdef class EngineSettings:
    cdef Settings settings
    cdef readonly NodeSimilarity similarity
    cdef readonly TupleTable tuples
    cdef bint ready
    cdef check_operands(self, PackedStructures A, PackedStructures B)
