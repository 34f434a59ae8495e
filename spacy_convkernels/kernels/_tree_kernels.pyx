# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The tree kernels ST, SST, PTK and the smoothed SPTK on one pair of packed trees.

K(a, b) is the sum of Delta over the node pairs that match (equal match keys: production
id for ST/SST, label content id for PTK; for SPTK also the pairs of smoothed nodes whose
similarity reaches the threshold). Two ways to evaluate it, the same values up to rounding:

**Stored** (when at most ``stored_pairs`` node pairs match, 2**21 by default: every
pair of ordinary trees). The engine merges the two node lists sorted by match key to
enumerate the matching pairs (Moschitti 2006, "fast tree kernel") and evaluates Delta on
them bottom-up, in decreasing preorder index of the first tree, so the Delta of every
child pair is known before its parents need it (no recursion, any depth); one array holds
the Deltas: pairs grouped by node of the first tree, inside a group ordered like the
second tree's sorted node list, so the pair (x, y) sits at ``pair_start[x] + rank_b[y] -
group_start[x]``. SPTK's smoothed nodes pair with the nodes of the other tree whose
similarity reaches the threshold, each node's partners kept sorted, so a child pair is
found by walking the list.

**Top-down** (more matching pairs: wide nodes whose children repeat labels, where a root
with 20,000 children holds 400 million matching pairs of grandchildren). The engine

1. sums the pairs in which a leaf takes part without visiting them one by one: their
   Delta is a constant times the pair's factor (label weights w(x) w(y), or SPTK's
   w(x) sigma(x, y) w(y)), so a merge of the two node lists sorted by key gives, per key,
   the sums of the factors of leaves and of inner nodes on either side (SPTK's smoothed
   nodes: per pair of distinct labels, their similarity times the counts);
2. evaluates Delta of the pairs of inner nodes top-down, from the pairs whose parents do
   not match (or that hold a root): a pair reads the Deltas of its child pairs (PTK, SPTK:
   every matching child pair, in the child-subsequence sum; ST/SST: the aligned ones),
   evaluating each one when it reads it, on an explicit stack of frames (no C recursion,
   any depth; PTK, SPTK: ``_top_down.pxd``). Every pair of inner nodes has one pair of
   parents, so each Delta is evaluated once, either there or as a pair of its own, and
   added to K.

   Memory is one frame per level of the pair being evaluated, each with the rolling rows
   of its child-subsequence sum (``_workspace.pxd``): O(depth * children), however many
   node pairs match. SPTK's similarities of the distinct smoothed labels of the two trees
   are computed once per pair of labels, and kept when there are at most ``SIGMA_CACHE``
   such pairs (otherwise computed again where needed, in bounded memory).

