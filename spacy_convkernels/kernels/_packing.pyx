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
        paths = list(compiled_paths)
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
        trees = list(compiled_trees)
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
        self.ready = True

    cdef bint smoothed_like(self, kinds) except -1:
        """Whether the nodes packed as smoothed are those that the similarity kinds smooth."""
        kinds = np.asarray(kinds)
        if self.used_labels.size == 0:
            return True
        return self.max_label < len(kinds) and np.array_equal(kinds[self.used_labels] != EXACT, self.used_smooth)

    def __repr__(self):
        return f"PackedTrees({self.n_structures} trees, key {self.match_key!r})"
