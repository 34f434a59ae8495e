"""A pair of nodes evaluated top-down with every child pair it reads, on an explicit stack of
frames (no C recursion, any depth), written once for PTK and SPTK (``_tree_kernels``) and
Zelenko's kernel (``_tuple_kernels``): :func:`top_down`, generic over the pairs it
evaluates, a fused type compiled once per kernel. Each frame holds a pair's rolling rows
of its child-subsequence sum (``_workspace.pxd``): memory O(depth * children), however
many node pairs match."""
from ._deltas cimport partial_value
from ._packing cimport TreeView, is_leaf, n_children
from ._settings cimport Settings
from ._tables cimport Similarity, node_similarity, tuple_similarity, weighted_similarity
from ._workspace cimport Frame, Workspace, push_frame, subsequence_row, tick, zelenko_row


cdef struct Pairing:
    # what one pair of trees needs to pair its nodes (PTK, SPTK; ST and SST for their own frames)
    const Settings* prm
    const TreeView* a
    const TreeView* b
    const double* w             # label weights w, or NULL (all 1)
    const Similarity* sim       # SPTK: the node similarity, or NULL
    const int* parent_a         # per node: its parent, -1 for the root
    const int* parent_b
    const int* pos_a            # per node: its place among its parent's children
    const int* pos_b
    const int* slot_a           # SPTK: per node of a, the slot of its smoothed label, -1 for an exact node; or NULL
    const int* slot_b
    const int* slot_label_a     # SPTK: the label of each slot
    const int* slot_label_b
    const double* cache         # SPTK: the factor of each pair of slots (slot_a * n_slots_b + slot_b), or NULL
    int n_slots_b


cdef struct TupleTrees:  # Zelenko: a pair of trees of tuple labels
    const Settings* prm
    const TreeView* a
    const TreeView* b


ctypedef fused TopDown:
    Pairing     # PTK, SPTK: Delta of each pair, K the sum of every Delta evaluated
    TupleTrees  # Zelenko: K of each pair, the roots' value


cdef inline double smoothed_factor(const Similarity* sim, int la, int lb) noexcept nogil:
    """w(a) sigma(a, b) w(b) of two smoothed labels, 0 below the threshold."""
    return weighted_similarity(sim, la, lb, node_similarity(sim, la, lb))


cdef inline double pair_factor(const Pairing* P, int x, int y) noexcept nogil:
    """The factor of the pair (x, y), 0 when the pair does not match: w(x) w(y) (1 without
    label weights) for equal keys; SPTK's w(x) sigma(x, y) w(y) when x is smoothed (a
    smoothed node pairs with smoothed nodes only, by similarity; an exact one by key)."""
    cdef int sx, sy
    if P.slot_a != NULL:
        sx = P.slot_a[x]
        if sx >= 0:
            sy = P.slot_b[y]
            if sy < 0:
                return 0.0
            if P.cache != NULL:
                return P.cache[<long long>sx * P.n_slots_b + sy]
            return smoothed_factor(P.sim, P.slot_label_a[sx], P.slot_label_b[sy])
    if P.a.key[x] != P.b.key[y]:
        return 0.0
    if P.w == NULL:
        return 1.0
    return P.w[P.a.label[x]] * P.w[P.b.label[y]]


cdef inline double child_factor(const TopDown* P, int x, int y, double* k) noexcept nogil:
    """The factor of a child pair, 0 when it does not match: :func:`pair_factor` (PTK,
    SPTK) or the tuple similarity (Zelenko, also written to ``k``, its row of k)."""
    if TopDown is Pairing:
        return pair_factor(P, x, y)
    else:
        k[0] = tuple_similarity(P.prm.tuples, P.a.label[x], P.b.label[y])
        return k[0]


cdef inline double pair_value(const TopDown* P, double factor, bint leaf, double children) noexcept nogil:
    """The value of a pair with factor f and child term ``children``: PTK's and SPTK's
    Delta (``_deltas.partial_value``); Zelenko's K = k * (k + child term), k^2 for a leaf."""
    if TopDown is Pairing:
        return partial_value(P.prm, factor, leaf, children)
    else:
        return factor * (factor + children)


