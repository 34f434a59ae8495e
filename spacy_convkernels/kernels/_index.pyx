# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The one-against-many index of a fixed set of structures: the landmarks, references or
support vectors that every input structure meets.

Delta(x, y) of a node pair depends on x and on the subtree under y only (its labels and
shape), never on where that subtree occurs. The index therefore hash-conses the fixed
trees into a DAG of distinct subtrees (identity: the label and the children's subtrees,
in order), each index node u keeping its occurrences c_j(u) in fixed structure j, so that

    K(a, B_j) = sum_u c_j(u) * S(u),    S(u) = sum over the nodes x of a of Delta(x, u),

and ``_one_against_many.pyx`` computes S once per input for all the fixed structures.
Index nodes are sorted by bucket (the nodes they can pair with, :func:`bucket_of`: equal
match keys; one similarity group of smoothed labels; one edge and node, or node group, of
tuples), then by label, so the partners of a query node are one contiguous range of index
nodes and a child pair is found by a subtraction. A tree index orders labels by their
first appearance in the fixed set, not by their ids, which depend on what the process
interned and freed before: a query's sums over a bucket run in the same order, so give
the same bits, in every process. Zelenko's kernel reads only the pairs of roots: the
index keeps each fixed tree's root.

Paths are indexed by their distinct tuple labels, sorted the same way (the similarities of
a query's tuples are then computed once for all the fixed paths; in a bucket the labels
keep the ids' order, which no sum follows: each fixed path's sum runs along the path);
forests are kept as packed, the forest kernel looping over them (its hyper-edge pairs are
not shared).

For SPTK the index also keeps, per similarity group, the distinct vector rows of the fixed
set's smoothed labels, transposed in panels of ``PANEL`` rows: :meth:`FixedSet.block_similarities`
gets the dot products of a block of queries' smoothed labels with them, once per distinct
pair of rows (the expensive part of CSPTK), from a register-blocked product on the
engine's threads. Each dot product is summed in coordinate order, as the plain engine's
(``_tables.row_dot``): the same bits where the compiler contracts neither into fused
multiply-adds (x86-64 without ``-mfma``), else within rounding.

