# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""One query structure against every structure of a fixed set at once (landmarks,
references, support vectors), on the index of ``_index.pyx``.

Trees (ST, SST, PTK, SPTK): for the query a, each node x gets the range of index nodes
of its bucket, the subtrees it can pair with; Delta(x, u) is evaluated once per x and
distinct subtree u (children before parents: decreasing preorder index of a), stored
densely over the range, so the Delta of a child pair (cx, cu) is
``delta[pair_start[cx] + cu - group_start[cx]]`` when cu lies in cx's range, else 0.
Then, with S(u) = sum_x Delta(x, u) and c_j(u) the occurrences of subtree u in fixed tree j,

    K(a, B_j) = sum_u c_j(u) * S(u),

which scatters each S(u) into the output row through u's occurrences. The recursions are
those of ``_tree_kernels.pyx`` (label weights, the threshold and sigma as there); only
the order of the final sums differs (rounding, about 1e-16 relative).

SPTK's similarity of a smoothed query node and a subtree is computed once per run of equal
labels in the range (the range is sorted by label), from the dot products of the block's
block product (``Against.dots``) and the post-processing that the plain engine uses
(``_tables.similarity_from_dot``).

Zelenko's kernel: the same Deltas over the index, then K(a, B_j) = Delta(root of a, root
of B_j) (inner pairs are shared through the index). The subsequence path kernel: the
tuple similarities of the query's positions are computed once per distinct tuple label of
the fixed set, then the plain dynamic programme runs per fixed path with lookups. The
forest kernel loops over the fixed forests with the plain recursion.

