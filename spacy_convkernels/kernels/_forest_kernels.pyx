# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The forest kernel (Zhang et al. 2009, eqs. 8-10) on one pair of packed forests.

With D(v1, v2) = Delta'(v1, v2) / (alpha(v1) alpha(v2)), eqs. (8) and (9) read

    D(v1, v2) = lam * sum over hyper-edge pairs (e1 at v1, e2 at v2) with equal productions of
                P(e1) P(e2) prod_j (beta(c1j) beta(c2j) + D(c1j, c2j)),

the D term only when both tails have hyper-edges (a terminal is never expanded), and
eq. (10) K = sum over node pairs with equal labels of alpha(v1) alpha(v2) D(v1, v2), plus
``terminal_factor * lam * alpha(t1) alpha(t2)`` for each pair of equal terminals (the
package's SST counts equal leaves, KeLP's convention; 0 gives the paper's sum over
non-terminals only), divided by Z1 Z2.

For one pair the engine merges the two node lists sorted by label (the pairs that can
have a D) and the two hyper-edge lists sorted by production (the pairs that match), then
visits the first forest's hyper-edges in order of their heads, which come after their
tails: every D a hyper-edge pair needs is complete before. Each matching hyper-edge pair
is visited once: O(|E1| |E2|) at worst, memory one double per node pair of equal labels.
"""
from ._merge cimport KeysInOrder, Run, next_run
from ._workspace cimport reserve, reserve_nodes, tick


cdef inline long long merge_nodes(Workspace* ws, const ForestView* a, const ForestView* b) noexcept nogil:
    """For each node x of ``a``, the run of ``b``'s nodes with its label: ``b.order[group_start[x] :
    group_start[x] + group_len[x]]``, its D values from ``pair_start[x]``; returns the number of pairs."""
    cdef KeysInOrder label_a = KeysInOrder(a.label, a.order), label_b = KeysInOrder(b.label, b.order)
    cdef Run run = Run(0, 0, 0, 0)
    cdef int i, x
    cdef long long n_pairs = 0
    for x in range(a.n):
        ws.group_len[x] = 0
    while next_run(&label_a, a.n, &label_b, b.n, &run):
        for i in range(run.i, run.i_end):
            x = a.order[i]
            ws.group_start[x] = run.j
            ws.group_len[x] = run.j_end - run.j
            ws.pair_start[x] = n_pairs
            n_pairs += run.j_end - run.j
    return n_pairs


cdef inline long long merge_edges(Workspace* ws, const ForestView* a, const ForestView* b) noexcept nogil:
    """For each hyper-edge e of ``a``, the run of ``b``'s hyper-edges with its production:
    ``b.edge_order[edge_group[2e] : edge_group[2e] + edge_group[2e + 1]]``; returns the number of pairs."""
    cdef KeysInOrder key_a = KeysInOrder(a.edge_key, a.edge_order), key_b = KeysInOrder(b.edge_key, b.edge_order)
    cdef Run run = Run(0, 0, 0, 0)
    cdef int i, e
    cdef long long n_pairs = 0
    for e in range(a.n_edges):
        ws.edge_group[2 * e + 1] = 0
    while next_run(&key_a, a.n_edges, &key_b, b.n_edges, &run):
        for i in range(run.i, run.i_end):
            e = a.edge_order[i]
            ws.edge_group[2 * e] = run.j
            ws.edge_group[2 * e + 1] = run.j_end - run.j
            n_pairs += run.j_end - run.j
    return n_pairs


cdef inline long long pair_of(const Workspace* ws, const ForestView* b, int x, int y) noexcept nogil:
    """Where D(x, y) is kept; x and y must have equal labels."""
    return ws.pair_start[x] + b.rank[y] - ws.group_start[x]


cdef double forest_kernel(Workspace* ws, const Settings* prm, const ForestView* a,
                          const ForestView* b) noexcept nogil:
    """Unnormalized forest kernel K(a, b) of eq. (10) (out of memory: ``failed`` set)."""
    cdef long long n_pairs, k, pa, pb
    cdef int e1, e2, t, j, n_tails, c1, c2, h1, h2, x, y
    cdef double prod, f, w, total = 0.0
    if not (reserve_nodes(ws, a.n)
            and reserve(<void**>&ws.edge_group, &ws.edge_capacity, 2 * <long long>a.n_edges, sizeof(int))):
        ws.failed = True
        return 0.0
    n_pairs = merge_nodes(ws, a, b)
    if n_pairs == 0:
        return 0.0
    if not reserve(<void**>&ws.delta, &ws.pair_capacity, n_pairs, sizeof(double)):
        ws.failed = True
        return 0.0
    for k in range(n_pairs):
        ws.delta[k] = 0.0
    if merge_edges(ws, a, b):
        for e1 in range(a.n_edges):  # by head: tails first
            h1 = a.edge_head[e1]
            pa = a.tail_ptr[e1]
            n_tails = <int>(a.tail_ptr[e1 + 1] - pa)
            for t in range(ws.edge_group[2 * e1 + 1]):
                e2 = b.edge_order[ws.edge_group[2 * e1] + t]
                h2 = b.edge_head[e2]
                pb = b.tail_ptr[e2]
                if b.tail_ptr[e2 + 1] - pb != n_tails or a.label[h1] != b.label[h2]:
                    continue  # production ids of two different interners: no match
                prod = 1.0
                for j in range(n_tails):
                    c1 = a.tail_idx[pa + j]
                    c2 = b.tail_idx[pb + j]
                    f = a.inside[c1] * b.inside[c2]
                    if not a.terminal[c1] and not b.terminal[c2] and a.label[c1] == b.label[c2]:
                        f = f + ws.delta[pair_of(ws, b, c1, c2)]
                    prod *= f
                ws.delta[pair_of(ws, b, h1, h2)] += prm.lam * a.edge_prob[e1] * b.edge_prob[e2] * prod
            if not tick(ws, 1 + <long long>ws.edge_group[2 * e1 + 1] * (1 + n_tails)):
                return 0.0
    for x in range(a.n):
        for t in range(ws.group_len[x]):
            y = b.order[ws.group_start[x] + t]
            w = a.outside[x] * b.outside[y]
            if a.terminal[x] and b.terminal[y]:
                total += prm.terminal_factor * prm.lam * w
            elif not a.terminal[x] and not b.terminal[y]:
                total += w * ws.delta[ws.pair_start[x] + t]
    return total / (a.total * b.total)