An index reads the label tables when built (kinds, groups and vector rows of SPTK labels,
edges and nodes of tuples). Tables only grow, their entries never change, so an index
stays valid for every later publication of the same table; :func:`~._driver.gram_against`
checks that the entries it read are still those of the settings' tables.
"""
from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport prange

import numpy as np

from ..errors import InvalidParameterError
from ._packing cimport Packed, PackedSequences, PackedTrees, TreeView, tree_view
from ._readonly import frozen_copy
from ._tables cimport SHARED_FEATURES
from ._settings cimport EngineSettings, PATH, TREE
from .kinds import KIND_TRAITS

_SMOOTHED = 1 << 32  # buckets from here on are similarity groups (BY_KEY_OR_GROUP)
PRODUCT_RUN = 1 << 27  # multiply-adds of the block product between two checks for signals (about 0.05 s)


cdef enum:
    ROWS = 4    # query rows per tile of dot products
    PANEL = 6   # fixed rows per tile (and per panel of the transposed group vectors)
    STRIPS = 16  # panels per work item of the block product
    ITEM = 6    # numbers per work item


cdef void dot_tile(const double* q, const double* panel, int dim, double* out, long long ld) noexcept nogil:
    """out[r * ld + c] = <q_r, f_c> for ``ROWS`` query rows (``q``, dim apart) and the
    ``PANEL`` fixed rows of ``panel`` (transposed: coordinate t of row c at t * PANEL + c),
    each summed in coordinate order. A function of its own (not inline) so that the
    compiler keeps the accumulators in vector registers."""
    cdef double acc[ROWS][PANEL]
    cdef const double* p
    cdef double x
    cdef int r, c, t
    for r in range(ROWS):
        for c in range(PANEL):
            acc[r][c] = 0.0
    for t in range(dim):
        p = panel + t * PANEL
        for r in range(ROWS):
            x = q[r * dim + t]
            for c in range(PANEL):
                acc[r][c] += x * p[c]
    for r in range(ROWS):
        for c in range(PANEL):
            out[r * ld + c] = acc[r][c]


cdef void block_product(const double* queries, const double* panels, int dim, double* dots, const long long* item,
                        Py_ssize_t n_items, int n_threads) noexcept nogil:
    """The work items of a block product (:func:`product_item`, ``ITEM`` numbers each),
    spread over the threads."""
    cdef Py_ssize_t k
    if n_threads == 1:
        for k in range(n_items):
            product_item(queries, panels, dim, dots, item + ITEM * k)
    else:
        for k in prange(n_items, num_threads=n_threads, schedule="dynamic"):
            product_item(queries, panels, dim, dots, item + ITEM * k)


cdef void product_item(const double* queries, const double* panels, int dim, double* dots,
                       const long long* item) noexcept nogil:
    """One work item: the dot products of ``item[1]`` query rows (a multiple of ``ROWS``)
    from row ``item[0]`` of ``queries`` with the fixed rows of ``item[3]`` panels from panel
    ``item[2]``, written from ``dots[item[4]]`` on in rows of ``item[5]`` values. Panel by
    panel, so that each panel stays in cache for all the query rows."""
    cdef long long s, r, ld = item[5]
    for s in range(item[3]):
        for r in range(item[1] // ROWS):
            dot_tile(queries + (item[0] + r * ROWS) * dim, panels + (item[2] + s) * dim * PANEL, dim,
                     dots + item[4] + r * ROWS * ld + s * PANEL, ld)


cdef class FixedSet:
    """The one-against-many index of the structures ``packed`` for the kernel
    ``settings`` (see the module): ``gram_against(settings, A, index)`` then gives
    K(A[r], packed[c]) for every r and c. Immutable once built; the arrays are read-only.

    ``labels``, ``child_ptr`` and ``child_idx`` are the index nodes (distinct subtrees of
    trees, distinct labels of paths) sorted by bucket; ``buckets`` and ``bucket_start``
    the ranges of the buckets; ``occurrence_ptr``, ``occurrence_structure`` and
    ``occurrence_count`` where each subtree occurs; ``roots`` each fixed tree's root.
    SPTK: ``vector_groups`` the similarity groups with vectors, ``panel_start`` their
    panels in ``group_panels`` (the fixed set's distinct rows of each group, transposed
    ``PANEL`` rows at a time), and ``vector_slot`` each index node's place among its
    group's rows. Paths: ``path_node`` the index node of each position of the fixed paths."""

    def __init__(self, EngineSettings settings not None, PackedStructures packed not None):
        if self.ready:
            raise InvalidParameterError("a FixedSet cannot be initialized twice")
        if not settings.ready:
            raise InvalidParameterError("the EngineSettings was not initialized")
        settings.check_operands(packed, packed)
        self.kind = settings.settings.kind
        self.packed = packed
        self.n_structures = packed.n_structures
        self.fixed.rule = KIND_TRAITS[self.kind].bucket_rule
        self.fixed.n_structures = <int>packed.n_structures
        empty_int, empty_long = np.zeros(1, np.int32), np.zeros(1, np.int64)
        self.labels = self.child_ptr = self.child_idx = self.bucket_start = self.roots = empty_int
        self.occurrence_structure = self.vector_slot = self.path_node = empty_int
        self.buckets = self.occurrence_ptr = empty_long
        self.occurrence_count = np.zeros(1)
        self.vector_groups = np.zeros(0, np.int32)
        self.panel_start = np.zeros(1, np.int64)
        self.group_panels = np.zeros(1)
        self.described = self.first_rows = np.zeros(0, np.int32)
        self.features = self.feature_node = empty_int
        self.feature_ptr = empty_long
        self.fixed.n_features = 0
        if settings.settings.family == TREE:
            self._index_trees(settings)
        elif settings.settings.family == PATH:
            self._index_paths(settings)
        self.description = self._read_tables(settings)
        self._point()
        self.ready = True

    cdef _index_trees(self, EngineSettings settings):
        """Hash-cons the fixed trees into distinct subtrees, sort them by bucket and label,
        and record their occurrences."""
        cdef PackedTrees trees = <PackedTrees>self.packed
        cdef const Packed* p = &trees.packed
        cdef Py_ssize_t t, n_total = p.node_offset[self.n_structures]
        cdef int[::1] node_index = np.empty(n_total, dtype=np.int32)
        cdef dict ids = {}
        cdef list labels = [], keys = [], children = []
        cdef TreeView v
        cdef int x, k
        cdef long long o
        for t in range(self.n_structures):
            v = tree_view(p, t)
            o = p.node_offset[t]
            for x in range(v.n - 1, -1, -1):  # children first
                kids = tuple([node_index[o + v.child_idx[k]] for k in range(v.child_ptr[x], v.child_ptr[x + 1])])
                identity = (v.label[x], kids)
                found = ids.get(identity)
                if found is None:
                    found = ids[identity] = len(labels)
                    labels.append(v.label[x])
                    keys.append(v.key[x])
                    children.append(kids)
                node_index[o + x] = found
        n = len(labels)
        label = np.array(labels, dtype=np.int32)
        order, position, bucket = self._sort(settings, label, np.array(keys, dtype=np.int32))
        counts = np.array([len(c) for c in children], dtype=np.int64)
        flat = np.fromiter((c for kids in children for c in kids), dtype=np.int32, count=int(counts.sum()))
        first_child = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=first_child[1:])
        child_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts[order], out=child_ptr[1:])
        gather = np.repeat(first_child[order] - child_ptr[:n], counts[order]) + np.arange(child_ptr[n])
        self.child_ptr = frozen_copy(child_ptr, np.int32)
        self.child_idx = frozen_copy(np.append(position[flat[gather]], 0), np.int32)
        # occurrences: (index node, fixed tree) with their counts, grouped by index node
        sizes = np.diff(np.asarray(trees.node_offset))
        final = position[np.asarray(node_index)]
        pairs = final.astype(np.int64) * max(self.n_structures, 1) + np.repeat(np.arange(self.n_structures), sizes)
        occurring, occurrences = np.unique(pairs, return_counts=True)
        occurrence_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(occurring // max(self.n_structures, 1), minlength=n), out=occurrence_ptr[1:])
        self.occurrence_ptr = frozen_copy(occurrence_ptr, np.int64)
        self.occurrence_structure = frozen_copy(np.append(occurring % max(self.n_structures, 1), 0), np.int32)
        self.occurrence_count = frozen_copy(np.append(occurrences, 0), np.float64)
        self.roots = frozen_copy(np.append(final[np.asarray(trees.node_offset)[: self.n_structures]], 0), np.int32)
        self.described = np.unique(label)
        if self.fixed.rule == BY_KEY_OR_GROUP:
            self._group_vectors(settings, bucket)

    cdef _index_paths(self, EngineSettings settings):
        """The distinct tuple labels of the fixed paths, sorted by bucket and label, and the
        index node of each position."""
        cdef PackedSequences paths = <PackedSequences>self.packed
        labels = np.asarray(paths.label)[: int(paths.node_offset[self.n_structures])]
        distinct = np.unique(labels).astype(np.int32)
        _, position, _ = self._sort(settings, distinct, np.zeros_like(distinct))
        self.path_node = frozen_copy(np.append(position[np.searchsorted(distinct, labels)], 0), np.int32)
        self.described = distinct
        self._index_features(settings)

    cdef _index_features(self, EngineSettings settings):
        """Paths of feature positions: the index nodes of each feature (the postings of the
        index nodes whose node label is a set of features), so that a query position meets
        only the index nodes it shares a feature with, once per shared feature
        (``_one_against_many.path_row``)."""
        if settings.tuples is None:
            return
        table = settings.tuples.node_similarity
        label = np.asarray(self.labels)[: self.fixed.n_nodes]
        node = np.asarray(settings.tuples.nodes)[label]
        featured = np.flatnonzero(np.asarray(table.kinds)[node] == SHARED_FEATURES)
        if not len(featured):
            return
        rows = np.asarray(table.features)[node[featured]]
        present = rows >= 0
        pairs = np.stack([rows[present], np.broadcast_to(featured[:, None], rows.shape)[present]], axis=1)
        pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
        features, first = np.unique(pairs[:, 0], return_index=True)
        self.features = frozen_copy(features, np.int32)
        self.feature_ptr = frozen_copy(np.append(first, len(pairs)), np.int64)
        self.feature_node = frozen_copy(pairs[:, 1], np.int32)
        self.fixed.n_features = <int>len(features)

    cdef _sort(self, EngineSettings settings, label, key):
        """Sort index nodes (their labels and match keys) by bucket, then label (by the
        label's first appearance among the nodes, not its id), then first appearance:
        (order, position of each node in it, sorted buckets). Sets the labels and the
        bucket ranges."""
        cdef Py_ssize_t i, n = len(label)
        cdef const int[::1] label_view = label, key_view = key
        bucket = np.empty(n, dtype=np.int64)
        first_seen = np.empty(n, dtype=np.int32)  # of each node's label: where the label first appears
        cdef long long[::1] bucket_view = bucket
        cdef int[::1] first_seen_view = first_seen
        cdef int[::1] first_of_label = np.full(int(label.max()) + 1 if n else 0, -1, dtype=np.int32)
        for i in range(n):
            bucket_view[i] = bucket_of(&settings.settings, self.fixed.rule, key_view[i], label_view[i])
            if first_of_label[label_view[i]] < 0:
                first_of_label[label_view[i]] = <int>i
            first_seen_view[i] = first_of_label[label_view[i]]
        order = np.lexsort((np.arange(n), first_seen, bucket))
        position = np.empty(n, dtype=np.int32)
        position[order] = np.arange(n, dtype=np.int32)
        bucket = bucket[order]
        distinct, first = np.unique(bucket, return_index=True)
        self.labels = frozen_copy(np.append(label[order], 0), np.int32)
        self.buckets = frozen_copy(np.append(distinct, 0), np.int64)
        self.bucket_start = frozen_copy(np.append(first, n), np.int32)
        self.fixed.n_nodes = <int>n
        self.fixed.n_buckets = <int>len(distinct)
        return order, position, bucket

    cdef _group_vectors(self, EngineSettings settings, bucket):
        """SPTK: the distinct vector rows of each similarity group's smoothed index nodes,
        transposed in panels of ``PANEL`` rows (the last padded with zeros), and the slot
        of each index node among its group's rows."""
        table = settings.similarity
        vectors = np.asarray(table.vectors)
        label = np.asarray(self.labels)[: self.fixed.n_nodes]
        rows = np.asarray(table.rows)[label]
        groups = np.asarray(table.groups)[label].astype(np.int64)
        used = (bucket >= _SMOOTHED) & (rows >= 0)
        span = len(vectors) + 1
        distinct, inverse = np.unique(groups[used] * span + rows[used], return_inverse=True)
        vector_groups, first = np.unique(distinct // span, return_index=True)
        slot = np.arange(len(distinct)) - first[np.searchsorted(vector_groups, distinct // span)]
        vector_slot = np.full(len(label), -1, dtype=np.int32)
        vector_slot[used] = slot[inverse]
        bounds = np.append(first, len(distinct))
        n_panels = -(-np.diff(bounds) // PANEL)
        panel_start = np.zeros(len(vector_groups) + 1, dtype=np.int64)
        np.cumsum(n_panels, out=panel_start[1:])
        dim = vectors.shape[1]
        panels = np.zeros((int(panel_start[len(vector_groups)]) * PANEL, dim))
        for g in range(len(vector_groups)):  # rows of a group, padded, then each panel transposed
            panels[panel_start[g] * PANEL : panel_start[g] * PANEL + bounds[g + 1] - bounds[g]] = vectors[
                distinct[bounds[g] : bounds[g + 1]] % span
            ]
        panels = panels.reshape(-1, PANEL, dim).transpose(0, 2, 1)
        self.vector_slot = frozen_copy(np.append(vector_slot, 0), np.int32)
        self.vector_groups = frozen_copy(vector_groups, np.int32)
        self.panel_start = frozen_copy(panel_start, np.int64)
        self.group_panels = frozen_copy(panels.reshape(-1) if panels.size else np.zeros(1), np.float64)
        self.first_rows = distinct[first] % span

    cdef _read_tables(self, EngineSettings settings):
        """What the index depends on in the settings' tables, for the labels it holds: SPTK
        the kinds, groups and vector rows of its labels and the first vector of each group;
        tuples the edges and nodes of its labels, which edges weigh 0, and the nodes' kinds
        and groups."""
        L = self.described
        if self.fixed.rule == BY_KEY_OR_GROUP:
            table = settings.similarity
            vectors = np.asarray(table.vectors)
            first = self.first_rows
            # flat: a table without vectors yet publishes one zero coordinate, later ones the true width
            first_vectors = vectors[first].ravel() if len(first) == 0 or first.max() < len(vectors) else None
            return (np.asarray(table.kinds)[L], np.asarray(table.groups)[L], np.asarray(table.rows)[L], first_vectors)
        if self.fixed.rule == BY_TUPLE:
            tuples = settings.tuples
            edges, nodes = np.asarray(tuples.edges)[L], np.asarray(tuples.nodes)[L]
            node_table = tuples.node_similarity
            return (edges, nodes, np.asarray(tuples.weights)[edges] == 0, np.asarray(node_table.kinds)[nodes],
                    np.asarray(node_table.groups)[nodes])
        return ()

    cdef check_settings(self, settings):
        """Raise unless the index was built for the kernel of ``settings`` and its tables
        (the publication it read, or a later one of the same table) still hold what it
        read; ``settings`` must already be checked against the packed fixed set."""
        if not self.ready:
            raise InvalidParameterError("the FixedSet was not initialized")
        cdef EngineSettings checked = settings
        if checked.settings.kind != self.kind:
            raise InvalidParameterError(f"the FixedSet was built for kernel kind {self.kind}, "
                                        f"not {checked.settings.kind}")
        current = self._read_tables(checked)
        if not all(b is not None and np.array_equal(a, b) for a, b in zip(self.description, current)):
            raise InvalidParameterError("the label tables differ from those the FixedSet was built with; "
                                        "build it against these tables or an earlier publication of them")

    def block_similarities(self, EngineSettings settings not None, PackedTrees A not None, Py_ssize_t start,
                           Py_ssize_t stop, *, int n_threads=1):
        """SPTK: the dot products of the smoothed labels of A's trees start..stop-1 with the
        fixed set's vector rows of their groups, once per distinct (query row, fixed row)
        pair, on ``n_threads`` threads (see the module). Returns (node_dot, dots): per
        smoothed node of those trees (A's ``smooth`` entries of the block, in order) the
        offset in ``dots`` of its row of dot products, indexed by ``vector_slot``, or -1
        when its label has no vector or its group no fixed rows."""
        if n_threads < 1:
            raise InvalidParameterError(f"n_threads must be >= 1, got {n_threads}")
        if not 0 <= start <= stop <= A.n_structures:
            raise InvalidParameterError(f"trees {start}..{stop - 1} are not trees of A (0..{A.n_structures - 1})")
        settings.check_operands(A, self.packed)
        self.check_settings(settings)  # the same vectors: rows of the same width
        smooth_offset = np.asarray(A.smooth_offset)
        lo, hi = int(smooth_offset[start]), int(smooth_offset[stop])
        node_dot = np.full(hi - lo, -1, dtype=np.int64)
        if hi == lo or not len(self.vector_groups):
            return node_dot, np.zeros(1)
        trees = np.repeat(np.arange(start, stop), np.diff(smooth_offset[start : stop + 1]))
        labels = np.asarray(A.label)[np.asarray(A.node_offset)[trees] + np.asarray(A.smooth)[lo:hi]]
        table = settings.similarity
        vectors = np.asarray(table.vectors)
        rows, groups = np.asarray(table.rows)[labels], np.asarray(table.groups)[labels]
        slot = np.minimum(np.searchsorted(self.vector_groups, groups), len(self.vector_groups) - 1)
        found = (np.asarray(self.vector_groups)[slot] == groups) & (rows >= 0)
        span = len(vectors) + 1
        needed, inverse = np.unique(slot[found].astype(np.int64) * span + rows[found], return_inverse=True)
        group_slot, query_rows = needed // span, needed % span
        # per group present: its needed query rows, padded to a multiple of ROWS, then its output block
        present, first, count = np.unique(group_slot, return_index=True, return_counts=True)
        padded = -(-count // ROWS) * ROWS
        query_start = np.zeros(len(present) + 1, dtype=np.int64)
        np.cumsum(padded, out=query_start[1:])
        panel_start = np.asarray(self.panel_start)
        n_panels = panel_start[present + 1] - panel_start[present]
        width = n_panels * PANEL
        dot_start = np.zeros(len(present) + 1, dtype=np.int64)
        np.cumsum(padded * width, out=dot_start[1:])
        in_group = np.repeat(np.arange(len(present)), count)  # the group of each needed row
        within = np.arange(len(needed)) - first[in_group]
        queries = np.zeros((int(query_start[len(present)]), vectors.shape[1]))
        queries[query_start[in_group] + within] = vectors[query_rows]
        dots = np.empty(max(int(dot_start[len(present)]), 1))
        # work items: (first query row, query rows, first panel, panels, output offset, row length)
        chunks = -(-n_panels // STRIPS)
        group = np.repeat(np.arange(len(present)), chunks)
        chunk = np.arange(len(group)) - np.repeat(np.cumsum(chunks) - chunks, chunks)
        items = np.stack([query_start[group], padded[group], panel_start[present][group] + chunk * STRIPS,
                          np.minimum(STRIPS, n_panels[group] - chunk * STRIPS),
                          dot_start[group] + chunk * STRIPS * PANEL, width[group]], axis=1).astype(np.int64)
        cdef const double[:, ::1] query_view = queries
        cdef const double[::1] panel_view = self.group_panels
        cdef double[::1] dot_view = dots
        cdef const long long[:, ::1] item_view = np.ascontiguousarray(items)
        cdef int dim = <int>vectors.shape[1]
        # the items in runs of about PRODUCT_RUN multiply-adds, signals checked between runs (Ctrl-C)
        work = np.cumsum(items[:, 1] * items[:, 3] * (PANEL * dim))
        bounds = np.searchsorted(work, np.arange(PRODUCT_RUN, work[len(work) - 1], PRODUCT_RUN)) if len(items) else []
        cdef Py_ssize_t run_start = 0, run_stop
        for run_stop in list(bounds) + [len(items)]:
            if run_stop > run_start:
                with nogil:
                    block_product(&query_view[0, 0], &panel_view[0], dim, &dot_view[0], &item_view[run_start, 0],
                                  run_stop - run_start, n_threads)
                PyErr_CheckSignals()
                run_start = run_stop
        node_dot[found] = (dot_start[in_group] + within * width[in_group])[inverse]
        return node_dot, dots

    cdef _point(self):
        """Point the ``Fixed`` struct at the arrays."""
        cdef const int[::1] labels = self.labels, child_ptr = self.child_ptr, child_idx = self.child_idx
        cdef const int[::1] bucket_start = self.bucket_start, structures = self.occurrence_structure
        cdef const int[::1] roots = self.roots, vector_slot = self.vector_slot, path_node = self.path_node
        cdef const long long[::1] buckets = self.buckets, occurrence_ptr = self.occurrence_ptr
        cdef const int[::1] features = self.features, feature_node = self.feature_node
        cdef const long long[::1] feature_ptr = self.feature_ptr
        cdef const double[::1] counts = self.occurrence_count
        self.fixed.label = &labels[0]
        self.fixed.child_ptr = &child_ptr[0]
        self.fixed.child_idx = &child_idx[0]
        self.fixed.bucket = &buckets[0]
        self.fixed.bucket_start = &bucket_start[0]
        self.fixed.occurrence_ptr = &occurrence_ptr[0]
        self.fixed.occurrence_structure = &structures[0]
        self.fixed.occurrence_count = &counts[0]
        self.fixed.root = &roots[0]
        self.fixed.vector_slot = &vector_slot[0]
        self.fixed.path_node = &path_node[0]
        self.fixed.feature = &features[0]
        self.fixed.feature_ptr = &feature_ptr[0]
        self.fixed.feature_node = &feature_node[0]
        self.fixed.path_offset = NULL
        if isinstance(self.packed, PackedSequences):
            self.fixed.path_offset = (<PackedSequences>self.packed).packed.node_offset

    def __len__(self):
        return self.n_structures

    def __repr__(self):
        return f"FixedSet({self.n_structures} structures, {self.fixed.n_nodes} index nodes, kind {self.kind})"
