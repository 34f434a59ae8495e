# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Packing compiled structures for the engine (see ``_packing.pxd``). A packed set is
checked when built (sizes, preorder children, sorted orders) so that every read of the
engine stays inside its arrays, and is immutable afterwards."""
import numpy as np

from ..errors import InvalidParameterError
from ._readonly import frozen_copy
from ._tables cimport EXACT


cdef class PackedStructures:
    """Compiled structures concatenated for the engine (the ``Packed`` struct). Immutable:
    the arrays are read-only copies, checked when packed, and an object cannot be
    initialized twice, so what the engine reads never changes under it."""

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
        self.label = frozen_copy(np.append(labels, 0), np.int32)  # a trailing 0 keeps it non-empty


cdef class PackedSequences(PackedStructures):
    """Compiled paths (tuple label ids) concatenated: ``label[node_offset[s]:node_offset[s+1]]``."""

    def __init__(self, compiled_paths):
        self._check_fresh()
        paths = self.sources = tuple(compiled_paths)
        self.n_structures = len(paths)
        parts = [np.asarray(p.labels).ravel() for p in paths]
        offsets = np.zeros(len(paths) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in parts], out=offsets[1:])
        self.node_offset = frozen_copy(offsets, np.int64)
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

    def __init__(self, compiled_trees, *, str key, smooth_kinds=None):
        self._check_fresh()
        if key not in ("production", "content", "label"):
            raise InvalidParameterError(f"unknown match key {key!r}")
        self.match_key = key
        trees = self.sources = tuple(compiled_trees)
        self.n_structures = len(trees)
        sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
        if (sizes < 1).any():
            raise InvalidParameterError(f"tree {int(np.argmax(sizes < 1))} has no nodes")
        offsets = np.zeros(len(trees) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        self.node_offset = frozen_copy(offsets, np.int64)

        def cat(name, extra):
            """The trees' arrays ``name``, each of n_nodes + extra entries, concatenated and a 0 appended."""
            parts = [np.asarray(getattr(t, name)).ravel() for t in trees]
            lengths = np.array([len(p) for p in parts], dtype=np.int64)
            if len(trees) and (lengths != sizes + extra).any():
                bad = int(np.argmax(lengths != sizes + extra))
                raise InvalidParameterError(f"tree {bad}: {name} has {lengths[bad]} entries for {sizes[bad]} nodes")
            return frozen_copy(np.concatenate(parts + [np.zeros(1, dtype=np.int32)]), np.int32)

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
        self.smooth_offset = frozen_copy(smooth_offset, np.int64)
        local = np.flatnonzero(is_smooth) - offsets[tree_of_node[is_smooth]]
        self.smooth = frozen_copy(np.append(local, 0), np.int32)
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
        in_order = np.asarray(self.order[:-1], dtype=np.int64) + offsets[tree_of_node]  # checked above
        self.sorted_key = frozen_copy(np.append(np.asarray(self.key)[in_order], 0), np.int32)
        cdef const int[::1] sorted_keys = self.sorted_key
        self.packed.sorted_key = &sorted_keys[0]
        self.ready = True

    cdef bint smoothed_like(self, kinds) except -1:
        """Whether the nodes packed as smoothed are those that the similarity kinds smooth."""
        kinds = np.asarray(kinds)
        if self.used_labels.size == 0:
            return True
        return self.max_label < len(kinds) and np.array_equal(kinds[self.used_labels] != EXACT, self.used_smooth)

    def __repr__(self):
        return f"PackedTrees({self.n_structures} trees, key {self.match_key!r})"


