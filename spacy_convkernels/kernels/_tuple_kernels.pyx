# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The kernels over (edge, node) tuples on one pair of packed structures: the
subsequence path kernel (Bunescu & Mooney 2005; Garg et al. 2018 §4.1) and Zelenko's
sparse subtree kernel (Zelenko et al. 2003), both with the tuple similarity of
``_tables.pxd``. Zelenko's kernel evaluates only the node pairs the roots' value reads,
top-down."""
from ._children cimport TuplePairs, child_sum
from ._tables cimport tuple_similarity
from ._packing cimport is_leaf, n_children
from ._workspace cimport Frame, push_frame, tick, zelenko_row


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
    products, B of the products times the sums. Evaluated top-down from the roots on an
    explicit stack of frames (any depth): row i of k and K of the child pairs is filled
    first, a child pair with k != 0 of two inner nodes evaluated on a frame of its own when
    reached (a leaf's K is k^2), then the row is added. Only the pairs the roots' value
    reads are evaluated, each once (a pair of nodes has one pair of parents); memory is six
    rows of m + 1 doubles per level, however many node pairs match (out of memory or
    stopped: ``failed``)."""
    cdef double s = tuple_similarity(prm.tuples, a.label[0], b.label[0])
    cdef double value = 0.0, k
    cdef Frame* fr
    cdef double* rows
    cdef double* vk
    cdef double* vK
    cdef int depth, ca, cb, j, m, pa, pb
    cdef bint returned = False, pushed
    if s == 0.0:
        return 0.0
    if is_leaf(a, 0) or is_leaf(b, 0):
        return s * (s + 0.0)
    ws.row_top = 0
    if push_frame(ws, 0, 0, 0, n_children(a, 0), n_children(b, 0), 6, 2, s) == NULL:
        return 0.0
    depth = 1
    while True:
        fr = ws.frames + depth - 1
        m = fr.m
        rows = ws.rows + fr.rows
        vk = rows + 4 * (m + 1)
        vK = rows + 5 * (m + 1)
        pa = a.child_ptr[fr.x]
        pb = b.child_ptr[fr.y]
        if returned:
            vK[fr.j] = value
            fr.j += 1
            returned = False
        pushed = False
        while fr.i < fr.n:
            ca = a.child_idx[pa + fr.i]
            j = fr.j
            while j < m:
                cb = b.child_idx[pb + j]
                k = tuple_similarity(prm.tuples, a.label[ca], b.label[cb])
                vk[j] = k
                if k == 0.0:
                    vK[j] = 0.0
                elif is_leaf(a, ca) or is_leaf(b, cb):
                    vK[j] = k * (k + 0.0)
                else:
                    fr.j = j
                    if push_frame(ws, depth, ca, cb, n_children(a, ca), n_children(b, cb), 6, 2, k) == NULL:
                        return 0.0
                    depth += 1
                    pushed = True
                    break
                j += 1
            if pushed:
                break
            fr.total = zelenko_row(vk, vK, rows + fr.parity * (m + 1), rows + (1 - fr.parity) * (m + 1),
                                   rows + (2 + fr.parity) * (m + 1), rows + (3 - fr.parity) * (m + 1), m,
                                   prm.lam, prm.lam2, fr.total)
            fr.parity = 1 - fr.parity
            fr.i += 1
            fr.j = 0
            if not tick(ws, 2 * (m + 1)):
                return 0.0
        if pushed:
            continue
        value = fr.factor * (fr.factor + fr.total)
        ws.row_top = fr.rows
        depth -= 1
        if depth == 0:
            return value
        returned = True
