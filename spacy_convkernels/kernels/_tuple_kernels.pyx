# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The kernels over (edge, node) tuples on one pair of packed structures: the
subsequence path kernel (Bunescu & Mooney 2005; Garg et al. 2018 §4.1) and Zelenko's
sparse subtree kernel (Zelenko et al. 2003), both with the tuple similarity of
``_tables.pxd``. Zelenko's kernel keeps its values for the matching node pairs only."""
from ._tables cimport tuple_similarity
from ._workspace cimport SubsequenceSum, add_row, reserve, reserve_nodes, start_sum, subsequence_rows, tick


cdef double path_kernel(Workspace* ws, const Settings* prm, const int* a, int n, const int* b, int m) noexcept nogil:
    """Subsequence kernel of Bunescu & Mooney (2005) as in Garg et al. §4.1: the sum over
    index sequences i of ``a`` and j of ``b`` of equal length of
    prod_k k(a[i_k], b[j_k]) * lam^(span(i) + span(j)), span = last - first + 1, that is
    lam^2 per element times lam per gap (:c:type:`SubsequenceSum` with factor lam^2, the
    tuple similarities of row i computed just before it: memory O(m))."""
    cdef SubsequenceSum rows
    if not start_sum(ws, &rows, m):
        return 0.0
    cdef int i, j
    for i in range(n):
        for j in range(m):
            rows.v[j] = tuple_similarity(prm.tuples, a[i], b[j])
        add_row(&rows, prm.lam, prm.lam2)
        if not tick(ws, 2 * (m + 1)):
            return 0.0
    return rows.total


cdef double zelenko_children(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b,
                             int x, int y) noexcept nogil:
    """The child term of Zelenko's sparse subtree kernel for the pair (x, y): the sum over
    equal-length child subsequences i, j of lam^(span(i) + span(j)) *
    (sum_s K(c_x[i_s], c_y[j_s])) * prod_s k(c_x[i_s], c_y[j_s]), in one O(n*m) pass with
    rolling rows carrying two sums: A of the products, B of the products times the sums.
    k and K of a child pair come from the first child's partner list (sorted like the
    second tree's nodes; a child pair not in it has k = 0)."""
    cdef int pa = a.child_ptr[x], pb = b.child_ptr[y]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int m = b.child_ptr[y + 1] - pb
    cdef double* prev_a = subsequence_rows(ws, 4, m)
    if prev_a == NULL:
        return 0.0
    cdef double* cur_a = prev_a + (m + 1)
    cdef double* prev_b = prev_a + 2 * (m + 1)
    cdef double* cur_b = prev_a + 3 * (m + 1)
    cdef double* swap
    cdef double total = 0.0, row_a, row_b, e_a, e_b, k, lam = prm.lam
    cdef int i, j, ca, cb
    cdef long long p, end
    for j in range(m + 1):
        prev_b[j] = 0.0
    cur_a[0] = 0.0
    cur_b[0] = 0.0
    for i in range(n):
        ca = a.child_idx[pa + i]
        p = ws.pair_start[ca]
        end = p + ws.group_len[ca]
        row_a = 0.0
        row_b = 0.0
        for j in range(1, m + 1):
            cb = b.child_idx[pb + j - 1]
            while p < end and ws.partner[p] < cb:
                p += 1
            if p < end and ws.partner[p] == cb:
                k = ws.pair_sim[p]
                e_a = k * prm.lam2 * (1.0 + prev_a[j - 1])
                e_b = k * prm.lam2 * (ws.delta[p] * (1.0 + prev_a[j - 1]) + prev_b[j - 1])
            else:
                e_a = 0.0
                e_b = 0.0
            total += e_b
            row_a = e_a + lam * row_a
            cur_a[j] = row_a + lam * prev_a[j]
            row_b = e_b + lam * row_b
            cur_b[j] = row_b + lam * prev_b[j]
        swap = prev_a
        prev_a = cur_a
        cur_a = swap
        swap = prev_b
        prev_b = cur_b
        cur_b = swap
        if not tick(ws, 2 * (m + 1)):
            return 0.0
    return total


cdef double zelenko_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b) noexcept nogil:
    """Zelenko, Aone & Richardella (2003) sparse subtree kernel between the roots, with
    Garg et al.'s tuple similarity k as both matching and similarity:

        K(x, y) = k(x, y) * (k(x, y) + child term of (x, y))

    K is kept only for the node pairs with k != 0 (partner lists per node of the first
    tree, in the second tree's order: memory grows with the matching pairs, not with
    |N1| * |N2|), computed from the last preorder node back, so each child pair is known
    before its parents need it."""
    cdef int na = a.n, nb = b.n, x, y, t
    cdef long long k = 0, base
    cdef double s
    if not reserve_nodes(ws, na):
        ws.failed = True
        return 0.0
    for x in range(na):
        ws.pair_start[x] = k
        for y in range(nb):
            s = tuple_similarity(prm.tuples, a.label[x], b.label[y])
            if s != 0.0:
                if not (reserve(<void**>&ws.partner, &ws.partner_capacity, k + 1, sizeof(int))
                        and reserve(<void**>&ws.pair_sim, &ws.sim_capacity, k + 1, sizeof(double))):
                    ws.failed = True
                    return 0.0
                ws.partner[k] = y
                ws.pair_sim[k] = s
                k += 1
        ws.group_len[x] = <int>(k - ws.pair_start[x])
        if not tick(ws, 1 + nb):
            return 0.0
    if k == 0:
        return 0.0
    if not reserve(<void**>&ws.delta, &ws.pair_capacity, k, sizeof(double)):
        ws.failed = True
        return 0.0
    for x in range(na - 1, -1, -1):
        base = ws.pair_start[x]
        for t in range(ws.group_len[x]):
            s = ws.pair_sim[base + t]
            ws.delta[base + t] = s * (s + zelenko_children(ws, prm, a, b, x, ws.partner[base + t]))
            if ws.failed or not tick(ws, 1):
                return 0.0
    # the roots: the first partner of node 0, if it is node 0
    if ws.group_len[0] and ws.partner[ws.pair_start[0]] == 0:
        return ws.delta[ws.pair_start[0]]
    return 0.0