cdef class PackedForests(PackedStructures):
    """Compiled forests (:class:`~spacy_convkernels.structures.forest.CompiledForest`)
    concatenated for the forest kernel: nodes (label, terminal flag, inside and outside
    probabilities, order by label) and hyper-edges (head, production, probability, tails),
    with local indices. Checked when packed: sizes, every index inside its forest,
    hyper-edges sorted by head with every tail before its head, sorted orders, finite
    non-negative probabilities and a positive Z, so every read of the engine stays inside
    the arrays; immutable afterwards."""

    def __init__(self, compiled_forests):
        self._check_fresh()
        forests = self.sources = tuple(compiled_forests)
        self.n_structures = n = len(forests)
        sizes = np.array([f.n_nodes for f in forests], dtype=np.int64)
        n_edges = np.array([f.n_edges for f in forests], dtype=np.int64)
        if (sizes < 1).any():
            raise InvalidParameterError(f"forest {int(np.argmax(sizes < 1))} has no nodes")
        node_offset = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(sizes, out=node_offset[1:])
        edge_offset = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(n_edges, out=edge_offset[1:])

        def cat(name, dtype, lengths):
            parts = [np.asarray(getattr(f, name)).ravel() for f in forests]
            found = np.array([len(p) for p in parts], dtype=np.int64)
            if n and (found != lengths).any():
                bad = int(np.argmax(found != lengths))
                raise InvalidParameterError(f"forest {bad}: {name} has {found[bad]} entries, not {lengths[bad]}")
            return np.concatenate(parts + [np.zeros(0, dtype=dtype)]).astype(dtype)

        labels = cat("labels", np.int32, sizes)
        terminal = cat("terminal", np.int32, sizes)
        order = cat("by_label", np.int32, sizes)
        rank = cat("rank_by_label", np.int32, sizes)
        inside = cat("inside", np.float64, sizes)
        outside = cat("outside", np.float64, sizes)
        total = np.array([f.total for f in forests], dtype=np.float64)
        head = cat("edge_head", np.int32, n_edges)
        key = cat("productions", np.int32, n_edges)
        edge_order = cat("by_production", np.int32, n_edges)
        prob = cat("edge_prob", np.float64, n_edges)
        local_ptr = cat("tail_ptr", np.int64, n_edges + 1)
        n_tails = np.array([f.tail_ptr[len(f.tail_ptr) - 1] if len(f.tail_ptr) else 0 for f in forests], dtype=np.int64)
        tail_offset = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(n_tails, out=tail_offset[1:])
        tails = cat("tail_idx", np.int32, n_tails)
        forest_of_node = np.repeat(np.arange(n), sizes)
        forest_of_edge = np.repeat(np.arange(n), n_edges)
        forest_of_ptr = np.repeat(np.arange(n), n_edges + 1)
        self._set_labels(labels)
        _check_forests(labels, terminal, order, rank, inside, outside, total, head, key, edge_order, prob,
                       local_ptr, tails, sizes, n_edges, n_tails, node_offset, edge_offset, tail_offset,
                       forest_of_node, forest_of_edge, forest_of_ptr)
        self.node_offset = frozen_copy(node_offset, np.int64)
        self.edge_offset = frozen_copy(edge_offset, np.int64)
        self.terminal = frozen_copy(np.append(terminal, 0), np.int32)
        self.order = frozen_copy(np.append(order, 0), np.int32)
        self.rank = frozen_copy(np.append(rank, 0), np.int32)
        self.inside = frozen_copy(np.append(inside, 0), np.float64)
        self.outside = frozen_copy(np.append(outside, 0), np.float64)
        self.total = frozen_copy(np.append(total, 0), np.float64)
        self.edge_head = frozen_copy(np.append(head, 0), np.int32)
        self.edge_key = frozen_copy(np.append(key, 0), np.int32)
        self.edge_order = frozen_copy(np.append(edge_order, 0), np.int32)
        self.edge_prob = frozen_copy(np.append(prob, 0), np.float64)
        self.tail_ptr = frozen_copy(np.append(local_ptr + tail_offset[forest_of_ptr], 0), np.int64)
        self.tail_idx = frozen_copy(np.append(tails, 0), np.int32)
        cdef const long long[::1] node_offsets = self.node_offset, edge_offsets = self.edge_offset
        cdef const long long[::1] ptr = self.tail_ptr
        cdef const int[::1] label_view = self.label, terminal_view = self.terminal, order_view = self.order
        cdef const int[::1] rank_view = self.rank, head_view = self.edge_head, key_view = self.edge_key
        cdef const int[::1] edge_order_view = self.edge_order, tail_view = self.tail_idx
        cdef const double[::1] inside_view = self.inside, outside_view = self.outside, total_view = self.total
        cdef const double[::1] prob_view = self.edge_prob
        self.packed.node_offset = &node_offsets[0]
        self.packed.label = &label_view[0]
        self.packed.order = &order_view[0]
        self.packed.rank = &rank_view[0]
        self.packed.terminal = &terminal_view[0]
        self.packed.inside = &inside_view[0]
        self.packed.outside = &outside_view[0]
        self.packed.total = &total_view[0]
        self.packed.edge_offset = &edge_offsets[0]
        self.packed.edge_head = &head_view[0]
        self.packed.edge_key = &key_view[0]
        self.packed.edge_order = &edge_order_view[0]
        self.packed.edge_prob = &prob_view[0]
        self.packed.tail_ptr = &ptr[0]
        self.packed.tail_idx = &tail_view[0]
        self.ready = True

    def __repr__(self):
        return f"PackedForests({self.n_structures} forests)"


