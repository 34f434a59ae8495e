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
nodes and a child pair is found by a subtraction. Zelenko's kernel reads only the pairs of
roots: the index keeps each fixed tree's root.

Paths are indexed by their distinct tuple labels, sorted the same way (the similarities of
a query's tuples are then computed once for all the fixed paths); forests are kept as
packed, the forest kernel looping over them (its hyper-edge pairs are not shared).

For SPTK the index also keeps, per similarity group, the distinct vector rows of the fixed
set's smoothed labels as one contiguous matrix: :meth:`FixedSet.block_similarities` gets
the dot products of a block of queries' smoothed labels with them from one BLAS product
per group (the expensive part of CSPTK, done once per distinct pair of rows).

An index reads the label tables when built (kinds, groups and vector rows of SPTK labels,
edges and nodes of tuples). Tables only grow, their entries never change, so an index
stays valid for every later publication of the same table; :func:`~._driver.gram_against`
checks that the entries it read are still those of the settings' tables.
"""
import numpy as np

from ..errors import InvalidParameterError
from ._packing cimport Packed, PackedSequences, PackedTrees, TreeView, tree_view
from ._readonly import frozen_copy
from ._settings cimport (EngineSettings, FOREST, SMOOTHED_PARTIAL_TREE, SUBSEQUENCE_PATH, SUBSET_TREE,
                         SUBTREE_KELP, SUBTREE_TEXTBOOK, PARTIAL_TREE, ZELENKO_TREE)

_RULES = {SUBTREE_KELP: BY_KEY, SUBTREE_TEXTBOOK: BY_KEY, SUBSET_TREE: BY_KEY, PARTIAL_TREE: BY_KEY,
          SMOOTHED_PARTIAL_TREE: BY_KEY_OR_GROUP, ZELENKO_TREE: BY_TUPLE, SUBSEQUENCE_PATH: BY_TUPLE,
          FOREST: NO_BUCKETS}
_SMOOTHED = 1 << 32  # buckets from here on are similarity groups (BY_KEY_OR_GROUP)


cdef class FixedSet:
    """The one-against-many index of the structures ``packed`` for the kernel
    ``settings`` (see the module): ``gram_against(settings, A, index)`` then gives
    K(A[r], packed[c]) for every r and c. Immutable once built; the arrays are read-only.

    ``labels``, ``child_ptr`` and ``child_idx`` are the index nodes (distinct subtrees of
    trees, distinct labels of paths) sorted by bucket; ``buckets`` and ``bucket_start``
    the ranges of the buckets; ``occurrence_ptr``, ``occurrence_structure`` and
    ``occurrence_count`` where each subtree occurs; ``roots`` each fixed tree's root.
    SPTK: ``vector_groups`` the similarity groups with vectors, ``group_row_start`` their
    rows in ``group_vectors`` (the fixed set's distinct rows of each group), and
    ``vector_slot`` each index node's place among its group's rows. Paths: ``path_node``
    the index node of each position of the fixed paths."""

    def __init__(self, EngineSettings settings not None, PackedStructures packed not None):
        if self.ready:
            raise InvalidParameterError("a FixedSet cannot be initialized twice")
        if not settings.ready:
            raise InvalidParameterError("the EngineSettings was not initialized")
        settings.check_operands(packed, packed)
        self.kind = settings.settings.kind
        self.packed = packed
        self.n_structures = packed.n_structures
        self.fixed.rule = _RULES[self.kind]
        self.fixed.n_structures = <int>packed.n_structures
        empty_int, empty_long = np.zeros(1, np.int32), np.zeros(1, np.int64)
        self.labels = self.child_ptr = self.child_idx = self.bucket_start = self.roots = empty_int
        self.occurrence_structure = self.vector_slot = self.path_node = self.group_row_start = empty_int
        self.buckets = self.occurrence_ptr = empty_long
        self.occurrence_count = np.zeros(1)
        self.vector_groups = np.zeros(0, np.int32)
        self.group_vectors = np.zeros((0, 1))
        self.described = self.first_rows = np.zeros(0, np.int32)
        if self.kind == SUBSEQUENCE_PATH:
            self._index_paths(settings)
        elif self.kind != FOREST:
            self._index_trees(settings)
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

    cdef _sort(self, EngineSettings settings, label, key):
        """Sort index nodes (their labels and match keys) by bucket, then label, then
        first appearance: (order, position of each node in it, sorted buckets). Sets the
        labels and the bucket ranges."""
        cdef Py_ssize_t i, n = len(label)
        cdef const int[::1] label_view = label, key_view = key
        bucket = np.empty(n, dtype=np.int64)
        cdef long long[::1] bucket_view = bucket
        for i in range(n):
            bucket_view[i] = bucket_of(&settings.settings, self.fixed.rule, key_view[i], label_view[i])
        order = np.lexsort((np.arange(n), label, bucket))
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
        one contiguous matrix, and the slot of each index node among its group's rows."""
        table = settings.similarity
        label = np.asarray(self.labels)[: self.fixed.n_nodes]
        rows = np.asarray(table.rows)[label]
        groups = np.asarray(table.groups)[label].astype(np.int64)
        used = (bucket >= _SMOOTHED) & (rows >= 0)
        span = len(table.vectors) + 1
        distinct, inverse = np.unique(groups[used] * span + rows[used], return_inverse=True)
        vector_groups, first = np.unique(distinct // span, return_index=True)
        slot = np.arange(len(distinct)) - first[np.searchsorted(vector_groups, distinct // span)]
        vector_slot = np.full(len(label), -1, dtype=np.int32)
        vector_slot[used] = slot[inverse]
        self.vector_slot = frozen_copy(np.append(vector_slot, 0), np.int32)
        self.vector_groups = frozen_copy(vector_groups, np.int32)
        self.group_row_start = frozen_copy(np.append(first, len(distinct)), np.int64)
        self.group_vectors = frozen_copy(np.asarray(table.vectors)[distinct % span], np.float64)
        self.first_rows = (distinct % span)[first]

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
            first_vectors = vectors[first] if len(first) == 0 or first.max() < len(vectors) else None
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
                           Py_ssize_t stop):
        """SPTK: the dot products of the smoothed labels of A's trees start..stop-1 with their
        group's vector rows in the fixed set, from one BLAS product per group (summed in
        BLAS's order, which may differ from the plain engine's by rounding, about 1e-16
        relative). Returns (node_dot, dots): per smoothed node of those trees (A's
        ``smooth`` entries of the block, in order) the offset in ``dots`` of its row of dot
        products, or -1 when its label has no vector or its group no fixed rows."""
        smooth_offset = np.asarray(A.smooth_offset)
        lo, hi = int(smooth_offset[start]), int(smooth_offset[stop])
        node_dot = np.full(hi - lo, -1, dtype=np.int64)
        if hi == lo or not len(self.vector_groups):
            return node_dot, np.zeros(1)
        trees = np.repeat(np.arange(start, stop), np.diff(smooth_offset[start : stop + 1]))
        labels = np.asarray(A.label)[np.asarray(A.node_offset)[trees] + np.asarray(A.smooth)[lo:hi]]
        table = settings.similarity
        vectors = np.asarray(table.vectors)
        rows = np.asarray(table.rows)[labels]
        slot = np.searchsorted(self.vector_groups, np.asarray(table.groups)[labels])
        slot = np.minimum(slot, len(self.vector_groups) - 1)
        found = (np.asarray(self.vector_groups)[slot] == np.asarray(table.groups)[labels]) & (rows >= 0)
        span = len(vectors) + 1
        needed, inverse = np.unique(slot[found].astype(np.int64) * span + rows[found], return_inverse=True)
        group_slot, query_rows = needed // span, needed % span
        starts = np.asarray(self.group_row_start)
        width = (starts[1:] - starts[:-1])[group_slot]  # the fixed rows of each needed pair's group
        offset = np.zeros(len(needed) + 1, dtype=np.int64)
        np.cumsum(width, out=offset[1:])
        dots = np.empty(max(int(offset[-1]), 1))
        fixed_vectors = np.asarray(self.group_vectors)
        bounds = np.flatnonzero(np.diff(group_slot)) + 1
        for first, last in zip(np.append(0, bounds), np.append(bounds, len(needed))):
            g = group_slot[first]
            block = dots[offset[first] : offset[last]].reshape(last - first, width[first])
            np.matmul(vectors[query_rows[first:last]], fixed_vectors[starts[g] : starts[g + 1]].T, out=block)
        node_dot[found] = offset[inverse]
        return node_dot, dots

    cdef _point(self):
        """Point the ``Fixed`` struct at the arrays."""
        cdef const int[::1] labels = self.labels, child_ptr = self.child_ptr, child_idx = self.child_idx
        cdef const int[::1] bucket_start = self.bucket_start, structures = self.occurrence_structure
        cdef const int[::1] roots = self.roots, vector_slot = self.vector_slot, path_node = self.path_node
        cdef const long long[::1] buckets = self.buckets, occurrence_ptr = self.occurrence_ptr
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
        self.fixed.path_offset = NULL
        if self.kind == SUBSEQUENCE_PATH:
            self.fixed.path_offset = (<PackedSequences>self.packed).packed.node_offset

    def __len__(self):
        return self.n_structures

    def __repr__(self):
        return f"FixedSet({self.n_structures} structures, {self.fixed.n_nodes} index nodes, kind {self.kind})"
