# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled engine of the kernels: tree kernels ST, SST, PTK and the smoothed SPTK; the
subsequence path kernel and the Zelenko tree kernel over (edge, node) tuples.

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

SPTK pairs also come from a node similarity (lexical or compositional, see
:class:`NodeSimilarity`): a node of the first tree pairs with the nodes of the second
whose similarity reaches the threshold, and each node's partners are kept sorted, so a
child pair is found by walking the list.

The child-subsequence sums (PTK, SPTK, the path kernel, Zelenko's child term) are
dynamic programmes over an n x m grid of child pairs, computed with rolling rows: the
values of one row are computed just before it is consumed, and only that row and two
rows of partial sums are kept, O(m) doubles per sum, never the n x m grid. Zelenko's
kernel keeps its values for the matching node pairs only.

The entry points check every argument (kernel kind against packed kind and match key,
tables covering every label id, index pairs and norms against the packed sets) and raise
:class:`~spacy_convkernels.errors.EngineArgumentError` before any computation; packed
sets and tables are immutable. Everything below the entry points runs without the GIL:
the items (Gram rows, pairs) are computed in blocks of about 0.1 s, spread over threads
with OpenMP, each thread owning one grow-only :c:type:`Workspace` for the whole call;
between blocks the GIL is taken back to check for signals, so Ctrl-C raises
KeyboardInterrupt within about a block (a single pair of huge structures is not split).
"""
from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport parallel, prange, threadid
from libc.math cimport exp
from libc.stdlib cimport calloc, free, realloc

import time

import numpy as np

from ..errors import InvalidParameterError, KernelOverflowError

cpdef enum KernelKind:
    SUBTREE_KELP = 0
    SUBTREE_TEXTBOOK = 1
    SUBSET_TREE = 2
    PARTIAL_TREE = 3
    SMOOTHED_PARTIAL_TREE = 4
    ZELENKO_TREE = 5
    SUBSEQUENCE_PATH = 6


cpdef enum SimilarityKind:
    EXACT = 0           # the label matches itself only
    LEXICAL = 1         # cosine of word vectors, kept when positive (KeLP's lexical similarity)
    COMPOSITIONAL = 2   # cosine of composed head-modifier vectors
    EXPONENTIAL = 3     # exp(c - 1) * ((c - gamma) / (1 - gamma))+ of the cosine c (Garg et al.)


cdef struct Params:
    int kind
    double lam
    double lam2
    double mu
    double terminal_factor
    const Similarity* similarity    # SPTK; the exact tree kernels: nonstationary weights (or NULL)
    const TupleSimilarity* tuples   # Zelenko and path kernels only


cdef struct Packed:
    const long long* node_offset
    const int* key
    const int* label
    const int* child_ptr
    const int* child_idx
    const int* order
    const int* rank
    const long long* smooth_offset
    const int* smooth


cdef struct TreeView:
    int n
    const int* key
    const int* label
    const int* child_ptr
    const int* child_idx
    const int* order
    const int* rank
    int n_smooth            # nodes with a non-exact similarity, in preorder
    const int* smooth


cdef struct Similarity:
    const int* kind         # per label id: a SimilarityKind
    const int* group        # labels are compared only within a group (same POS, same POS pattern)
    const int* row          # row of the label's unit vector, -1 for none
    const double* weight    # per label id: the trust in its vector, in [0, 1]
    const double* sigma     # per label id: the nonstationary weight sigma (SPTK: sigma_a k sigma_b)
    const double* vectors
    const int* own_word     # per vector row, 2 entries: words whose own part the vector holds (-1: none), or NULL
    const double* own_part  # per vector row, 2 entries: the coefficients of those parts
    int dim
    double threshold
    double gamma            # sparsity of the EXPONENTIAL kind


cdef struct TupleSimilarity:
    const int* edge         # per tuple label id: its edge id
    const int* node         # per tuple label id: its node label id, in ``nodes``
    const double* weight    # per edge id: the nonstationary weight sigma(e)
    const Similarity* nodes


cdef struct Workspace:
    int* group_start
    int* group_len          # per node of the first tree: its number of partners
    long long* pair_start
    long long node_capacity
    double* delta
    long long pair_capacity
    int* partner            # SPTK: the partner node of each pair
    long long partner_capacity
    double* pair_sim        # SPTK: the node similarity of each pair
    long long sim_capacity
    double* rows            # the rolling rows of one subsequence sum, O(children of the second node)
    long long row_capacity
    bint failed             # an allocation failed: the value being computed is void


def _frozen(values, dtype):
    """A read-only C-contiguous copy of ``values`` that cannot be made writeable again
    (its memory belongs to a bytes object)."""
    a = np.ascontiguousarray(values, dtype=dtype)
    return np.frombuffer(a.tobytes(), dtype=dtype).reshape(a.shape)


def _read_only(values, dtype):
    """``values`` as a C-contiguous array of ``dtype`` (a copy only if needed), seen through a read-only view."""
    view = np.ascontiguousarray(values, dtype=dtype).view()
    view.flags.writeable = False
    return view


cdef class PackedStructures:
    """Compiled structures concatenated for the engine (the ``Packed`` struct). Immutable:
    the arrays are read-only copies, checked when packed, and an object cannot be
    initialized twice, so what the engine reads never changes under it."""
    cdef Packed packed
    cdef readonly Py_ssize_t n_structures
    cdef readonly bint ready
    cdef readonly long long max_label  # the largest label id, -1 for no nodes
    cdef readonly object node_offset, label

    def __len__(self):
        return self.n_structures

    cdef _check_fresh(self):
        if self.ready:
            raise InvalidParameterError(f"a {type(self).__name__} cannot be initialized twice")

    cdef _set_labels(self, labels):
        """Labels (without the trailing padding) after checking they are label ids."""
        if labels.size and labels.min() < 0:
            raise InvalidParameterError(f"a label id is negative ({labels.min()})")
        self.max_label = labels.max() if labels.size else -1
        self.label = _frozen(np.append(labels, 0), np.int32)  # a trailing 0 keeps it non-empty


cdef class PackedSequences(PackedStructures):
    """Compiled paths (tuple label ids) concatenated: ``label[node_offset[s]:node_offset[s+1]]``."""

    def __init__(self, compiled_paths):
        self._check_fresh()
        paths = list(compiled_paths)
        self.n_structures = len(paths)
        parts = [np.asarray(p.labels).ravel() for p in paths]
        offsets = np.zeros(len(paths) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in parts], out=offsets[1:])
        self.node_offset = _frozen(offsets, np.int64)
        self._set_labels(np.concatenate(parts).astype(np.int32) if parts else np.zeros(0, np.int32))
        cdef const long long[::1] offset_view = self.node_offset
        cdef const int[::1] labels = self.label
        self.packed.node_offset = &offset_view[0]
        self.packed.label = &labels[0]
        self.ready = True


cdef int check_tree(const TreeView* v) noexcept nogil:
    """0 if the arrays of one packed tree are consistent, else the number of the first
    broken rule (see ``_TREE_RULES``). These rules keep every read of the engine inside
    the tree's arrays and make its walks correct."""
    cdef int n = v.n, x, k, c, o, before
    if v.child_ptr[0] != 0 or v.child_ptr[n] != n - 1:
        return 1
    for x in range(n):
        if v.child_ptr[x + 1] < v.child_ptr[x]:
            return 1
    for x in range(n):
        before = x
        for k in range(v.child_ptr[x], v.child_ptr[x + 1]):
            c = v.child_idx[k]
            if c <= before or c >= n:
                return 2
            before = c
    for k in range(n):
        o = v.order[k]
        if o < 0 or o >= n or v.rank[o] != k:
            return 3
        if k and (v.key[before] > v.key[o] or (v.key[before] == v.key[o] and before > o)):
            return 4
        before = o
    return 0


_TREE_RULES = {
    1: "child_ptr must rise from 0 to n_nodes - 1",
    2: "children must follow their parent and each other in preorder, inside the tree",
    3: "the sorted node order must be a permutation whose inverse is the rank array",
    4: "the sorted node order must sort the nodes by match key, then by index",
}


cdef class PackedTrees(PackedStructures):
    """Compiled trees concatenated for the engine.

    ``key`` is the match key: ``"production"`` (ST, SST), ``"content"`` (PTK) or
    ``"label"`` (SPTK, Zelenko). ``smooth_kinds``, a SimilarityKind per label id, marks
    the nodes whose partners come from a node similarity rather than from equal keys.
    The compiled arrays are checked (sizes, preorder children, sorted orders) and copied.
    """
    cdef readonly str match_key
    cdef readonly object key, child_ptr, child_idx, order, rank, smooth_offset, smooth
    cdef object used_labels, used_smooth  # the distinct label ids, and whether each was smoothed

    def __init__(self, compiled_trees, str key, smooth_kinds=None):
        self._check_fresh()
        if key not in ("production", "content", "label"):
            raise InvalidParameterError(f"unknown match key {key!r}")
        self.match_key = key
        trees = list(compiled_trees)
        self.n_structures = len(trees)
        sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
        if (sizes < 1).any():
            raise InvalidParameterError(f"tree {int(np.argmax(sizes < 1))} has no nodes")
        offsets = np.zeros(len(trees) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        self.node_offset = _frozen(offsets, np.int64)

        def cat(name, extra):
            """The trees' arrays ``name``, each of n_nodes + extra entries, concatenated and a 0 appended."""
            parts = [np.asarray(getattr(t, name)).ravel() for t in trees]
            lengths = np.array([len(p) for p in parts], dtype=np.int64)
            if len(trees) and (lengths != sizes + extra).any():
                bad = int(np.argmax(lengths != sizes + extra))
                raise InvalidParameterError(f"tree {bad}: {name} has {lengths[bad]} entries for {sizes[bad]} nodes")
            return _frozen(np.concatenate(parts + [np.zeros(1, dtype=np.int32)]), np.int32)

        self.key = cat(key + "s", 0)
        labels = cat("labels", 0)[: int(offsets[len(trees)])]  # without the padding
        self._set_labels(labels)
        self.child_ptr = cat("child_ptr", 1)
        self.child_idx = cat("child_idx", -1)
        self.order = cat("by_" + key, 0)
        self.rank = cat("rank_by_" + key, 0)
        self.used_labels = np.unique(labels)
        self.used_smooth = np.zeros(len(self.used_labels), dtype=bool)
        is_smooth = np.zeros(len(labels), dtype=bool)
        if smooth_kinds is not None:
            smooth_kinds = np.asarray(smooth_kinds)
            if self.max_label >= len(smooth_kinds):
                raise InvalidParameterError(f"smooth_kinds covers label ids 0..{len(smooth_kinds) - 1}, "
                                          f"but a tree holds label id {self.max_label}")
            is_smooth = smooth_kinds[labels] != EXACT
            self.used_smooth = smooth_kinds[self.used_labels] != EXACT
        tree_of_node = np.repeat(np.arange(len(trees)), sizes)
        smooth_offset = np.zeros(len(trees) + 1, dtype=np.int64)
        np.cumsum(np.bincount(tree_of_node[is_smooth], minlength=len(trees)), out=smooth_offset[1:])
        self.smooth_offset = _frozen(smooth_offset, np.int64)
        local = np.flatnonzero(is_smooth) - offsets[tree_of_node[is_smooth]]
        self.smooth = _frozen(np.append(local, 0), np.int32)
        cdef const long long[::1] offset_view = self.node_offset, smooth_offsets = self.smooth_offset
        cdef const int[::1] keys = self.key, label_view = self.label, ptr = self.child_ptr, idx = self.child_idx
        cdef const int[::1] order = self.order, rank = self.rank, smooth = self.smooth
        self.packed.node_offset = &offset_view[0]
        self.packed.key = &keys[0]
        self.packed.label = &label_view[0]
        self.packed.child_ptr = &ptr[0]
        self.packed.child_idx = &idx[0]
        self.packed.order = &order[0]
        self.packed.rank = &rank[0]
        self.packed.smooth_offset = &smooth_offsets[0]
        self.packed.smooth = &smooth[0]
        cdef Py_ssize_t number
        cdef TreeView view
        cdef int broken
        for number in range(self.n_structures):
            view = tree_view(&self.packed, number)
            broken = check_tree(&view)
            if broken:
                raise InvalidParameterError(f"tree {number}: {_TREE_RULES[broken]}")
        self.ready = True

    cdef bint smoothed_like(self, kinds):
        """Whether the nodes packed as smoothed are those that the similarity kinds smooth."""
        kinds = np.asarray(kinds)
        if self.used_labels.size == 0:
            return True
        return self.max_label < len(kinds) and np.array_equal(kinds[self.used_labels] != EXACT, self.used_smooth)

    def __repr__(self):
        return f"PackedTrees({self.n_structures} trees, key {self.match_key!r})"


cdef class NodeSimilarity:
    """A node similarity as tables indexed by label id (see the ``Similarity`` struct):
    ``kinds``, ``groups``, ``rows`` and ``weights`` per label, unit ``vectors`` by row.
    ``own_words`` and ``own_parts`` (rows x 2, optional) extend each unit vector by up to
    two coordinates private to a word: the part of its words that no other word shares."""
    cdef readonly object kinds, groups, rows, weights, sigmas, vectors, own_words, own_parts
    cdef Similarity similarity
    cdef bint ready

    def __init__(self, kinds, groups, rows, weights, vectors, double threshold, double gamma=0.0, sigmas=None,
                 own_words=None, own_parts=None):
        if self.ready:
            raise InvalidParameterError("a NodeSimilarity cannot be initialized twice")
        # the rows index the vectors: a private frozen copy; the rest are only compared or
        # multiplied, so read-only views of the caller's arrays do (no copy of the vectors)
        self.kinds = _read_only(kinds, np.int32)
        self.groups = _read_only(groups, np.int32)
        self.rows = _frozen(rows, np.int32)
        self.weights = _read_only(weights, np.float64)
        self.sigmas = _read_only(np.ones(len(self.kinds)) if sigmas is None else sigmas, np.float64)
        self.vectors = _read_only(vectors, np.float64)
        per_label = (self.kinds, self.groups, self.rows, self.weights, self.sigmas)
        if (any(a.ndim != 1 or len(a) != len(self.kinds) for a in per_label)) or self.vectors.ndim != 2:
            raise InvalidParameterError("kinds, groups, rows, weights and sigmas must be per label id; vectors a matrix")
        n_rows = len(self.vectors)
        if self.rows.max(initial=-1) >= n_rows:
            raise InvalidParameterError(f"a label points to vector row {self.rows.max()}, beyond the {n_rows} rows")
        if (own_words is None) != (own_parts is None):
            raise InvalidParameterError("own_words and own_parts go together")
        if self.vectors.size == 0:  # no coordinates: keep the rows, give them one zero coordinate
            self.vectors = _frozen(np.zeros((max(n_rows, 1), 1)), np.float64)
        cdef const int[::1] k = self.kinds, g = self.groups, r = self.rows
        cdef const double[::1] w = self.weights, sg = self.sigmas
        cdef const double[:, ::1] v = self.vectors
        cdef const int[:, ::1] ow
        cdef const double[:, ::1] op
        self.similarity.own_word = NULL
        self.similarity.own_part = NULL
        if own_words is not None:
            self.own_words = _read_only(own_words, np.int32)
            self.own_parts = _read_only(own_parts, np.float64)
            if self.own_words.shape != (n_rows, 2) or self.own_parts.shape != (n_rows, 2):
                raise InvalidParameterError("own_words and own_parts need two entries per vector row")
            if n_rows:  # read only for rows that exist
                ow, op = self.own_words, self.own_parts
                self.similarity.own_word = &ow[0, 0]
                self.similarity.own_part = &op[0, 0]
        self.similarity.kind = &k[0] if len(self.kinds) else NULL
        self.similarity.group = &g[0] if len(self.kinds) else NULL
        self.similarity.row = &r[0] if len(self.kinds) else NULL
        self.similarity.weight = &w[0] if len(self.kinds) else NULL
        self.similarity.sigma = &sg[0] if len(self.kinds) else NULL
        self.similarity.vectors = &v[0, 0]
        self.similarity.dim = self.vectors.shape[1]
        self.similarity.threshold = threshold
        self.similarity.gamma = gamma
        self.ready = True


cdef inline double own_overlap(const Similarity* s, int ra, int rb) noexcept nogil:
    """The inner product of the private coordinates of vector rows ``ra`` and ``rb``."""
    cdef double total = 0.0
    cdef int i, j
    for i in range(2):
        if s.own_word[2 * ra + i] >= 0:
            for j in range(2):
                if s.own_word[2 * ra + i] == s.own_word[2 * rb + j]:
                    total += s.own_part[2 * ra + i] * s.own_part[2 * rb + j]
    return total


cdef inline double node_similarity(const Similarity* s, int a, int b) noexcept nogil:
    """sigma(a, b) for two label ids of the table: 1 for the same label; for two labels of
    the same non-exact kind and group with vectors, w_a * w_b * <u_a, u_b> with u the unit
    vectors, private coordinates included (1 for one row), and w the weights, a lexical
    one kept only when positive; else 0."""
    if a == b:
        return 1.0
    cdef int kind = s.kind[a]
    if kind == EXACT or kind != s.kind[b] or s.group[a] != s.group[b]:
        return 0.0
    cdef int ra = s.row[a], rb = s.row[b]
    cdef double scale = s.weight[a] * s.weight[b]
    if ra < 0 or rb < 0 or scale == 0.0:
        return 0.0
    if ra == rb:
        return scale
    cdef const double* u = s.vectors + <long long>ra * s.dim
    cdef const double* v = s.vectors + <long long>rb * s.dim
    cdef double dot = 0.0
    cdef int t
    for t in range(s.dim):
        dot += u[t] * v[t]
    if s.own_word != NULL:
        dot += own_overlap(s, ra, rb)
    if kind == LEXICAL and dot <= 0.0:
        return 0.0
    if kind == EXPONENTIAL:
        dot = exp(dot - 1.0) * (dot - s.gamma) / (1.0 - s.gamma) if dot > s.gamma else 0.0
    return scale * dot


cdef inline TreeView tree_view(const Packed* p, Py_ssize_t t) noexcept nogil:
    """Tree ``t`` of a packed collection: its own arrays, with local node indices."""
    cdef TreeView v
    cdef long long o = p.node_offset[t]
    v.n = <int>(p.node_offset[t + 1] - o)
    v.key = p.key + o
    v.label = p.label + o
    v.child_ptr = p.child_ptr + o + t      # n + 1 offsets per tree
    v.child_idx = p.child_idx + o - t      # n - 1 children per tree
    v.order = p.order + o
    v.rank = p.rank + o
    v.smooth = p.smooth + p.smooth_offset[t]
    v.n_smooth = <int>(p.smooth_offset[t + 1] - p.smooth_offset[t])
    return v


cdef Workspace* workspace_new() noexcept nogil:
    """An empty workspace: every buffer NULL, every capacity 0 (NULL if out of memory)."""
    return <Workspace*>calloc(1, sizeof(Workspace))


cdef void workspace_free(Workspace* ws) noexcept nogil:
    if ws != NULL:
        free(ws.group_start)
        free(ws.group_len)
        free(ws.pair_start)
        free(ws.delta)
        free(ws.partner)
        free(ws.pair_sim)
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


cdef bint reserve(void** buffer, long long* capacity, long long n, size_t item) noexcept nogil:
    """Grow ``*buffer`` to hold at least ``n`` items (contents kept); False if out of memory."""
    if n <= capacity[0]:
        return True
    cdef long long c = grown(n, capacity[0])
    cdef void* a = realloc(buffer[0], c * item)
    if a == NULL:
        return False
    buffer[0] = a
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


cdef double* subsequence_rows(Workspace* ws, int n_rows, int m) noexcept nogil:
    """``n_rows`` rows of m + 1 doubles for a subsequence sum over m columns, the first
    zeroed (the partial sums before row 1); NULL (and ``failed``) if out of memory."""
    cdef int j
    if not reserve(<void**>&ws.rows, &ws.row_capacity, <long long>n_rows * (m + 1), sizeof(double)):
        ws.failed = True
        return NULL
    for j in range(m + 1):
        ws.rows[j] = 0.0
    return ws.rows


cdef inline double subsequence_row(const double* v, const double* prev, double* cur, int m, double lam,
                                   double factor, double total) noexcept nogil:
    """One row i of a subsequence sum: the sum over pairs of equal-length index
    subsequences i of 1..n and j of 1..m of factor^l * prod_k v[i_k][j_k] *
    lam^(gaps(i) + gaps(j)), gaps = indices skipped between the first and the last (the
    child-subsequence sum of PTK with factor 1, the path kernel with factor lam^2, whose
    span weights are lam^2 per element times the gaps).

    The sum is one O(n*m) pass with rolling rows: E[i][j] = factor * v[i][j] *
    (1 + P[i-1][j-1]) sums the subsequences ending at (i, j), and P[i][j] =
    sum_{i'<=i, j'<=j} E[i'][j'] lam^(i-i'+j-j') is a running row sum plus lam times the
    previous row (no subtraction). Only row i of v (``v[0:m]``, computed by the caller
    just before), the previous row of P (``prev[0:m+1]``) and the current one (``cur``)
    are kept: memory O(m), not O(n*m). Returns ``total`` plus the row's E values."""
    cdef double row = 0.0, e
    cdef int j
    cur[0] = 0.0
    for j in range(1, m + 1):
        e = v[j - 1]
        if e != 0.0:
            e = factor * e * (1.0 + prev[j - 1])
            total += e
        row = e + lam * row
        cur[j] = row + lam * prev[j]
    return total


cdef double partial_delta(Workspace* ws, const Params* prm,
                          const TreeView* a, const TreeView* b, int x, int y) noexcept nogil:
    """PTK Delta of two nodes with equal label contents (Moschitti 2006, KeLP conventions).

    A leaf on either side: mu * lam^2 * terminal_factor. Otherwise
    mu * (lam^2 + sum over pairs of equal-length child subsequences J1, J2 of
    lam^(gaps(J1) + gaps(J2)) * prod_k Delta(c_x[J1k], c_y[J2k])), gaps = children skipped
    between the first and last chosen child. The sum over all lengths is one O(n*m)
    dynamic programme (:func:`subsequence_row`): D[i][j] = Delta(c_xi, c_yj) *
    (1 + P[i-1][j-1]) for the subsequences ending at (i, j), P[i][j] =
    sum_{i'<=i, j'<=j} D[i'][j'] lam^(i-i'+j-j'), computed row by row with the child
    Deltas of row i looked up just before it: three rows of m + 1 doubles, whatever n.
    """
    if is_leaf(a, x) or is_leaf(b, y):
        return prm.mu * prm.lam2 * prm.terminal_factor
    cdef int pa = a.child_ptr[x], pb = b.child_ptr[y]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int m = b.child_ptr[y + 1] - pb
    cdef double* prev = subsequence_rows(ws, 3, m)
    if prev == NULL:
        return 0.0
    cdef double* cur = prev + (m + 1)
    cdef double* v = prev + 2 * (m + 1)
    cdef double* swap
    cdef double total = 0.0
    cdef int i, j, ca, cb
    for i in range(n):
        ca = a.child_idx[pa + i]
        for j in range(m):
            cb = b.child_idx[pb + j]
            v[j] = child_delta(ws, b, ca, cb) if a.key[ca] == b.key[cb] else 0.0
        total = subsequence_row(v, prev, cur, m, prm.lam, 1.0, total)
        swap = prev
        prev = cur
        cur = swap
    return prm.mu * (prm.lam2 + total)


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


cdef double tree_kernel(Workspace* ws, const Params* prm, const TreeView* a, const TreeView* b) noexcept nogil:
    """Unnormalized K(a, b) = sum of Delta over node pairs with equal match keys, each
    Delta times sigma(x) sigma(y) when a table of nonstationary weights is given (out of
    memory: ``failed`` set)."""
    cdef int na = a.n, node, t, other
    cdef long long n_pairs, base
    cdef double total = 0.0, d
    cdef const double* sigma = prm.similarity.sigma if prm.similarity != NULL else NULL
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
            if sigma != NULL:  # nonstationary weights sigma(x) sigma(y)
                d *= sigma[a.label[node]] * sigma[b.label[other]]
            ws.delta[base + t] = d
            total += d
    return total


cdef double smoothed_subsequences(Workspace* ws, const Params* prm,
                                  const TreeView* a, const TreeView* b, int x, int y) noexcept nogil:
    """The child-subsequence sum of PTK for the SPTK pair (x, y), row by row
    (:func:`subsequence_row`, memory O(m)); the Delta of a child pair is found by walking
    the first child's partner list, which is sorted like the second tree's nodes."""
    cdef int pa = a.child_ptr[x], pb = b.child_ptr[y]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int m = b.child_ptr[y + 1] - pb
    cdef double* prev = subsequence_rows(ws, 3, m)
    if prev == NULL:
        return 0.0
    cdef double* cur = prev + (m + 1)
    cdef double* v = prev + 2 * (m + 1)
    cdef double* swap
    cdef double total = 0.0
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
            v[j] = ws.delta[k] if k < end and ws.partner[k] == cb else 0.0
        total = subsequence_row(v, prev, cur, m, prm.lam, 1.0, total)
        swap = prev
        prev = cur
        cur = swap
    return total


cdef double smoothed_kernel(Workspace* ws, const Params* prm, const TreeView* a, const TreeView* b) noexcept nogil:
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
    for x in range(na):  # nonstationary weights: sigma(x) * k(x, y) * sigma(y)
        if ws.group_len[x]:
            ws.pair_start[x] = k
            for t in range(ws.group_len[x]):
                y = b.order[ws.group_start[x] + t]
                sigma = sim.sigma[a.label[x]] * sim.sigma[b.label[y]]
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
                sigma *= sim.sigma[a.label[x]] * sim.sigma[b.label[y]]
                if sigma != 0.0:
                    ws.partner[k] = y
                    ws.pair_sim[k] = sigma
                    k += 1
        ws.group_len[x] = <int>(k - ws.pair_start[x])
    for x in range(na - 1, -1, -1):  # children before parents
        base = ws.pair_start[x]
        for t in range(ws.group_len[x]):
            y = ws.partner[base + t]
            sigma = ws.pair_sim[base + t]
            if is_leaf(a, x) or is_leaf(b, y):
                d = prm.mu * prm.lam2 * prm.terminal_factor * sigma
            else:
                d = prm.mu * sigma * (prm.lam2 + smoothed_subsequences(ws, prm, a, b, x, y))
            ws.delta[base + t] = d
            total += d
    return total


cdef class TupleTable:
    """The similarity of (edge, node) tuples, Garg et al. (2018) §5.1, as tables:

        k((e, n), (e', n')) = sigma(e) [e = e'] sigma(e') * k_n(n, n'),

    per tuple label id its edge id (``edges``) and node label id (``nodes``), per edge id
    its nonstationary weight sigma (``weights``), and k_n a :class:`NodeSimilarity` over
    node label ids."""
    cdef readonly object edges, nodes, weights, node_similarity
    cdef TupleSimilarity table
    cdef bint ready

    def __init__(self, edges, nodes, weights, NodeSimilarity node_similarity not None):
        if self.ready:
            raise InvalidParameterError("a TupleTable cannot be initialized twice")
        self.edges = _frozen(edges, np.int32)
        self.nodes = _frozen(nodes, np.int32)
        self.weights = _read_only(weights, np.float64)
        self.node_similarity = node_similarity
        if self.edges.ndim != 1 or self.nodes.shape != self.edges.shape or self.weights.ndim != 1:
            raise InvalidParameterError("edges and nodes must be given for every tuple label id, weights per edge id")
        if len(self.edges) and not (0 <= self.edges.min() and self.edges.max() < len(self.weights)
                                    and 0 <= self.nodes.min() and self.nodes.max() < len(node_similarity.kinds)):
            raise InvalidParameterError("a tuple refers to an edge or node outside the tables")
        cdef const int[::1] e = self.edges, n = self.nodes
        cdef const double[::1] w = self.weights
        self.table.edge = &e[0] if len(self.edges) else NULL
        self.table.node = &n[0] if len(self.edges) else NULL
        self.table.weight = &w[0] if len(self.weights) else NULL
        self.table.nodes = &node_similarity.similarity
        self.ready = True


cdef inline double tuple_similarity(const TupleSimilarity* t, int a, int b) noexcept nogil:
    cdef int e = t.edge[a]
    if e != t.edge[b] or t.weight[e] == 0.0:
        return 0.0
    return t.weight[e] * t.weight[e] * node_similarity(t.nodes, t.node[a], t.node[b])


cdef double path_kernel(Workspace* ws, const Params* prm, const int* a, int n, const int* b, int m) noexcept nogil:
    """Subsequence kernel of Bunescu & Mooney (2005) as in Garg et al. §4.1: the sum over
    index sequences i of ``a`` and j of ``b`` of equal length of
    prod_k k(a[i_k], b[j_k]) * lam^(span(i) + span(j)), span = last - first + 1, that is
    lam^2 per element times lam per gap (:func:`subsequence_row` with factor lam^2, the
    tuple similarities of row i computed just before it: memory O(m))."""
    cdef double* prev = subsequence_rows(ws, 3, m)
    if prev == NULL:
        return 0.0
    cdef double* cur = prev + (m + 1)
    cdef double* v = prev + 2 * (m + 1)
    cdef double* swap
    cdef double total = 0.0
    cdef int i, j
    for i in range(n):
        for j in range(m):
            v[j] = tuple_similarity(prm.tuples, a[i], b[j])
        total = subsequence_row(v, prev, cur, m, prm.lam, prm.lam2, total)
        swap = prev
        prev = cur
        cur = swap
    return total


cdef double zelenko_children(Workspace* ws, const Params* prm, const TreeView* a, const TreeView* b,
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
    return total


cdef double zelenko_kernel(Workspace* ws, const Params* prm, const TreeView* a, const TreeView* b) noexcept nogil:
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
    # the roots: the first partner of node 0, if it is node 0
    if ws.group_len[0] and ws.partner[ws.pair_start[0]] == 0:
        return ws.delta[ws.pair_start[0]]
    return 0.0


cdef inline double evaluate(Workspace* ws, const Params* prm, const Packed* A, Py_ssize_t r,
                            const Packed* B, Py_ssize_t c) noexcept nogil:
    """The unnormalized kernel of structure r of A and structure c of B (out of memory:
    ``ws.failed`` set)."""
    cdef long long oa, ob
    cdef TreeView va, vb
    if prm.kind == SUBSEQUENCE_PATH:
        oa = A.node_offset[r]
        ob = B.node_offset[c]
        return path_kernel(ws, prm, A.label + oa, <int>(A.node_offset[r + 1] - oa),
                           B.label + ob, <int>(B.node_offset[c + 1] - ob))
    va = tree_view(A, r)
    vb = tree_view(B, c)
    if prm.kind == SMOOTHED_PARTIAL_TREE:
        return smoothed_kernel(ws, prm, &va, &vb)
    if prm.kind == ZELENKO_TREE:
        return zelenko_kernel(ws, prm, &va, &vb)
    return tree_kernel(ws, prm, &va, &vb)


# the match keys each tree kernel can use (SPTK without vectors matches contents, as KeLP)
_MATCH_KEYS = {SUBTREE_KELP: ("production",), SUBTREE_TEXTBOOK: ("production",), SUBSET_TREE: ("production",),
               PARTIAL_TREE: ("content",), SMOOTHED_PARTIAL_TREE: ("label", "content"), ZELENKO_TREE: ("label",)}


cdef Params make_params(int kind, double lam, double mu, double terminal_factor, NodeSimilarity similarity,
                        TupleTable tuples, PackedStructures A, PackedStructures B, int n_threads) except *:
    """The parameters for the engine, after checking that the kernel kind, the packed
    structures and the tables belong together: every read the engine makes is then in
    bounds."""
    cdef Params p
    if kind not in _MATCH_KEYS and kind != SUBSEQUENCE_PATH:
        raise InvalidParameterError(f"unknown kernel kind {kind}")
    if n_threads < 1:
        raise InvalidParameterError(f"n_threads must be >= 1, got {n_threads}")
    for name, packed in (("A", A), ("B", B)):
        if packed is None or not packed.ready:
            raise InvalidParameterError(f"{name} is not a packed set of structures")
        if kind == SUBSEQUENCE_PATH and not isinstance(packed, PackedSequences):
            raise InvalidParameterError(f"the path kernel takes PackedSequences; {name} is {type(packed).__name__}")
        if kind != SUBSEQUENCE_PATH and (not isinstance(packed, PackedTrees) or packed.match_key not in _MATCH_KEYS[kind]):
            raise InvalidParameterError(f"kernel kind {KernelKind(kind).name} takes PackedTrees keyed by "
                                      f"{' or '.join(map(repr, _MATCH_KEYS[kind]))}; {name} is {packed!r}")
    if kind == SMOOTHED_PARTIAL_TREE and similarity is None:
        raise InvalidParameterError("the smoothed partial tree kernel needs a NodeSimilarity")
    if kind in (ZELENKO_TREE, SUBSEQUENCE_PATH) and tuples is None:
        raise InvalidParameterError("the Zelenko and path kernels need a TupleTable")
    if kind in (ZELENKO_TREE, SUBSEQUENCE_PATH):
        table_size, table = len(tuples.edges), "tuple table"
    elif similarity is not None:
        table_size, table = len(similarity.kinds), "similarity table"
    else:
        table_size = None
    for name, packed in (("A", A), ("B", B)):
        if table_size is not None and packed.max_label >= table_size:
            raise InvalidParameterError(f"the {table} covers label ids 0..{table_size - 1}, but {name} holds "
                                      f"label id {packed.max_label}")
        if kind == SMOOTHED_PARTIAL_TREE and not (<PackedTrees>packed).smoothed_like(similarity.kinds):
            raise InvalidParameterError(f"{name} was packed against other similarity kinds than the table's "
                                      "(its smoothed nodes differ)")
    p.kind = kind
    p.lam = lam
    p.lam2 = lam * lam
    p.mu = mu
    p.terminal_factor = terminal_factor
    p.similarity = &similarity.similarity if similarity is not None else NULL
    p.tuples = &tuples.table if tuples is not None else NULL
    return p


cdef double _ONE = 1.0


cdef const double* inverse_norms(object inv, PackedStructures packed, str name, list keep) except? NULL:
    """The checked inverse norms of ``packed`` (a private copy, kept alive in ``keep``), or NULL for None."""
    if inv is None:
        return NULL
    cdef const double[::1] values = np.array(inv, dtype=np.float64, copy=True).ravel()
    if values.shape[0] != packed.n_structures:
        raise InvalidParameterError(f"inv_norm_{name} has {values.shape[0]} values for {packed.n_structures} "
                                  f"structures in {name.upper()}")
    keep.append(values)
    return &values[0] if values.shape[0] else <const double*>&_ONE


def _raise_on_failure(values):
    if not np.isfinite(values).all():
        raise KernelOverflowError(
            "kernel values overflowed float64; use smaller lam, mu or terminal_factor for structures this large"
        )


cdef struct Job:
    Params prm
    const Packed* A
    const Packed* B
    Py_ssize_t n_b
    bint symmetric
    const double* inv_a     # the inverse norms, or NULL (both or neither)
    const double* inv_b
    const long long* index  # pairs: the (row, column) of each value
    double* out             # gram: n_a x n_b, row-major; pairs: one value per index row


ctypedef bint (*Task)(Workspace* ws, const Job* job, Py_ssize_t item) noexcept nogil


cdef bint gram_row(Workspace* ws, const Job* job, Py_ssize_t r) noexcept nogil:
    """Row r of a Gram block (from column r on when symmetric); False if out of memory."""
    cdef Py_ssize_t c
    cdef double value
    cdef double* K = job.out + r * job.n_b
    for c in range(r if job.symmetric else 0, job.n_b):
        if job.inv_a != NULL:
            if job.inv_a[r] * job.inv_b[c] == 0:
                K[c] = 0.0
                continue
            if job.symmetric and c == r:
                K[c] = 1.0
                continue
        value = evaluate(ws, &job.prm, job.A, r, job.B, c)
        if ws.failed:
            return False
        K[c] = value * job.inv_a[r] * job.inv_b[c] if job.inv_a != NULL else value
    return True


cdef bint pair_value(Workspace* ws, const Job* job, Py_ssize_t k) noexcept nogil:
    cdef Py_ssize_t r = job.index[2 * k], c = job.index[2 * k + 1]
    cdef double value = evaluate(ws, &job.prm, job.A, r, job.B, c)
    if ws.failed:
        return False
    job.out[k] = value * job.inv_a[r] * job.inv_b[c] if job.inv_a != NULL else value
    return True


cdef bint run_block(Task task, const Job* job, Workspace** workspaces, Py_ssize_t start, Py_ssize_t stop,
                    int n_threads, int chunk) noexcept nogil:
    """Items start..stop-1 of a job, handed to the threads ``chunk`` at a time; False if
    out of memory. One thread runs without OpenMP at all (safe in a forked process)."""
    cdef Py_ssize_t i
    cdef Workspace* ws
    cdef int failed_flag = 0
    cdef int* failed = &failed_flag  # shared by the threads (a plain int would be private to each)
    if n_threads == 1:
        for i in range(start, stop):
            if not task(workspaces[0], job, i):
                return False
        return True
    with parallel(num_threads=n_threads):
        ws = workspaces[threadid()]
        for i in prange(start, stop, schedule="dynamic", chunksize=chunk):
            if not failed[0] and not task(ws, job, i):
                failed[0] = 1
    return not failed_flag


cdef double BLOCK_SECONDS = 0.1  # the aimed time between two checks for signals


cdef run(Task task, const Job* job, Py_ssize_t n_items, int n_threads, Py_ssize_t first_block, int chunk,
         progress=None):
    """Run ``task`` on items 0..n_items-1 in blocks without the GIL, checking for signals
    (Ctrl-C) between blocks, so a KeyboardInterrupt stops the work within about a block.
    Block sizes adapt to take about 0.1 s (at most 4 times the previous one), which keeps
    the check's cost negligible. ``progress``, when given, is called with the number of
    items of each block done. The per-thread workspaces live for the whole call and are
    freed however it ends."""
    cdef Workspace** workspaces = <Workspace**>calloc(n_threads, sizeof(Workspace*))
    cdef Py_ssize_t start = 0, stop, size = first_block
    cdef double began, elapsed
    cdef int t
    cdef bint ok = workspaces != NULL
    try:
        for t in range(n_threads if ok else 0):
            workspaces[t] = workspace_new()
            ok = ok and workspaces[t] != NULL
        while ok and start < n_items:
            stop = min(start + size, n_items)
            began = time.perf_counter()
            with nogil:
                ok = run_block(task, job, workspaces, start, stop, n_threads, chunk)
            PyErr_CheckSignals()
            if progress is not None and ok:
                progress(stop - start)
            elapsed = time.perf_counter() - began
            size = max(1, min(4 * size, <Py_ssize_t>(size * BLOCK_SECONDS / max(elapsed, 1e-6))))
            start = stop
        if not ok:
            raise MemoryError("the kernel engine could not allocate its scratch buffers")
    finally:
        if workspaces != NULL:
            for t in range(n_threads):
                workspace_free(workspaces[t])
            free(workspaces)




def gram(int kind, double lam, double mu, double terminal_factor, NodeSimilarity similarity, TupleTable tuples,
         PackedStructures A, PackedStructures B, bint symmetric, inv_norm_a, inv_norm_b, int n_threads,
         progress=None):
    """Gram block K[r, c] = K(A[r], B[c]), normalized as K * inv_norm_a[r] * inv_norm_b[c]
    (the reciprocal square roots of the self-kernels, 0 for a zero self-kernel) unless
    they are None. With ``symmetric`` (A is B) only the upper triangle is computed, then
    mirrored; normalized, its diagonal is 1 (0 for a zero self-kernel) without
    recomputation. Rows are computed in blocks; Ctrl-C between blocks raises
    KeyboardInterrupt; ``progress(n)`` is called after each block of n rows.
    Inconsistent arguments raise :class:`InvalidParameterError`."""
    cdef Job job
    cdef list keep = []
    job.prm = make_params(kind, lam, mu, terminal_factor, similarity, tuples, A, B, n_threads)
    if symmetric and A is not B:
        raise InvalidParameterError("a symmetric Gram block needs A is B")
    if (inv_norm_a is None) != (inv_norm_b is None):
        raise InvalidParameterError("inv_norm_a and inv_norm_b are given together or not at all")
    job.inv_a = inverse_norms(inv_norm_a, A, "a", keep)
    job.inv_b = inverse_norms(inv_norm_b, B, "b", keep)
    cdef Py_ssize_t n_a = A.n_structures, n_b = B.n_structures
    out = np.empty((n_a, n_b), dtype=np.float64)
    if n_a == 0 or n_b == 0:
        return out
    cdef double[:, ::1] K = out
    job.A = &A.packed
    job.B = &B.packed
    job.n_b = n_b
    job.symmetric = symmetric
    job.index = NULL
    job.out = &K[0, 0]
    run(gram_row, &job, n_a, n_threads, n_threads, 1, progress)
    if symmetric:
        with nogil:
            mirror_upper(K, n_threads)
    _raise_on_failure(out)
    return out


cdef void mirror_upper(double[:, ::1] K, int n_threads) noexcept nogil:
    """Copy the upper triangle onto the lower one, tile by tile to stay in cache."""
    cdef Py_ssize_t n = K.shape[0], tile = 64, n_tiles = (n + tile - 1) // tile
    cdef Py_ssize_t ti
    if n_threads == 1:
        for ti in range(n_tiles):
            mirror_tile_row(K, ti, tile, n_tiles, n)
    else:
        for ti in prange(n_tiles, num_threads=n_threads, schedule="dynamic"):
            mirror_tile_row(K, ti, tile, n_tiles, n)


cdef inline void mirror_tile_row(double[:, ::1] K, Py_ssize_t ti, Py_ssize_t tile, Py_ssize_t n_tiles,
                                 Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t tj, i, j
    for tj in range(ti, n_tiles):
        for i in range(ti * tile, min((ti + 1) * tile, n)):
            for j in range(max(tj * tile, i + 1), min((tj + 1) * tile, n)):
                K[j, i] = K[i, j]


def pairs(int kind, double lam, double mu, double terminal_factor, NodeSimilarity similarity, TupleTable tuples,
          PackedStructures A, PackedStructures B, index, inv_norm_a, inv_norm_b, int n_threads, progress=None):
    """K(A[index[k, 0]], B[index[k, 1]]) for every k, normalized as in :func:`gram`
    unless ``inv_norm_a`` is None; ``index`` is an (n, 2) integer array whose columns are
    checked against A and B. Pairs are computed in blocks; Ctrl-C between blocks raises
    KeyboardInterrupt; ``progress(n)`` is called after each block of n pairs."""
    cdef Job job
    cdef list keep = []
    job.prm = make_params(kind, lam, mu, terminal_factor, similarity, tuples, A, B, n_threads)
    if (inv_norm_a is None) != (inv_norm_b is None):
        raise InvalidParameterError("inv_norm_a and inv_norm_b are given together or not at all")
    job.inv_a = inverse_norms(inv_norm_a, A, "a", keep)
    job.inv_b = inverse_norms(inv_norm_b, B, "b", keep)
    rows = np.asarray(index)
    if rows.ndim != 2 or rows.shape[1] != 2 or not (np.issubdtype(rows.dtype, np.integer) or rows.size == 0):
        raise InvalidParameterError(f"index must be integer pairs of shape (n, 2), got shape {rows.shape} of {rows.dtype}")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.size and (rows.min() < 0 or (rows.max(axis=0) >= (A.n_structures, B.n_structures)).any()):
        raise InvalidParameterError(f"index refers to structures outside A (0..{A.n_structures - 1}) "
                                  f"or B (0..{B.n_structures - 1})")
    cdef Py_ssize_t n = rows.shape[0]
    out = np.zeros(n, dtype=np.float64)
    if n == 0:
        return out
    cdef const long long[:, ::1] pairs_index = rows
    cdef double[::1] values = out
    job.A = &A.packed
    job.B = &B.packed
    job.n_b = B.n_structures
    job.symmetric = False
    job.index = &pairs_index[0, 0]
    job.out = &values[0]
    run(pair_value, &job, n, n_threads, 64 * n_threads, 64, progress)
    _raise_on_failure(out)
    return out