Either way the child-subsequence sums use the rolling rows of ``_workspace.pxd``: O(m)
doubles per sum, never the n x m grid.
"""
from libc.stdlib cimport qsort

from ._children cimport PartnerLists, StoredPairs, child_sum, production_delta
from ._deltas cimport partial_value, production_factor
from ._merge cimport KeysInOrder, Run, SortedKeys, next_run
from ._packing cimport is_leaf, n_children
from ._tables cimport EXACT, Similarity, node_similarity, weighted_similarity
from ._top_down cimport Pairing, pair_factor, smoothed_factor, top_down
from ._workspace cimport Frame, push_frame, reserve, reserve_nodes, scratch_ints, tick


cdef enum:
    SIGMA_CACHE = 1 << 20  # SPTK: at most this many similarities of pairs of distinct smoothed labels are kept

cdef long long stored_pairs = 1 << 21  # more matching node pairs than this: top-down (16-40 MB of Deltas per thread)


def set_stored_pairs(long long n):
    """Evaluate pairs of trees with more than ``n`` matching node pairs top-down (the
    module); returns the previous bound. For tests: ``0`` sends every pair top-down."""
    global stored_pairs
    previous = stored_pairs
    stored_pairs = n
    return previous


cdef inline long long match_groups(Workspace* ws, const TreeView* a, const TreeView* b,
                                   const Similarity* smoothing) noexcept nogil:
    """Merge the two node lists sorted by key: for each node x of ``a``, the run of nodes of
    ``b`` with its key is ``b.order[group_start[x] : group_start[x] + group_len[x]]`` and its
    pairs start at ``pair_start[x]``; nodes whose label ``smoothing`` smooths are left out
    (group_len 0). Returns the number of pairs; ``reserve_nodes`` must have been called."""
    cdef SortedKeys key_a = SortedKeys(a.sorted_key), key_b = SortedKeys(b.sorted_key)
    cdef Run run = Run(0, 0, 0, 0)
    cdef int i, x
    cdef long long n_pairs = 0
    for x in range(a.n):
        ws.group_len[x] = 0
    while next_run(&key_a, a.n, &key_b, b.n, &run):
        for i in range(run.i, run.i_end):
            x = a.order[i]
            if smoothing == NULL or smoothing.kind[a.label[x]] == EXACT:
                ws.group_start[x] = run.j
                ws.group_len[x] = run.j_end - run.j
                ws.pair_start[x] = n_pairs
                n_pairs += run.j_end - run.j
    return n_pairs


cdef double stored_tree_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b,
                               long long n_pairs) noexcept nogil:
    """Unnormalized K(a, b) = sum of Delta over node pairs with equal match keys, each
    Delta times w(x) w(y) when a table of label weights w is given, the Deltas of the
    ``n_pairs`` matching pairs (:func:`match_groups`, called before) stored (the module;
    out of memory: ``failed`` set)."""
    cdef int na = a.n, node, t, other, n_partners
    cdef long long base
    cdef double total = 0.0, d, f
    cdef bint leaf, partial = not prm.aligned
    cdef const int* partners
    cdef StoredPairs children
    cdef const double* w = prm.similarity.label_weight if prm.similarity != NULL else NULL
    if n_pairs == 0:
        return 0.0
    if not reserve(<void**>&ws.delta, &ws.pair_capacity, n_pairs, sizeof(double)):
        ws.failed = True
        return 0.0
    for node in range(na - 1, -1, -1):
        n_partners = ws.group_len[node]
        if n_partners == 0:
            continue
        base = ws.pair_start[node]
        partners = b.order + ws.group_start[node]
        for t in range(n_partners):
            other = partners[t]
            f = w[a.label[node]] * w[b.label[other]] if w != NULL else 1.0  # label weights w(x) w(y)
            if partial:
                leaf = is_leaf(a, node) or is_leaf(b, other)
                if not leaf:  # the child-subsequence sum of PTK's Delta (``_deltas.partial_value``)
                    children = StoredPairs(a, b, a.child_idx + a.child_ptr[node], b.child_idx + b.child_ptr[other])
                d = partial_value(prm, f, leaf, 0.0 if leaf else child_sum(ws, &children, n_children(a, node),
                                                                           n_children(b, other), prm.lam, 1.0))
                if ws.failed:
                    return 0.0
            else:
                d = production_delta(ws, prm, a, b, node, other) * f
            ws.delta[base + t] = d
            total += d
        if not tick(ws, <long long>n_partners * (1 + n_children(a, node))):  # pairs, and the children they read
            return 0.0
    return total


cdef double stored_smoothed_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b,
                                   long long n_pairs) noexcept nogil:
    """Unnormalized SPTK (Croce et al. 2011, eq. 1; KeLP's SmoothedPartialTreeKernel):
    sum over node pairs with sigma(x, y) >= threshold of

        Delta(x, y) = mu * lam^2 * terminal_factor * sigma(x, y)        if x or y is a leaf,
        Delta(x, y) = mu * sigma(x, y) * (lam^2 + child-subsequence sum)  otherwise.

    Nodes of exact kind pair with equal keys (the ``n_pairs`` found by
    :func:`match_groups`, called before); the others with every node of the other tree
    whose similarity reaches the threshold (out of memory: ``failed`` set)."""
    cdef const Similarity* sim = prm.similarity
    cdef int na = a.n, i, x, y, t, u
    cdef long long bound, k, base
    cdef double total = 0.0, d, sigma
    cdef bint leaf
    cdef PartnerLists children
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
            sigma = weighted_similarity(sim, a.label[x], b.label[y], node_similarity(sim, a.label[x], b.label[y]))
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
            leaf = is_leaf(a, x) or is_leaf(b, y)
            if not leaf:  # a child pair's Delta is found by walking the first child's partner list
                children = PartnerLists(a.child_idx + a.child_ptr[x], b.child_idx + b.child_ptr[y])
            d = partial_value(prm, sigma, leaf, 0.0 if leaf else child_sum(ws, &children, n_children(a, x),
                                                                           n_children(b, y), prm.lam, 1.0))
            if ws.failed or not tick(ws, 1):
                return 0.0
            ws.delta[base + t] = d
            total += d
    return total


cdef inline bint read_by_parents(const Pairing* P, int x, int y, bint aligned) noexcept nogil:
    """Whether the Delta of the pair (x, y) of inner nodes is evaluated by the pair of their
    parents, which then reads it: the parents match (PTK, SPTK: every matching child pair
    is read) and, with ``aligned`` (ST, SST), x and y hold the same place under parents
    with as many children."""
    cdef int px = P.parent_a[x], py = P.parent_b[y]
    if px < 0 or py < 0:
        return False
    if aligned and (P.pos_a[x] != P.pos_b[y] or n_children(P.a, px) != n_children(P.b, py)):
        return False
    return pair_factor(P, px, py) != 0.0


cdef void set_parents(const TreeView* t, int* parent, int* pos) noexcept nogil:
    cdef int x, k
    parent[0] = -1
    pos[0] = 0
    for x in range(t.n):
        for k in range(t.child_ptr[x], t.child_ptr[x + 1]):
            parent[t.child_idx[k]] = x
            pos[t.child_idx[k]] = k - t.child_ptr[x]


cdef double production_pairs(Workspace* ws, const Pairing* P, int x0, int y0, double f0) noexcept nogil:
    """ST/SST: Delta(x0, y0) of two inner nodes with equal productions and factor f0 != 0,
    plus the Delta of every pair it reads, evaluated top-down (their sum). Delta is
    lam * w(x) w(y) * prod_k f(c_xk, c_yk) over aligned children
    (``_deltas.production_factor``).

    Different child counts (production ids of two different interners): Delta = 0, nothing
    read. Every read pair is evaluated, also after a factor 0, so that the pairs read are
    exactly those :func:`read_by_parents` names (out of memory or stopped: ``failed``)."""
    cdef const TreeView* a = P.a
    cdef const TreeView* b = P.b
    cdef const Settings* prm = P.prm
    cdef double total = 0.0, value = 0.0, f
    cdef Frame* fr
    cdef int depth, ca, cb, n
    cdef bint returned = False, pushed, leaf_a, leaf_b
    n = n_children(a, x0)
    if push_frame(ws, 0, x0, y0, n if n_children(b, y0) == n else 0, 0, 0, 0, f0) == NULL:
        return 0.0
    ws.frames[0].total = 1.0 if n_children(b, y0) == n else 0.0
    depth = 1
    while True:
        fr = ws.frames + depth - 1
        if returned:
            fr.total *= production_factor(prm, False, True, value)
            fr.i += 1
            returned = False
        pushed = False
        while fr.i < fr.n:
            ca = a.child_idx[a.child_ptr[fr.x] + fr.i]
            cb = b.child_idx[b.child_ptr[fr.y] + fr.i]
            leaf_a = is_leaf(a, ca)
            leaf_b = is_leaf(b, cb)
            if a.key[ca] == b.key[cb] and not leaf_a and not leaf_b:  # read Delta(ca, cb)
                f = pair_factor(P, ca, cb)
                if f != 0.0:
                    n = n_children(a, ca)
                    if push_frame(ws, depth, ca, cb, n if n_children(b, cb) == n else 0, 0, 0, 0, f) == NULL:
                        return 0.0
                    ws.frames[depth].total = 1.0 if n_children(b, cb) == n else 0.0
                    depth += 1
                    pushed = True
                    break
                fr.total *= production_factor(prm, False, True, 0.0)  # a label weight 0: Delta 0
            else:
                fr.total *= production_factor(prm, leaf_a and leaf_b, False, 0.0)
            fr.i += 1
        if pushed:
            continue
        if not tick(ws, 1 + fr.n):
            return 0.0
        value = (prm.lam * fr.total) * fr.factor
        total += value
        depth -= 1
        if depth == 0:
            return total
        returned = True


cdef inline double evaluate_pairs(Workspace* ws, const Pairing* P, int x, int y, double f) noexcept nogil:
    if not P.prm.aligned:
        return top_down(ws, P, x, y, f)
    return production_pairs(ws, P, x, y, f)


cdef double keyed_sums(Workspace* ws, const Pairing* P, int* inner_a, int* inner_b) noexcept nogil:
    """The pairs matched by key, whose node of ``a`` is exact (all of them but SPTK's
    smoothed nodes): the sum over the pairs with a leaf from the sums of their factors
    per key, plus the Deltas of the pairs of inner nodes evaluated from each pair whose
    parents do not read it (:func:`read_by_parents`). ``inner_a`` and ``inner_b`` are
    scratch for the inner nodes of either tree (out of memory or stopped: ``failed``)."""
    cdef const TreeView* a = P.a
    cdef const TreeView* b = P.b
    cdef const Settings* prm = P.prm
    cdef const double* w = P.w
    cdef bint partial = not prm.aligned
    cdef bint aligned = not partial
    cdef double leaf_value = partial_value(prm, 1.0, True, 0.0)  # a pair with a leaf, of factor 1
    cdef double total = 0.0, leaves_a, inner_sum_a, leaves_b, inner_sum_b, wx, f
    cdef int na = a.n, nb = b.n, i, j, x, y, n_inner_a = 0, n_inner_b = 0
    cdef SortedKeys key_a = SortedKeys(a.sorted_key), key_b = SortedKeys(b.sorted_key)
    cdef KeysInOrder inner_key_a = KeysInOrder(a.key, inner_a), inner_key_b = KeysInOrder(b.key, inner_b)
    cdef Run run = Run(0, 0, 0, 0)
    # leaves: per key, the sums of the factors of leaves and of inner nodes on either side
    while next_run(&key_a, na, &key_b, nb, &run):
        leaves_a = inner_sum_a = leaves_b = inner_sum_b = 0.0
        for i in range(run.i, run.i_end):
            x = a.order[i]
            if P.slot_a == NULL or P.slot_a[x] < 0:
                wx = w[a.label[x]] if w != NULL else 1.0
                if is_leaf(a, x):
                    leaves_a += wx
                else:
                    inner_sum_a += wx
        for j in range(run.j, run.j_end):
            y = b.order[j]
            wx = w[b.label[y]] if w != NULL else 1.0
            if is_leaf(b, y):
                leaves_b += wx
            else:
                inner_sum_b += wx
        if partial:
            total += leaf_value * (leaves_a * (leaves_b + inner_sum_b) + inner_sum_a * leaves_b)
        else:
            total += prm.lam * (leaves_a * leaves_b)  # ST, SST: a leaf matches leaves only
    if not tick(ws, na + nb):
        return 0.0
    # inner nodes, in key order
    for i in range(na):
        x = a.order[i]
        if not is_leaf(a, x) and (P.slot_a == NULL or P.slot_a[x] < 0):
            inner_a[n_inner_a] = x
            n_inner_a += 1
    for j in range(nb):
        y = b.order[j]
        if not is_leaf(b, y):
            inner_b[n_inner_b] = y
            n_inner_b += 1
    run = Run(0, 0, 0, 0)
    while next_run(&inner_key_a, n_inner_a, &inner_key_b, n_inner_b, &run):
        for i in range(run.i, run.i_end):
            x = inner_a[i]
            for j in range(run.j, run.j_end):
                y = inner_b[j]
                f = pair_factor(P, x, y)
                if f != 0.0 and not read_by_parents(P, x, y, aligned):
                    total += evaluate_pairs(ws, P, x, y, f)
                    if ws.failed:
                        return 0.0
            if not tick(ws, 1 + run.j_end - run.j):
                return 0.0
    return total


cdef double top_down_tree_kernel(Workspace* ws, const Settings* prm, const TreeView* a,
                                 const TreeView* b) noexcept nogil:
    """Unnormalized K(a, b) of ST, SST and PTK: the sum of Delta over node pairs with equal
    match keys, each Delta times w(x) w(y) when a table of label weights w is given (the
    module; out of memory or stopped: ``failed`` set)."""
    cdef Pairing P
    cdef int* ints
    P.prm = prm
    P.a = a
    P.b = b
    P.w = prm.similarity.label_weight if prm.similarity != NULL else NULL
    P.sim = NULL
    P.slot_a = P.slot_b = P.slot_label_a = P.slot_label_b = NULL
    P.cache = NULL
    P.n_slots_b = 0
    ws.row_top = 0
    ints = scratch_ints(ws, 3 * (<long long>a.n + b.n))
    if ints == NULL:
        return 0.0
    P.parent_a = ints
    P.pos_a = ints + a.n
    P.parent_b = ints + 2 * a.n
    P.pos_b = ints + 2 * a.n + b.n
    set_parents(a, <int*>P.parent_a, <int*>P.pos_a)
    set_parents(b, <int*>P.parent_b, <int*>P.pos_b)
    return keyed_sums(ws, &P, ints + 2 * (a.n + b.n), ints + 2 * (a.n + b.n) + a.n)


cdef int compare_keys(const void* p, const void* q) noexcept nogil:
    cdef long long u = (<const long long*>p)[0], v = (<const long long*>q)[0]
    return (u > v) - (u < v)


cdef int smoothed_slots(const TreeView* t, long long* sort_keys, int* slot, int* slot_label, int* leaves,
                        int* inner) noexcept nogil:
    """Slots of the distinct labels of the smoothed nodes of ``t`` (sorted by label): each
    node's slot (-1 for exact nodes), each slot's label and its numbers of leaves and of
    inner nodes. Returns the number of slots."""
    cdef int k, x, label, n_slots = 0
    for x in range(t.n):
        slot[x] = -1
    for k in range(t.n_smooth):
        x = t.smooth[k]
        sort_keys[k] = (<long long>t.label[x] << 32) | x
    qsort(sort_keys, t.n_smooth, sizeof(long long), compare_keys)
    for k in range(t.n_smooth):
        x = <int>(sort_keys[k] & 0xFFFFFFFFLL)
        label = <int>(sort_keys[k] >> 32)
        if n_slots == 0 or slot_label[n_slots - 1] != label:
            slot_label[n_slots] = label
            leaves[n_slots] = 0
            inner[n_slots] = 0
            n_slots += 1
        slot[x] = n_slots - 1
        if is_leaf(t, x):
            leaves[n_slots - 1] += 1
        else:
            inner[n_slots - 1] += 1
    return n_slots


cdef double top_down_smoothed_kernel(Workspace* ws, const Settings* prm, const TreeView* a,
                                     const TreeView* b) noexcept nogil:
    """Unnormalized SPTK (Croce et al. 2011, eq. 1; KeLP's SmoothedPartialTreeKernel):
    the sum over node pairs with w(x) sigma(x, y) w(y) != 0 of Delta (``_top_down.top_down``),
    sigma counted only from the threshold on. Exact nodes of ``a`` pair by key; smoothed
    nodes with the smoothed nodes of ``b`` by similarity, once per pair of distinct labels
    (the module; out of memory or stopped: ``failed`` set)."""
    cdef const Similarity* sim = prm.similarity
    cdef Pairing P
    cdef int* ints
    cdef int* ints_b
    cdef int* inner_a
    cdef int* inner_b
    cdef int* leaves_a
    cdef int* leaves_b
    cdef int* count_a
    cdef int* count_b
    cdef int na = a.n, nb = b.n, da, db, sa, sb, i, j, x, y, n_inner_a = 0, n_inner_b = 0
    cdef double total, f, leaf_value = partial_value(prm, 1.0, True, 0.0)
    cdef double* cache = NULL
    P.prm = prm
    P.a = a
    P.b = b
    P.w = sim.label_weight
    P.sim = sim
    ws.row_top = 0
    ints = scratch_ints(ws, 9 * (<long long>na + nb))
    if ints == NULL or not reserve_nodes(ws, na if na > nb else nb):
        ws.failed = True
        return 0.0
    # per node: parent, place, slot, then the inner nodes; per slot: label, leaves, inner nodes
    P.parent_a = ints
    P.pos_a = ints + na
    P.slot_a = ints + 2 * na
    inner_a = ints + 3 * na
    P.slot_label_a = ints + 4 * na
    leaves_a = ints + 5 * na
    count_a = ints + 6 * na
    ints_b = ints + 7 * na
    P.parent_b = ints_b
    P.pos_b = ints_b + nb
    P.slot_b = ints_b + 2 * nb
    inner_b = ints_b + 3 * nb
    P.slot_label_b = ints_b + 4 * nb
    leaves_b = ints_b + 5 * nb
    count_b = ints_b + 6 * nb
    set_parents(a, <int*>P.parent_a, <int*>P.pos_a)
    set_parents(b, <int*>P.parent_b, <int*>P.pos_b)
    da = smoothed_slots(a, ws.pair_start, <int*>P.slot_a, <int*>P.slot_label_a, leaves_a, count_a)
    db = smoothed_slots(b, ws.pair_start, <int*>P.slot_b, <int*>P.slot_label_b, leaves_b, count_b)
    P.n_slots_b = db
    P.cache = NULL
    if 0 < <long long>da * db <= SIGMA_CACHE:
        if not reserve(<void**>&ws.pair_sim, &ws.sim_capacity, <long long>da * db, sizeof(double)):
            ws.failed = True
            return 0.0
        cache = ws.pair_sim
        for sa in range(da):
            for sb in range(db):
                cache[sa * db + sb] = smoothed_factor(sim, P.slot_label_a[sa], P.slot_label_b[sb])
            if not tick(ws, 1 + db * (1 + sim.dim // 4)):
                return 0.0
        P.cache = cache
    # smoothed pairs with a leaf: per pair of labels, the factor times the pairs of nodes
    total = 0.0
    for sa in range(da):
        for sb in range(db):
            f = cache[sa * db + sb] if cache != NULL else smoothed_factor(sim, P.slot_label_a[sa], P.slot_label_b[sb])
            if f != 0.0:
                total += leaf_value * f * (<double>leaves_a[sa] * (<double>leaves_b[sb] + count_b[sb])
                                           + <double>count_a[sa] * leaves_b[sb])
        if not tick(ws, 1 + db * (1 if cache != NULL else 1 + sim.dim // 4)):
            return 0.0
    # smoothed pairs of inner nodes
    for i in range(a.n_smooth):
        x = a.smooth[i]
        if not is_leaf(a, x):
            inner_a[n_inner_a] = x
            n_inner_a += 1
    for j in range(b.n_smooth):
        y = b.smooth[j]
        if not is_leaf(b, y):
            inner_b[n_inner_b] = y
            n_inner_b += 1
    for i in range(n_inner_a):
        x = inner_a[i]
        for j in range(n_inner_b):
            y = inner_b[j]
            f = pair_factor(&P, x, y)
            if f != 0.0 and not read_by_parents(&P, x, y, False):
                total += top_down(ws, &P, x, y, f)
                if ws.failed:
                    return 0.0
        if not tick(ws, 1 + n_inner_b):
            return 0.0
    # exact nodes of a: by key
    return total + keyed_sums(ws, &P, inner_a, inner_b)


cdef double tree_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b) noexcept nogil:
    """Unnormalized K(a, b) of ST, SST and PTK: stored, or top-down beyond ``stored_pairs``
    matching node pairs (the module; out of memory or stopped: ``failed`` set)."""
    cdef long long n_pairs
    if not reserve_nodes(ws, a.n):
        ws.failed = True
        return 0.0
    n_pairs = match_groups(ws, a, b, NULL)
    if n_pairs <= stored_pairs:
        return stored_tree_kernel(ws, prm, a, b, n_pairs)
    return top_down_tree_kernel(ws, prm, a, b)


cdef double smoothed_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b) noexcept nogil:
    """Unnormalized SPTK: stored, or top-down when the exact matching pairs and the pairs of
    smoothed nodes may exceed ``stored_pairs`` (the module; ``failed`` as above)."""
    cdef long long n_pairs
    if not reserve_nodes(ws, a.n):
        ws.failed = True
        return 0.0
    n_pairs = match_groups(ws, a, b, prm.similarity)  # exact partners: equal keys
    if n_pairs + <long long>a.n_smooth * b.n_smooth <= stored_pairs:
        return stored_smoothed_kernel(ws, prm, a, b, n_pairs)
    return top_down_smoothed_kernel(ws, prm, a, b)


cdef bint delta_table(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b,
                      double* out) noexcept nogil:
    """Delta(x, y) of every node pair of ST, SST, PTK or SPTK into ``out[x * b.n + y]``
    (an a.n x b.n table, zeroed by the caller; pairs that do not match stay 0), Delta
    times the pair's factor as K sums it: by the stored evaluation (the module), whatever
    ``stored_pairs`` says, as the table is quadratic anyway. Summed, the table is K(a, b).
    False (``failed``) if out of memory or stopped."""
    cdef bint smoothed = prm.smoothed
    cdef long long n_pairs, k
    cdef int x, t, y
    if not reserve_nodes(ws, a.n):
        ws.failed = True
        return False
    n_pairs = match_groups(ws, a, b, prm.similarity if smoothed else NULL)
    if smoothed:
        stored_smoothed_kernel(ws, prm, a, b, n_pairs)
    else:
        stored_tree_kernel(ws, prm, a, b, n_pairs)
    if ws.failed:
        return False
    for x in range(a.n):
        for t in range(ws.group_len[x]):
            k = ws.pair_start[x] + t
            y = ws.partner[k] if smoothed else b.order[ws.group_start[x] + t]
            out[<long long>x * b.n + y] = ws.delta[k]
    return True
