# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The kernels over (edge, node) tuples on one pair of packed structures: the
subsequence path kernel (Bunescu & Mooney 2005; Garg et al. 2018 §4.1) and Zelenko's
sparse subtree kernel (Zelenko et al. 2003), both with the tuple similarity of
``_tables.pxd``. Zelenko's kernel evaluates only the node pairs the roots' value reads,
top-down."""
from ._children cimport TuplePairs, child_sum
from ._packing cimport is_leaf
from ._tables cimport tuple_similarity
from ._top_down cimport TupleTrees, top_down


cdef double path_kernel(Workspace* ws, const Settings* prm, const int* a, int n, const int* b, int m) noexcept nogil:
    """Subsequence kernel of Bunescu & Mooney (2005) as in Garg et al. §4.1: the sum over
    index sequences i of ``a`` and j of ``b`` of equal length of
    prod_k k(a[i_k], b[j_k]) * lam^(span(i) + span(j)), span = last - first + 1, that is
    lam^2 per element times lam per gap (``_children.child_sum`` with factor lam^2, the
    tuple similarities of row i computed just before it: memory O(m))."""
    cdef TuplePairs similarities = TuplePairs(prm.tuples, a, b)
    return child_sum(ws, &similarities, n, m, prm.lam, prm.lam2)


cdef double zelenko_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b) noexcept nogil:
    """Zelenko, Aone & Richardella (2003) sparse subtree kernel between the roots, with
    Garg et al.'s tuple similarity k as both matching and similarity:

        K(x, y) = k(x, y) * (k(x, y) + child term of (x, y)),

    the child term the sum over equal-length child subsequences i, j of lam^(span(i) +
    span(j)) * (sum_s K(c_x[i_s], c_y[j_s])) * prod_s k(c_x[i_s], c_y[j_s]), in one O(n*m)
    pass with rolling rows carrying two sums (``_workspace.zelenko_row``): A of the
    products, B of the products times the sums. Evaluated top-down from the roots
    (``_top_down.top_down``): only the pairs the roots' value reads are evaluated, each
    once; memory is six rows of m + 1 doubles per level, however many node pairs match
    (out of memory or stopped: ``failed``)."""
    cdef double s = tuple_similarity(prm.tuples, a.label[0], b.label[0])
    cdef TupleTrees trees = TupleTrees(prm, a, b)
    if s == 0.0:
        return 0.0
    if is_leaf(a, 0) or is_leaf(b, 0):
        return s * (s + 0.0)
    ws.row_top = 0
    return top_down(ws, &trees, 0, 0, s)
