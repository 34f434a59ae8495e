"""Structures packed for the engine: the compiled arrays of many trees or paths
concatenated, and the view of one tree inside them."""


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


cdef class PackedStructures:
    cdef Packed packed
    cdef readonly Py_ssize_t n_structures
    cdef readonly bint ready
    cdef readonly long long max_label  # the largest label id, -1 for no nodes
    cdef readonly object node_offset, label
    cdef _check_fresh(self)
    cdef _set_labels(self, labels)


cdef class PackedSequences(PackedStructures):
    pass


cdef class PackedTrees(PackedStructures):
    cdef readonly str match_key
    cdef readonly object key, child_ptr, child_idx, order, rank, smooth_offset, smooth
    cdef object used_labels, used_smooth  # the distinct label ids, and whether each was smoothed
    cdef bint smoothed_like(self, kinds) except -1


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


cdef inline bint is_leaf(const TreeView* t, int node) noexcept nogil:
    return t.child_ptr[node + 1] == t.child_ptr[node]