def _check_forests(labels, terminal, order, rank, inside, outside, total, head, key, edge_order, prob, local_ptr,
                   tails, sizes, n_edges, n_tails, node_offset, edge_offset, tail_offset, forest_of_node,
                   forest_of_edge, forest_of_ptr):
    """Raise :class:`InvalidParameterError` naming the first forest that breaks a rule of
    :class:`PackedForests`."""

    def require(ok, forest_of, rule):
        ok = np.asarray(ok, dtype=bool)
        if not ok.all():
            raise InvalidParameterError(f"forest {int(forest_of[int(np.argmin(ok))])}: {rule}")

    n_nodes = sizes[forest_of_node]
    require((order >= 0) & (order < n_nodes) & (rank >= 0) & (rank < n_nodes), forest_of_node,
            "node orders and ranks must be local node indices")
    global_order = order + node_offset[forest_of_node]
    require(np.sort(global_order) == np.arange(len(order)), forest_of_node, "the node order must be a permutation")
    require(rank[global_order] == np.arange(len(order)) - node_offset[forest_of_node], forest_of_node,
            "the node ranks must invert the node order")
    same = forest_of_node[1:] == forest_of_node[: len(forest_of_node) - 1]
    require(~same | (labels[global_order[1:]] >= labels[global_order[: len(global_order) - 1]]), forest_of_node[1:],
            "the node order must sort the nodes by label")
    valid = np.isfinite(inside) & (inside >= 0) & np.isfinite(outside) & (outside >= 0)
    require(valid & ((terminal == 0) | (terminal == 1)), forest_of_node,
            "inside and outside probabilities must be finite and >= 0, terminal flags 0 or 1")
    require(np.isfinite(total) & (total > 0), np.arange(len(total)), "Z must be finite and positive")
    n_edge_nodes = sizes[forest_of_edge]
    require((head >= 0) & (head < n_edge_nodes), forest_of_edge, "hyper-edge heads must be local node indices")
    same = forest_of_edge[1:] == forest_of_edge[: len(forest_of_edge) - 1]
    require(~same | (head[1:] >= head[: len(head) - 1]), forest_of_edge[1:], "hyper-edges must be sorted by head")
    require(np.isfinite(prob) & (prob > 0), forest_of_edge, "hyper-edge probabilities must be finite and > 0")
    require((edge_order >= 0) & (edge_order < n_edges[forest_of_edge]), forest_of_edge,
            "the hyper-edge order must hold local hyper-edge indices")
    global_edges = edge_order + edge_offset[forest_of_edge]
    require(np.sort(global_edges) == np.arange(len(edge_order)), forest_of_edge,
            "the hyper-edge order must be a permutation")
    require(~same | (key[global_edges[1:]] >= key[global_edges[: len(global_edges) - 1]]), forest_of_edge[1:],
            "the hyper-edge order must sort the hyper-edges by production")
    first = edge_offset[: len(sizes)] + np.arange(len(sizes))  # each forest's first tail pointer
    require(local_ptr[first] == 0, np.arange(len(sizes)), "tail pointers must start at 0")
    require(local_ptr[first + n_edges] == n_tails, np.arange(len(sizes)), "tail pointers must end at the tails")
    rise = np.delete(local_ptr[1:] - local_ptr[: len(local_ptr) - 1], first[1:] - 1) if len(local_ptr) else local_ptr
    require(rise > 0, forest_of_edge, "every hyper-edge must have tails")
    forest_of_tail = np.repeat(np.arange(len(sizes)), n_tails)
    edge_of_tail = np.repeat(np.arange(len(head)), rise) if len(head) else np.zeros(0, dtype=np.int64)
    require((tails >= 0) & (tails < head[edge_of_tail]), forest_of_tail, "every tail must come before its head")
    has_edges = np.zeros(len(labels), dtype=bool)
    has_edges[head + node_offset[forest_of_edge]] = True
    require(terminal == ~has_edges, forest_of_node, "a node is terminal exactly when it has no hyper-edge")
