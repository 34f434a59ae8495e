# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled engine of the tree kernels ST, SST and PTK.

Trees arrive packed (:class:`PackedTrees`): the compiled arrays of many trees
concatenated, nodes in preorder. For one pair of trees the engine

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

Everything below the Python entry points runs without the GIL; Gram blocks are spread
over threads with OpenMP, each thread owning one grow-only :c:type:`Workspace`.
"""
from cython.parallel cimport parallel, prange
from libc.stdlib cimport free, malloc, realloc

import numpy as np

from ..errors import KernelOverflowError

cpdef enum KernelKind:
    SUBTREE_KELP = 0
    SUBTREE_TEXTBOOK = 1
    SUBSET_TREE = 2
    PARTIAL_TREE = 3


cdef struct Params:
    int kind
    double lam
    double lam2
    double mu
    double terminal_factor


cdef struct Packed:
    const long long* node_offset
    const int* key
    const int* child_ptr
    const int* child_idx
    const int* order
    const int* rank


cdef struct TreeView:
    int n
    const int* key
    const int* child_ptr
    const int* child_idx
    const int* order
    const int* rank


cdef struct Workspace:
    int* group_start
    int* group_len
    long long* pair_start
    long long node_capacity
    double* delta
    long long pair_capacity
    double* rows
    long long row_capacity
    bint failed             # an allocation failed: the value being computed is void


cdef class PackedTrees:
    """Compiled trees concatenated for the engine, keyed by ``"production"`` or ``"content"``."""
    cdef readonly object node_offset, key, child_ptr, child_idx, order, rank
    cdef Packed packed
    cdef readonly Py_ssize_t n_trees

    def __init__(self, compiled_trees, str key):
        if key not in ("production", "content"):
            raise ValueError(f"unknown match key {key!r}")
        trees = list(compiled_trees)
        self.n_trees = len(trees)
        sizes = np.fromiter((t.n_nodes for t in trees), dtype=np.int64, count=len(trees))
        self.node_offset = np.zeros(len(trees) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.node_offset[1:])

        def cat(name):
            # a trailing 0 keeps every array non-empty (a collection of single nodes has no children)
            parts = [getattr(t, name) for t in trees] + [np.zeros(1, dtype=np.int32)]
            return np.ascontiguousarray(np.concatenate(parts), dtype=np.int32)

        self.key = cat(key + "s")
        self.child_ptr = cat("child_ptr")
        self.child_idx = cat("child_idx")
        self.order = cat("by_" + key)
        self.rank = cat("rank_by_" + key)
        cdef const long long[::1] offsets = self.node_offset
        cdef const int[::1] keys = self.key, ptr = self.child_ptr, idx = self.child_idx
        cdef const int[::1] order = self.order, rank = self.rank
        self.packed.node_offset = &offsets[0]
        self.packed.key = &keys[0]
        self.packed.child_ptr = &ptr[0]
        self.packed.child_idx = &idx[0]
        self.packed.order = &order[0]
        self.packed.rank = &rank[0]

    def __len__(self):
        return self.n_trees


cdef inline TreeView tree_view(const Packed* p, Py_ssize_t t) noexcept nogil:
    """Tree ``t`` of a packed collection: its own arrays, with local node indices."""
    cdef TreeView v
    cdef long long o = p.node_offset[t]
    v.n = <int>(p.node_offset[t + 1] - o)
    v.key = p.key + o
    v.child_ptr = p.child_ptr + o + t      # n + 1 offsets per tree
    v.child_idx = p.child_idx + o - t      # n - 1 children per tree
    v.order = p.order + o
    v.rank = p.rank + o
    return v


cdef Workspace* workspace_new() noexcept nogil:
    cdef Workspace* ws = <Workspace*>malloc(sizeof(Workspace))
    if ws != NULL:
        ws.group_start = NULL
        ws.group_len = NULL
        ws.pair_start = NULL
        ws.node_capacity = 0
        ws.delta = NULL
        ws.pair_capacity = 0
        ws.rows = NULL
        ws.row_capacity = 0
        ws.failed = False
    return ws


cdef void workspace_free(Workspace* ws) noexcept nogil:
    if ws != NULL:
        free(ws.group_start)
        free(ws.group_len)
        free(ws.pair_start)
        free(ws.delta)
        free(ws.rows)
        free(ws)


cdef inline long long grown(long long needed, long long capacity) noexcept nogil:
    cdef long long c = capacity if capacity > 64 else 64
    while c < needed:
        c *= 2
    return c


cdef bint reserve_nodes(Workspace* ws, long long n) noexcept nogil:
    if n <= ws.node_capacity:
        return True
    cdef long long c = grown(n, ws.node_capacity)
    cdef void* a = realloc(ws.group_start, c * sizeof(int))
    if a == NULL:
        return False
    ws.group_start = <int*>a
    a = realloc(ws.group_len, c * sizeof(int))
    if a == NULL:
        return False
    ws.group_len = <int*>a
    a = realloc(ws.pair_start, c * sizeof(long long))
    if a == NULL:
        return False
    ws.pair_start = <long long*>a
    ws.node_capacity = c
    return True


cdef bint reserve_doubles(double** buffer, long long* capacity, long long n) noexcept nogil:
    """Grow ``*buffer`` to hold at least ``n`` doubles (contents kept); False if out of memory."""
    if n <= capacity[0]:
        return True
    cdef long long c = grown(n, capacity[0])
    cdef void* a = realloc(buffer[0], c * sizeof(double))
    if a == NULL:
        return False
    buffer[0] = <double*>a
    capacity[0] = c
    return True


cdef inline bint is_leaf(const TreeView* t, int node) noexcept nogil:
    return t.child_ptr[node + 1] == t.child_ptr[node]


cdef inline double child_delta(const Workspace* ws, const TreeView* b, int x, int y) noexcept nogil:
    """Delta of the pair (x, y), which must share a match key and be evaluated already."""
    return ws.delta[ws.pair_start[x] + b.rank[y] - ws.group_start[x]]


cdef double production_delta(const Workspace* ws, const Params* prm,
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


cdef double partial_delta(Workspace* ws, const Params* prm,
                          const TreeView* a, const TreeView* b, int x, int y) noexcept nogil:
    """PTK Delta of two nodes with equal label contents (Moschitti 2006, KeLP conventions).

    A leaf on either side: mu * lam^2 * terminal_factor. Otherwise
    mu * (lam^2 + sum over pairs of equal-length child subsequences J1, J2 of
    lam^(gaps(J1) + gaps(J2)) * prod_k Delta(c_x[J1k], c_y[J2k])), gaps = children skipped
    between the first and last chosen child. The sum over all lengths is one O(n*m)
    dynamic programme: D[i][j] = Delta(c_xi, c_yj) * (1 + P[i-1][j-1]) for the
    subsequences ending at (i, j), P[i][j] = sum_{i'<=i, j'<=j} D[i'][j'] lam^(i-i'+j-j').
    """
    if is_leaf(a, x) or is_leaf(b, y):
        return prm.mu * prm.lam2 * prm.terminal_factor
    cdef int pa = a.child_ptr[x], pb = b.child_ptr[y]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int m = b.child_ptr[y + 1] - pb
    if not reserve_doubles(&ws.rows, &ws.row_capacity, 2 * (m + 1)):
        ws.failed = True
        return 0.0
    cdef double* prev = ws.rows
    cdef double* cur = ws.rows + (m + 1)
    cdef double* swap
    cdef double total = 0.0, row, d, lam = prm.lam
    cdef int i, j, ca, cb
    for j in range(m + 1):
        prev[j] = 0.0
    cur[0] = 0.0
    for i in range(n):
        ca = a.child_idx[pa + i]
        row = 0.0
        for j in range(1, m + 1):
            cb = b.child_idx[pb + j - 1]
            if a.key[ca] == b.key[cb]:
                d = child_delta(ws, b, ca, cb) * (1.0 + prev[j - 1])
                total += d
            else:
                d = 0.0
            row = d + lam * row
            cur[j] = row + lam * prev[j]
        swap = prev
        prev = cur
        cur = swap
    return prm.mu * (prm.lam2 + total)


cdef double tree_kernel(Workspace* ws, const Params* prm, const TreeView* a, const TreeView* b) noexcept nogil:
    """Unnormalized K(a, b) = sum of Delta over node pairs with equal match keys; -1 if out of memory."""
    cdef int na = a.n, nb = b.n
    cdef int i = 0, j = 0, j_end, node, t, key, other
    cdef long long n_pairs = 0, base
    cdef double total = 0.0, d
    if not reserve_nodes(ws, na):
        return -1.0
    for node in range(na):
        ws.group_len[node] = 0
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
                node = a.order[i]
                ws.group_start[node] = j
                ws.group_len[node] = j_end - j
                ws.pair_start[node] = n_pairs
                n_pairs += j_end - j
                i += 1
            j = j_end
    if n_pairs == 0:
        return 0.0
    if not reserve_doubles(&ws.delta, &ws.pair_capacity, n_pairs):
        return -1.0
    for node in range(na - 1, -1, -1):
        base = ws.pair_start[node]
        for t in range(ws.group_len[node]):
            other = b.order[ws.group_start[node] + t]
            if prm.kind == PARTIAL_TREE:
                d = partial_delta(ws, prm, a, b, node, other)
            else:
                d = production_delta(ws, prm, a, b, node, other)
            ws.delta[base + t] = d
            total += d
    return -1.0 if ws.failed else total


cdef Params make_params(int kind, double lam, double mu, double terminal_factor):
    cdef Params p
    p.kind = kind
    p.lam = lam
    p.lam2 = lam * lam
    p.mu = mu
    p.terminal_factor = terminal_factor
    return p


def _raise_on_failure(failed, values):
    if failed[0]:
        raise MemoryError("the tree kernel engine could not allocate its scratch buffers")
    if not np.isfinite(values).all():
        raise KernelOverflowError(
            "kernel values overflowed float64; use smaller lam, mu or terminal_factor for structures this large"
        )


def tree_gram(int kind, double lam, double mu, double terminal_factor,
              PackedTrees A, PackedTrees B, bint symmetric,
              const double[::1] inv_norm_a, const double[::1] inv_norm_b, int n_threads):
    """Gram block K[r, c] = K(A[r], B[c]), normalized as K * inv_norm_a[r] * inv_norm_b[c]
    (the reciprocal square roots of the self-kernels, 0 for a zero self-kernel) unless
    they are None. With ``symmetric`` (A is B) only the upper triangle is computed, then
    mirrored; normalized, its diagonal is 1 (0 for a zero self-kernel) without
    recomputation."""
    cdef Params prm = make_params(kind, lam, mu, terminal_factor)
    cdef Py_ssize_t n_a = A.n_trees, n_b = B.n_trees
    cdef bint normalize = inv_norm_a is not None
    out = np.empty((n_a, n_b), dtype=np.float64)
    failed = np.zeros(1, dtype=np.int32)
    cdef double[:, ::1] K = out
    cdef int[::1] failure = failed
    cdef Workspace* ws
    cdef Py_ssize_t r, c
    cdef TreeView va, vb
    cdef double value, scale
    if n_a == 0 or n_b == 0:
        return out
    with nogil, parallel(num_threads=n_threads):
        ws = workspace_new()
        if ws == NULL:
            failure[0] = 1
        for r in prange(n_a, schedule="dynamic"):
            va = tree_view(&A.packed, r)
            for c in range(r if symmetric else 0, n_b):
                if ws == NULL:
                    break
                if normalize:
                    scale = inv_norm_a[r] * inv_norm_b[c]
                    if scale == 0:
                        K[r, c] = 0.0
                        continue
                    if symmetric and c == r:
                        K[r, c] = 1.0
                        continue
                vb = tree_view(&B.packed, c)
                value = tree_kernel(ws, &prm, &va, &vb)
                if value < 0:
                    failure[0] = 1
                if normalize:
                    value = value * inv_norm_a[r] * inv_norm_b[c]
                K[r, c] = value
        workspace_free(ws)
    if symmetric and not failed[0]:
        with nogil:
            mirror_upper(K, n_threads)
    _raise_on_failure(failed, out)
    return out


cdef void mirror_upper(double[:, ::1] K, int n_threads) noexcept nogil:
    """Copy the upper triangle onto the lower one, tile by tile to stay in cache."""
    cdef Py_ssize_t n = K.shape[0], tile = 64, n_tiles = (n + tile - 1) // tile
    cdef Py_ssize_t ti, tj, i, j
    for ti in prange(n_tiles, num_threads=n_threads, schedule="dynamic"):
        for tj in range(ti, n_tiles):
            for i in range(ti * tile, min((ti + 1) * tile, n)):
                for j in range(max(tj * tile, i + 1), min((tj + 1) * tile, n)):
                    K[j, i] = K[i, j]


def tree_pairs(int kind, double lam, double mu, double terminal_factor,
               PackedTrees A, PackedTrees B, const long long[:, ::1] index,
               const double[::1] inv_norm_a, const double[::1] inv_norm_b, int n_threads):
    """K(A[index[k, 0]], B[index[k, 1]]) for every k, normalized as in :func:`tree_gram`
    unless ``inv_norm_a`` is None."""
    cdef Params prm = make_params(kind, lam, mu, terminal_factor)
    cdef Py_ssize_t n = index.shape[0], k
    cdef bint normalize = inv_norm_a is not None
    out = np.zeros(n, dtype=np.float64)
    failed = np.zeros(1, dtype=np.int32)
    cdef double[::1] values = out
    cdef int[::1] failure = failed
    cdef Workspace* ws
    cdef TreeView va, vb
    cdef double value
    if n == 0:
        return out
    with nogil, parallel(num_threads=n_threads):
        ws = workspace_new()
        if ws == NULL:
            failure[0] = 1
        for k in prange(n, schedule="dynamic", chunksize=64):
            if ws == NULL:
                continue
            va = tree_view(&A.packed, index[k, 0])
            vb = tree_view(&B.packed, index[k, 1])
            value = tree_kernel(ws, &prm, &va, &vb)
            if value < 0:
                failure[0] = 1
            if normalize:
                value = value * inv_norm_a[index[k, 0]] * inv_norm_b[index[k, 1]]
            values[k] = value
        workspace_free(ws)
    _raise_on_failure(failed, out)
    return out
