# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The tree kernels ST, SST, PTK and the smoothed SPTK on one pair of packed trees.

For one pair the engine

1. merges the two node lists sorted by match key (production id for ST/SST, label
   content id for PTK) to enumerate the node pairs that can match (Moschitti 2006,
   "fast tree kernel");
2. evaluates Delta on those pairs bottom-up, in decreasing preorder index of the first
   tree, so the Delta of every child pair is known before its parents need it: no
   recursion, any depth;
3. sums the Deltas.

Delta values live in one array of the matching pairs: pairs are grouped by node of the
first tree, and inside a group ordered like the second tree's sorted node list, so the
pair (x, y) sits at ``pair_start[x] + rank_b[y] - group_start[x]``.

SPTK pairs also come from a node similarity (lexical or compositional, see
:class:`NodeSimilarity`): a node of the first tree pairs with the nodes of the second
whose similarity reaches the threshold, and each node's partners are kept sorted, so a
child pair is found by walking the list. The child-subsequence sums use the rolling rows
of ``_workspace.pxd``: O(m) doubles per sum, never the n x m grid.
"""
from ._packing cimport is_leaf
from ._settings cimport PARTIAL_TREE, SUBSET_TREE, SUBTREE_TEXTBOOK
from ._tables cimport EXACT, Similarity, node_similarity
from ._workspace cimport SubsequenceSum, add_row, reserve, reserve_nodes, start_sum, tick


cdef inline double child_delta(const Workspace* ws, const TreeView* b, int x, int y) noexcept nogil:
    """Delta of the pair (x, y), which must share a match key and be evaluated already."""
    return ws.delta[ws.pair_start[x] + b.rank[y] - ws.group_start[x]]


cdef double production_delta(const Workspace* ws, const Settings* prm,
                             const TreeView* a, const TreeView* b, int x, int y) noexcept nogil:
    """ST/SST Delta of two nodes with equal productions (so equal child labels).

    Delta = lam * prod_k f(c_xk, c_yk) over aligned children, where

    - SST (``sigma = 1``): f = 1 + Delta if both children are internal with equal
      productions, else 1 (a leaf child, or an internal child whose production differs,
      ends the fragment there);
    - ST, KeLP's SubTreeKernel: f = Delta if both are internal with equal productions,
      else 1;
    - ST, textbook: f = 1 if both children are leaves, else Delta (0 when the
      productions differ).
    """
    cdef int pa = a.child_ptr[x], pb = b.child_ptr[y]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int k, ca, cb
    cdef bint leaf_a, leaf_b
    cdef double prod = 1.0
    if b.child_ptr[y + 1] - pb != n:  # production ids of two different interners: no match
        return 0.0
    for k in range(n):
        ca = a.child_idx[pa + k]
        cb = b.child_idx[pb + k]
        leaf_a = is_leaf(a, ca)
        leaf_b = is_leaf(b, cb)
        if prm.kind == SUBTREE_TEXTBOOK:
            if leaf_a and leaf_b:
                continue
            if a.key[ca] != b.key[cb]:
                return 0.0
            prod *= child_delta(ws, b, ca, cb)
        elif not leaf_a and not leaf_b and a.key[ca] == b.key[cb]:
            if prm.kind == SUBSET_TREE:
                prod *= 1.0 + child_delta(ws, b, ca, cb)
            else:
                prod *= child_delta(ws, b, ca, cb)
    return prm.lam * prod


cdef double partial_delta(Workspace* ws, const Settings* prm,
                          const TreeView* a, const TreeView* b, int x, int y) noexcept nogil:
    """PTK Delta of two nodes with equal label contents (Moschitti 2006, KeLP conventions).

    A leaf on either side: mu * lam^2 * terminal_factor. Otherwise
    mu * (lam^2 + sum over pairs of equal-length child subsequences J1, J2 of
    lam^(gaps(J1) + gaps(J2)) * prod_k Delta(c_x[J1k], c_y[J2k])), gaps = children skipped
    between the first and last chosen child. The sum over all lengths is one O(n*m)
    dynamic programme (:c:type:`SubsequenceSum`): D[i][j] = Delta(c_xi, c_yj) *
    (1 + P[i-1][j-1]) for the subsequences ending at (i, j), P[i][j] =
    sum_{i'<=i, j'<=j} D[i'][j'] lam^(i-i'+j-j'), computed row by row with the child
    Deltas of row i looked up just before it: three rows of m + 1 doubles, whatever n.
    """
    if is_leaf(a, x) or is_leaf(b, y):
        return prm.mu * prm.lam2 * prm.terminal_factor
    cdef int pa = a.child_ptr[x], pb = b.child_ptr[y]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int m = b.child_ptr[y + 1] - pb
    cdef SubsequenceSum rows
    if not start_sum(ws, &rows, m):
        return 0.0
    cdef int i, j, ca, cb
    for i in range(n):
        ca = a.child_idx[pa + i]
        for j in range(m):
            cb = b.child_idx[pb + j]
            rows.v[j] = child_delta(ws, b, ca, cb) if a.key[ca] == b.key[cb] else 0.0
        add_row(&rows, prm.lam, 1.0)
        if not tick(ws, m + 1):
            return 0.0
    return prm.mu * (prm.lam2 + rows.total)


cdef inline long long match_groups(Workspace* ws, const TreeView* a, const TreeView* b,
                                   const Similarity* smoothing) noexcept nogil:
    """Merge the two node lists sorted by key: for each node x of ``a``, the run of nodes of
    ``b`` with its key is ``b.order[group_start[x] : group_start[x] + group_len[x]]`` and its
    pairs start at ``pair_start[x]``; nodes whose label ``smoothing`` smooths are left out
    (group_len 0). Returns the number of pairs; ``reserve_nodes`` must have been called."""
    cdef int na = a.n, nb = b.n
    cdef int i = 0, j = 0, j_end, x, key
    cdef long long n_pairs = 0
    for x in range(na):
        ws.group_len[x] = 0
    while i < na and j < nb:
        key = a.key[a.order[i]]
        if key < b.key[b.order[j]]:
            i += 1
        elif key > b.key[b.order[j]]:
            j += 1
        else:
            j_end = j + 1
            while j_end < nb and b.key[b.order[j_end]] == key:
                j_end += 1
            while i < na and a.key[a.order[i]] == key:
                x = a.order[i]
                if smoothing == NULL or smoothing.kind[a.label[x]] == EXACT:
                    ws.group_start[x] = j
                    ws.group_len[x] = j_end - j
                    ws.pair_start[x] = n_pairs
                    n_pairs += j_end - j
                i += 1
            j = j_end
    return n_pairs


cdef double tree_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b) noexcept nogil:
    """Unnormalized K(a, b) = sum of Delta over node pairs with equal match keys, each
    Delta times w(x) w(y) when a table of label weights w is given (out of
    memory: ``failed`` set)."""
    cdef int na = a.n, node, t, other
    cdef long long n_pairs, base
    cdef double total = 0.0, d
    cdef const double* w = prm.similarity.label_weight if prm.similarity != NULL else NULL
    if not reserve_nodes(ws, na):
        ws.failed = True
        return 0.0
    n_pairs = match_groups(ws, a, b, NULL)
    if n_pairs == 0:
        return 0.0
    if not reserve(<void**>&ws.delta, &ws.pair_capacity, n_pairs, sizeof(double)):
        ws.failed = True
        return 0.0
    for node in range(na - 1, -1, -1):
        base = ws.pair_start[node]
        for t in range(ws.group_len[node]):
            other = b.order[ws.group_start[node] + t]
            if prm.kind == PARTIAL_TREE:
                d = partial_delta(ws, prm, a, b, node, other)
            else:
                d = production_delta(ws, prm, a, b, node, other)
            if w != NULL:  # label weights w(x) w(y)
                d *= w[a.label[node]] * w[b.label[other]]
            if ws.failed or not tick(ws, 1):
                return 0.0
            ws.delta[base + t] = d
            total += d
    return total


cdef double smoothed_subsequences(Workspace* ws, const Settings* prm,
                                  const TreeView* a, const TreeView* b, int x, int y) noexcept nogil:
    """The child-subsequence sum of PTK for the SPTK pair (x, y), row by row
    (:c:type:`SubsequenceSum`, memory O(m)); the Delta of a child pair is found by walking
    the first child's partner list, which is sorted like the second tree's nodes."""
    cdef int pa = a.child_ptr[x], pb = b.child_ptr[y]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int m = b.child_ptr[y + 1] - pb
    cdef SubsequenceSum rows
    if not start_sum(ws, &rows, m):
        return 0.0
    cdef int i, j, ca, cb
    cdef long long k, end
    for i in range(n):
        ca = a.child_idx[pa + i]
        k = ws.pair_start[ca]
        end = k + ws.group_len[ca]
        for j in range(m):
            cb = b.child_idx[pb + j]
            while k < end and ws.partner[k] < cb:
                k += 1
            rows.v[j] = ws.delta[k] if k < end and ws.partner[k] == cb else 0.0
        add_row(&rows, prm.lam, 1.0)
        if not tick(ws, m + 1):
            return 0.0
    return rows.total


cdef double smoothed_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b) noexcept nogil:
    """Unnormalized SPTK (Croce et al. 2011, eq. 1; KeLP's SmoothedPartialTreeKernel):
    sum over node pairs with sigma(x, y) >= threshold of

        Delta(x, y) = mu * lam^2 * terminal_factor * sigma(x, y)        if x or y is a leaf,
        Delta(x, y) = mu * sigma(x, y) * (lam^2 + child-subsequence sum)  otherwise.

    Nodes of exact kind pair with equal keys (found by the merge); the others with every
    node of the other tree whose similarity reaches the threshold (out of memory:
    ``failed`` set)."""
    cdef const Similarity* sim = prm.similarity
    cdef int na = a.n, i, x, y, t, u
    cdef long long n_pairs, bound, k, base
    cdef double total = 0.0, d, sigma
    if not reserve_nodes(ws, na):
        ws.failed = True
        return 0.0
    n_pairs = match_groups(ws, a, b, sim)  # exact partners: equal keys
    bound = n_pairs + <long long>a.n_smooth * b.n_smooth
    if bound == 0:
        return 0.0
    if not (reserve(<void**>&ws.partner, &ws.partner_capacity, bound, sizeof(int))
            and reserve(<void**>&ws.pair_sim, &ws.sim_capacity, bound, sizeof(double))
            and reserve(<void**>&ws.delta, &ws.pair_capacity, bound, sizeof(double))):
        ws.failed = True
        return 0.0
    k = 0
    for x in range(na):  # label weights: w(x) * sigma(x, y) * w(y)
        if ws.group_len[x]:
            ws.pair_start[x] = k
            for t in range(ws.group_len[x]):
                y = b.order[ws.group_start[x] + t]
                sigma = sim.label_weight[a.label[x]] * sim.label_weight[b.label[y]]
                if sigma != 0.0:
                    ws.partner[k] = y
                    ws.pair_sim[k] = sigma
                    k += 1
            ws.group_len[x] = <int>(k - ws.pair_start[x])
    for i in range(a.n_smooth):  # smoothed partners: similar labels
        x = a.smooth[i]
        ws.pair_start[x] = k
        for u in range(b.n_smooth):
            y = b.smooth[u]
            sigma = node_similarity(sim, a.label[x], b.label[y])
            if sigma >= sim.threshold and sigma > 0.0:
                sigma *= sim.label_weight[a.label[x]] * sim.label_weight[b.label[y]]
                if sigma != 0.0:
                    ws.partner[k] = y
                    ws.pair_sim[k] = sigma
                    k += 1
        ws.group_len[x] = <int>(k - ws.pair_start[x])
        if not tick(ws, 1 + b.n_smooth * (1 + sim.dim // 4)):
            return 0.0
    for x in range(na - 1, -1, -1):  # children before parents
        base = ws.pair_start[x]
        for t in range(ws.group_len[x]):
            y = ws.partner[base + t]
            sigma = ws.pair_sim[base + t]
            if is_leaf(a, x) or is_leaf(b, y):
                d = prm.mu * prm.lam2 * prm.terminal_factor * sigma
            else:
                d = prm.mu * sigma * (prm.lam2 + smoothed_subsequences(ws, prm, a, b, x, y))
            if ws.failed or not tick(ws, 1):
                return 0.0
            ws.delta[base + t] = d
            total += d
    return total