Memory grows with the work: O(pairs of query nodes and index nodes of their buckets) per
query, plus one double per index node (the sums S, kept at 0 between queries); for paths,
the rows of every depth of the last query against every fixed path (at most
``MAX_PREFIX_ROWS`` doubles, else not kept), which the next query reuses for the positions
it shares with it (``path_row``).
"""
from libc.string cimport memset

from ._children cimport IndexRanges, child_sum, fill_row, production_delta
from ._deltas cimport partial_value
from ._forest_kernels cimport forest_kernel
from ._index cimport BY_KEY_OR_GROUP, bucket_of, find_bucket, find_feature
from ._packing cimport ForestView, TreeView, forest_view, is_leaf, tree_view
from ._settings cimport FOREST, PATH
from ._tables cimport (SHARED_FEATURES, Similarity, TupleSimilarity, row_dot, similarity_from_dot,
                       similarity_without_vectors, tuple_similarity, weighted_similarity)
from ._workspace cimport (reserve, reserve_nodes, reserve_zeroed,
                          subsequence_row, subsequence_rows, tick, zelenko_row)


cdef inline bint fixed_leaf(const Fixed* f, int u) noexcept nogil:
    return f.child_ptr[u + 1] == f.child_ptr[u]


cdef long long match_ranges(Workspace* ws, const Settings* prm, const Fixed* f, int n, const int* key,
                            const int* label) noexcept nogil:
    """For each of the n query nodes (match keys ``key``, labels ``label``): its range of
    index nodes ``group_start[x] .. + group_len[x]`` and where its values start,
    ``pair_start[x]``; returns the number of pairs. ``reserve_nodes`` must have been called."""
    cdef int x, b
    cdef long long n_pairs = 0
    for x in range(n):
        b = find_bucket(f, bucket_of(prm, f.rule, key[x], label[x]))
        ws.group_start[x] = f.bucket_start[b] if b >= 0 else 0
        ws.group_len[x] = f.bucket_start[b + 1] - f.bucket_start[b] if b >= 0 else 0
        ws.pair_start[x] = n_pairs
        n_pairs += ws.group_len[x]
    return n_pairs


cdef enum:
    SPARSE = 8  # child sums over at most this many non-zero child Deltas go entry by entry


cdef double child_subsequences(Workspace* ws, const Settings* prm, const TreeView* a, const Fixed* f,
                               int x, int u) noexcept nogil:
    """The child-subsequence sum of PTK and SPTK for the pair (x, u)
    (``_children.child_sum``), child Deltas v[i][j] looked up in the children's
    ranges. They are mostly 0 (a few matching child pairs): with k <= ``SPARSE`` non-zero
    ones, v_k at (i_k, j_k) in row-major order, the sum goes over them alone,

        E_k = v_k * (1 + sum over k' with i_k' < i_k and j_k' < j_k of E_k' * lam^(i_k - i_k' - 1 + j_k - j_k' - 1)),

    total sum_k E_k: the terms of the dynamic programme (``_workspace.subsequence_row``),
    grouped otherwise (the same value up to rounding), in O(k^2) instead of O(n m). None: 0;
    more: the dynamic programme, from the first row with one (the rows before leave its
    partial sums at 0)."""
    cdef int pa = a.child_ptr[x], pu = f.child_ptr[u]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int m = f.child_ptr[u + 1] - pu
    cdef const int* cu = f.child_idx + pu
    cdef int row[SPARSE]
    cdef int col[SPARSE]
    cdef double value[SPARSE]
    cdef int i, j, ca, k = 0, b, c, _
    cdef unsigned int start, length, t
    cdef long long base
    cdef double d, total = 0.0, chains, power
    cdef IndexRanges dense
    for i in range(n):
        ca = a.child_idx[pa + i]
        start = <unsigned int>ws.group_start[ca]
        length = <unsigned int>ws.group_len[ca]
        base = ws.pair_start[ca]
        for j in range(m):
            t = <unsigned int>cu[j] - start
            if t < length:
                d = ws.delta[base + t]
                if d != 0.0:
                    if k == SPARSE:
                        dense = IndexRanges(a.child_idx + pa + row[0], cu, ws.delta)
                        return child_sum(ws, &dense, n - row[0], m, prm.lam, 1.0)
                    row[k] = i
                    col[k] = j
                    value[k] = d
                    k += 1
        if not tick(ws, m + 1):
            return 0.0
    for c in range(k):  # value[c] becomes E_c
        chains = 0.0
        for b in range(c):
            if row[b] < row[c] and col[b] < col[c]:
                power = 1.0
                for _ in range(row[c] - row[b] - 1 + col[c] - col[b] - 1):
                    power *= prm.lam
                chains += value[b] * power
        value[c] = value[c] * (1.0 + chains)
        total += value[c]
    return total


cdef inline double smoothed_sigma(const Similarity* sim, int la, int lb, int slot,
                                  const double* dot_row) noexcept nogil:
    """w(a) * sigma(a, b) * w(b) of a query label and a fixed label, 0 below the threshold
    (``_tables.weighted_similarity``); the dot product of their rows from the block's
    products when there (``dot_row``, the fixed row's ``slot``)."""
    cdef double sigma
    if not similarity_without_vectors(sim, la, lb, &sigma):
        if dot_row != NULL and slot >= 0:
            sigma = similarity_from_dot(sim, la, lb, dot_row[slot])
        else:
            sigma = similarity_from_dot(sim, la, lb, row_dot(sim, sim.row[la], sim.row[lb]))
    return weighted_similarity(sim, la, lb, sigma)


cdef bint tree_deltas(Workspace* ws, const Settings* prm, const TreeView* a, const Fixed* f,
                      const Against* against, const long long* node_dot) noexcept nogil:
    """Delta of every query node with every index node of its range, children first, each
    added to ``fixed_sum`` of its index node when K sums them (Zelenko's K is the roots'
    value: their similarities are kept instead); False if out of memory."""
    cdef const Similarity* sim = prm.similarity
    cdef const double* w = sim.label_weight if sim != NULL else NULL
    cdef const double* dot_row
    cdef int na = a.n, x, u, t, start, la, lb, last, i_smooth = a.n_smooth - 1
    cdef long long base, n_pairs
    cdef double d, weight, sigma = 0.0
    cdef bint smoothed, leaf_x, leaf
    if not reserve_nodes(ws, na):
        return False
    n_pairs = match_ranges(ws, prm, f, na, a.key, a.label)
    if not (reserve(<void**>&ws.delta, &ws.pair_capacity, n_pairs, sizeof(double))
            and reserve_zeroed(&ws.fixed_sum, &ws.fixed_capacity, f.n_nodes)):
        return False
    if not prm.sums_of_deltas and not reserve(<void**>&ws.pair_sim, &ws.sim_capacity, n_pairs, sizeof(double)):
        return False
    for x in range(na - 1, -1, -1):
        base = ws.pair_start[x]
        start = ws.group_start[x]
        la = a.label[x]
        leaf_x = is_leaf(a, x)
        smoothed = False
        dot_row = NULL
        if f.rule == BY_KEY_OR_GROUP and i_smooth >= 0 and a.smooth[i_smooth] == x:
            smoothed = True
            if node_dot != NULL and node_dot[i_smooth] >= 0:
                dot_row = against.dots + node_dot[i_smooth]
            i_smooth -= 1
        last = -1
        for t in range(ws.group_len[x]):
            u = start + t
            lb = f.label[u]
            if prm.smoothed:
                if lb != last:  # sigma once per run of equal labels
                    last = lb
                    if smoothed:
                        sigma = smoothed_sigma(sim, la, lb, f.vector_slot[u], dot_row)
                    else:
                        sigma = sim.label_weight[la] * sim.label_weight[lb]
                leaf = leaf_x or fixed_leaf(f, u)
                if sigma == 0.0:
                    d = 0.0
                else:
                    d = partial_value(prm, sigma, leaf, 0.0 if leaf else child_subsequences(ws, prm, a, f, x, u))
            elif not prm.sums_of_deltas:  # Zelenko
                if lb != last:
                    last = lb
                    sigma = tuple_similarity(prm.tuples, la, lb)
                ws.pair_sim[base + t] = sigma
                d = sigma * (sigma + zelenko_children(ws, prm, a, f, x, u)) if sigma != 0.0 else 0.0
            else:
                weight = w[la] * w[lb] if w != NULL else 1.0  # label weights w(x) w(y)
                if not prm.aligned:
                    leaf = leaf_x or fixed_leaf(f, u)
                    d = partial_value(prm, weight, leaf, 0.0 if leaf else child_subsequences(ws, prm, a, f, x, u))
                else:
                    d = production_delta(ws, prm, a, f, x, u) * weight
            if ws.failed or not tick(ws, 1):
                return False
            ws.delta[base + t] = d
            if prm.sums_of_deltas:
                ws.fixed_sum[u] += d
    return True


cdef void scatter(Workspace* ws, const Fixed* f, int na, double* out) noexcept nogil:
    """out[j] += c_j(u) * S(u) for every index node u in some query node's range (each
    once: S(u) is reset to 0 when scattered)."""
    cdef int x, u, end
    cdef long long k
    cdef double s
    for x in range(na):
        end = ws.group_start[x] + ws.group_len[x]
        for u in range(ws.group_start[x], end):
            s = ws.fixed_sum[u]
            if s != 0.0:
                for k in range(f.occurrence_ptr[u], f.occurrence_ptr[u + 1]):
                    out[f.occurrence_structure[k]] += f.occurrence_count[k] * s
                ws.fixed_sum[u] = 0.0


cdef double zelenko_children(Workspace* ws, const Settings* prm, const TreeView* a, const Fixed* f,
                             int x, int u) noexcept nogil:
    """The child term of Zelenko's kernel for the pair (x, u) (``_workspace.zelenko_row``),
    k and K of a child pair looked up in the query child's range (k = 0 outside)."""
    cdef int pa = a.child_ptr[x], pu = f.child_ptr[u]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int m = f.child_ptr[u + 1] - pu
    cdef double* prev_a = subsequence_rows(ws, 6, m)
    if prev_a == NULL:
        return 0.0
    cdef double* cur_a = prev_a + (m + 1)
    cdef double* prev_b = prev_a + 2 * (m + 1)
    cdef double* cur_b = prev_a + 3 * (m + 1)
    cdef double* k = prev_a + 4 * (m + 1)
    cdef double* K = prev_a + 5 * (m + 1)
    cdef double* swap
    cdef double total = 0.0
    cdef int i, j, ca
    cdef unsigned int t
    cdef long long p
    for j in range(m + 1):
        prev_b[j] = 0.0
    for i in range(n):
        ca = a.child_idx[pa + i]
        for j in range(m):
            t = <unsigned int>(f.child_idx[pu + j] - ws.group_start[ca])
            k[j] = 0.0
            K[j] = 0.0
            if t < <unsigned int>ws.group_len[ca]:
                p = ws.pair_start[ca] + t
                k[j] = ws.pair_sim[p]
                K[j] = ws.delta[p]
        total = zelenko_row(k, K, prev_a, cur_a, prev_b, cur_b, m, prm.lam, prm.lam2, total)
        swap = prev_a
        prev_a = cur_a
        cur_a = swap
        swap = prev_b
        prev_b = cur_b
        cur_b = swap
        if not tick(ws, 2 * (m + 1)):
            return 0.0
    return total


cdef bint tree_row(Workspace* ws, const Settings* prm, const TreeView* a, const Against* against,
                   const long long* node_dot, double* out) noexcept nogil:
    """K(a, B_j) for every fixed tree j added into ``out``; False if out of memory."""
    cdef const Fixed* f = against.fixed
    cdef int j
    cdef unsigned int t
    if not tree_deltas(ws, prm, a, f, against, node_dot):
        return False
    if prm.sums_of_deltas:
        scatter(ws, f, a.n, out)
        return True
    for j in range(f.n_structures):  # the pair of roots
        t = <unsigned int>(f.root[j] - ws.group_start[0])
        if t < <unsigned int>ws.group_len[0]:
            out[j] += ws.delta[ws.pair_start[0] + t]
    return True


cdef void shared_feature_counts(const TupleSimilarity* t, int a, const Fixed* f, int start, int length,
                                double* out) noexcept nogil:
    """The tuple similarities w(e)^2 * |F_a & F_u| of the query label ``a`` (a set of
    features) with the index nodes ``start .. start + length - 1`` (its bucket: same edge,
    featured nodes), into ``out``: each shared feature counted through the fixed set's
    postings, so an index node sharing nothing costs nothing; equal to ``tuple_similarity``."""
    cdef const Similarity* s = t.nodes
    cdef const int* features = s.features + <long long>t.node[a] * s.feature_width
    cdef double w = t.weight[t.edge[a]]
    cdef int k, b, u
    cdef long long p
    cdef unsigned int r
    for u in range(length):
        out[u] = 0.0
    for k in range(s.feature_width):
        if features[k] < 0:
            break
        b = find_feature(f, features[k])
        if b < 0:
            continue
        for p in range(f.feature_ptr[b], f.feature_ptr[b + 1]):
            r = <unsigned int>(f.feature_node[p] - start)
            if r < <unsigned int>length:
                out[r] += 1.0
    for u in range(length):
        if out[u] != 0.0:
            out[u] = w * w * out[u]


cdef enum:
    MAX_PREFIX_ROWS = 1 << 23  # doubles (64 MB) of a query's kept rows beyond which they are not kept


cdef bint path_row(Workspace* ws, const Settings* prm, const int* a, int n, const Fixed* f, Py_ssize_t first,
                   int shared, double* out) noexcept nogil:
    """The subsequence path kernel of the path ``a`` (n tuple labels) against every fixed
    path from ``first`` on, added into ``out``: the tuple similarities of a's positions with
    the fixed set's distinct labels of their buckets first, then the dynamic programme of
    ``_tuple_kernels.path_kernel`` per fixed path, with lookups; False if out of memory.

    The rows of every depth i (the partial sums after a's first i positions, and the
    total so far) are kept in the workspace for every fixed path from ``first`` on, and a
    path whose first ``shared`` positions are those of the workspace's last one, computed
    from a ``first`` no larger, starts at row ``shared``: the rows of a prefix are the same
    whatever follows it, so the values are those of the whole programme, bit for bit
    (``_driver.gram_against`` orders the queries: a batch of candidate paths from the same
    triggers computes about half of its rows)."""
    cdef int i, u, m, start
    cdef Py_ssize_t j, n_fixed = f.n_structures
    cdef long long n_pairs, o, width = f.path_offset[f.n_structures] + f.n_structures  # m + 1 per fixed path
    cdef bint keep = (n + 1) * width <= MAX_PREFIX_ROWS
    cdef IndexRanges fixed_path
    cdef double total
    cdef double* row
    start = shared if keep and ws.prefix_kept else 0
    ws.prefix_kept = False
    if not reserve_nodes(ws, n):
        return False
    n_pairs = match_ranges(ws, prm, f, n, a, a)
    if not reserve(<void**>&ws.pair_sim, &ws.sim_capacity, n_pairs, sizeof(double)):
        return False
    for i in range(start, n):
        if prm.tuples.nodes.kind[prm.tuples.node[a[i]]] == SHARED_FEATURES:
            shared_feature_counts(prm.tuples, a[i], f, ws.group_start[i], ws.group_len[i],
                                  ws.pair_sim + ws.pair_start[i])
        else:
            for u in range(ws.group_len[i]):
                ws.pair_sim[ws.pair_start[i] + u] = tuple_similarity(prm.tuples, a[i],
                                                                     f.label[ws.group_start[i] + u])
        if not tick(ws, 1 + 2 * <long long>ws.group_len[i]):
            return False
    if not keep:
        for j in range(first, n_fixed):
            o = f.path_offset[j]
            fixed_path = IndexRanges(NULL, f.path_node + o, ws.pair_sim)
            out[j] += child_sum(ws, &fixed_path, n, <int>(f.path_offset[j + 1] - o), prm.lam, prm.lam2)
            if ws.failed:
                return False
        return True
    if not (reserve(<void**>&ws.prefix_rows, &ws.prefix_capacity, (n + 1) * width, sizeof(double))
            and reserve(<void**>&ws.prefix_totals, &ws.prefix_total_capacity, (n + 1) * n_fixed, sizeof(double))):
        return False
    if start == 0:  # the rows before the first position: 0
        memset(ws.prefix_rows, 0, width * sizeof(double))
        memset(ws.prefix_totals, 0, n_fixed * sizeof(double))
    for j in range(first, n_fixed):
        o = f.path_offset[j]
        m = <int>(f.path_offset[j + 1] - o)
        fixed_path = IndexRanges(NULL, f.path_node + o, ws.pair_sim)
        if not reserve(<void**>&ws.rows, &ws.row_capacity, m, sizeof(double)):
            return False
        row = ws.prefix_rows + o + j  # path j's row of depth 0; depth i is i * width further
        total = ws.prefix_totals[start * n_fixed + j]
        for i in range(start, n):
            fill_row(ws, &fixed_path, i, ws.rows, m)
            total = subsequence_row(ws.rows, row + i * width, row + (i + 1) * width, m, prm.lam, prm.lam2, total)
            ws.prefix_totals[(i + 1) * n_fixed + j] = total
            if not tick(ws, 2 * (m + 1)):
                return False
        out[j] += total
    ws.prefix_kept = True
    return True


cdef bint forest_row(Workspace* ws, const Settings* prm, const ForestView* a, const Packed* forests,
                     int n_forests, double* out) noexcept nogil:
    """The forest kernel of ``a`` against every fixed forest, added into ``out``: the plain
    recursion (``_forest_kernels.forest_kernel``) once per fixed forest; False if out of memory."""
    cdef ForestView b
    cdef int j
    cdef double value
    for j in range(n_forests):
        b = forest_view(forests, j)
        value = forest_kernel(ws, prm, a, &b)
        if ws.failed:
            return False
        out[j] += value
    return True


cdef bint one_against_many(Workspace* ws, const Settings* prm, const Packed* A, Py_ssize_t r,
                           const Against* against, Py_ssize_t first, int shared, double* out) noexcept nogil:
    """Unnormalized K(A[r], B_j) for every structure j of the fixed set (for paths, from j =
    ``first`` on: the upper triangle of a symmetric Gram; the other kinds need 0), added into
    ``out`` (zeroed by the caller); a path whose first ``shared`` positions are those of the
    last path this workspace computed starts after them (``path_row``); False (and
    ``ws.failed``) if out of memory."""
    cdef TreeView va
    cdef ForestView fa
    cdef long long o
    cdef bint ok
    if prm.family == FOREST:
        fa = forest_view(A, r)
        ok = forest_row(ws, prm, &fa, against.forests, against.fixed.n_structures, out)
    elif prm.family == PATH:
        o = A.node_offset[r]
        ok = path_row(ws, prm, A.label + o, <int>(A.node_offset[r + 1] - o), against.fixed, first, shared, out)
    else:
        va = tree_view(A, r)
        ok = tree_row(ws, prm, &va, against,
                      against.node_dot + A.smooth_offset[r] if against.node_dot != NULL else NULL, out)
    if not ok:
        ws.failed = True
    return ok
