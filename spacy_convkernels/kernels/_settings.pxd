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


cdef struct Settings:
    int kind
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