cdef inline double add_row(const TopDown* P, double* rows, int m, int parity, double total) noexcept nogil:
    """Add the frame's row of values to its child term (``_workspace.subsequence_row``, or
    ``zelenko_row`` with its two sums), rolling rows ``parity`` and ``1 - parity``."""
    cdef double* prev = rows + parity * (m + 1)
    cdef double* cur = rows + (1 - parity) * (m + 1)
    if TopDown is Pairing:
        return subsequence_row(rows + 2 * (m + 1), prev, cur, m, P.prm.lam, 1.0, total)
    else:
        return zelenko_row(rows + 4 * (m + 1), rows + 5 * (m + 1), prev, cur, rows + (2 + parity) * (m + 1),
                           rows + (3 - parity) * (m + 1), m, P.prm.lam, P.prm.lam2, total)


cdef inline double top_down(Workspace* ws, const TopDown* P, int x0, int y0, double f0) noexcept nogil:
    """The value of the pair of inner nodes (x0, y0) with factor f0 != 0 (:func:`pair_value`),
    evaluated top-down: its child term sums, over pairs of equal-length child subsequences,
    the values of their child pairs (``_workspace.subsequence_row``, ``zelenko_row``). Row
    i of the child pairs' values is filled, a child pair of inner nodes that matches
    evaluated on a frame of its own when reached, then added to the frame's rolling rows.
    Each pair read is evaluated once (it has one pair of parents). PTK, SPTK: the sum of
    every Delta evaluated (x0, y0's and those it reads); Zelenko: x0, y0's K. Out of memory
    or stopped: ``failed``."""
    cdef const TreeView* a = P.a
    cdef const TreeView* b = P.b
    cdef int sums = 1 if TopDown is Pairing else 2  # rolling sums of the child term, two rows each
    cdef int n_rows = 3 * sums  # per frame: the sums' rows, then a row of values per sum (Zelenko: k, then K)
    cdef double total = 0.0, value = 0.0, f
    cdef Frame* fr
    cdef double* rows
    cdef double* v
    cdef int depth, ca, cb, j, m, pa, pb
    cdef bint returned = False, pushed
    if push_frame(ws, 0, x0, y0, n_children(a, x0), n_children(b, y0), n_rows, sums, f0) == NULL:
        return 0.0
    depth = 1
    while True:
        fr = ws.frames + depth - 1
        m = fr.m
        rows = ws.rows + fr.rows
        v = rows + (n_rows - 1) * (m + 1)
        pa = a.child_ptr[fr.x]
        pb = b.child_ptr[fr.y]
        if returned:
            v[fr.j] = value
            fr.j += 1
            returned = False
        pushed = False
        while fr.i < fr.n:
            ca = a.child_idx[pa + fr.i]
            j = fr.j
            while j < m:
                cb = b.child_idx[pb + j]
                f = child_factor(P, ca, cb, v - (m + 1) + j)  # Zelenko's k: the row before K's
                if f == 0.0:
                    v[j] = 0.0
                elif is_leaf(a, ca) or is_leaf(b, cb):
                    v[j] = pair_value(P, f, True, 0.0)
                else:
                    fr.j = j
                    if push_frame(ws, depth, ca, cb, n_children(a, ca), n_children(b, cb), n_rows, sums, f) == NULL:
                        return 0.0
                    depth += 1
                    pushed = True
                    break
                j += 1
            if pushed:
                break
            fr.total = add_row(P, rows, m, fr.parity, fr.total)
            fr.parity = 1 - fr.parity
            fr.i += 1
            fr.j = 0
            if not tick(ws, sums * (m + 1)):
                return 0.0
        if pushed:
            continue
        value = pair_value(P, fr.factor, False, fr.total)
        if TopDown is Pairing:  # a Delta read by its parents is evaluated here only: K sums it
            total += value
        ws.row_top = fr.rows
        depth -= 1
        if depth == 0:
            return total if TopDown is Pairing else value
        returned = True
