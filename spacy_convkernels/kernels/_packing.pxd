"""Structures packed for the engine: the compiled arrays of many trees or paths
concatenated, and the view of one tree inside them."""


cdef struct Packed:
    const long long* node_offset
    const int* key
    const int* sorted_key           # trees: each tree's keys in its sorted node order (key[order[i]])
    const int* label
    const int* child_ptr
    const int* child_idx
    const int* order
    const int* rank
    const long long* smooth_offset
    const int* smooth
    # forests (PackedForests): label, order and rank are by node label; per node also
    const int* terminal
    const double* inside
    const double* outside
    const double* total             # per forest: Z
    const long long* edge_offset    # per forest: its first hyper-edge
    const int* edge_head            # per hyper-edge, sorted by head
    const int* edge_key             # production id
    const int* edge_order           # the forest's hyper-edges sorted by production id
    const double* edge_prob
    const long long* tail_ptr       # absolute offsets into tail_idx, one more than hyper-edges
    const int* tail_idx             # local node indices


cdef struct ForestView:
    int n
    int n_edges
    const int* label
    const int* order
    const int* rank
    const int* terminal
    const double* inside
    const double* outside
    double total
    const int* edge_head
    const int* edge_key
    const int* edge_order
    const double* edge_prob
    const long long* tail_ptr       # n_edges + 1 offsets into tail_idx
    const int* tail_idx


cdef struct TreeView:
    int n
    const int* key
    const int* sorted_key   # key[order[i]], so that merging two trees' sorted nodes reads one array each
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
    cdef readonly tuple sources  # the compiled structures: they hold the label ids packed here
    cdef _check_fresh(self)
    cdef _set_labels(self, labels)


cdef class PackedSequences(PackedStructures):
    pass


cdef class PackedTrees(PackedStructures):
    cdef readonly str match_key
    cdef readonly object key, sorted_key, child_ptr, child_idx, order, rank, smooth_offset, smooth
    cdef object used_labels, used_smooth  # the distinct label ids, and whether each was smoothed
    cdef bint smoothed_like(self, kinds) except -1


cdef class PackedForests(PackedStructures):
    cdef readonly object terminal, order, rank, inside, outside, total
    cdef readonly object edge_offset, edge_head, edge_key, edge_order, edge_prob, tail_ptr, tail_idx


cdef inline ForestView forest_view(const Packed* p, Py_ssize_t f) noexcept nogil:
    """Forest ``f`` of a packed collection, with local node and hyper-edge indices."""
    cdef ForestView v
    cdef long long o = p.node_offset[f], e = p.edge_offset[f]
    v.n = <int>(p.node_offset[f + 1] - o)
    v.n_edges = <int>(p.edge_offset[f + 1] - e)
    v.label = p.label + o
    v.order = p.order + o
    v.rank = p.rank + o
    v.terminal = p.terminal + o
    v.inside = p.inside + o
    v.outside = p.outside + o
    v.total = p.total[f]
    v.edge_head = p.edge_head + e
    v.edge_key = p.edge_key + e
    v.edge_order = p.edge_order + e
    v.edge_prob = p.edge_prob + e
    v.tail_ptr = p.tail_ptr + e + f     # n_edges + 1 offsets per forest
    v.tail_idx = p.tail_idx
    return v


cdef inline TreeView tree_view(const Packed* p, Py_ssize_t t) noexcept nogil:
    """Tree ``t`` of a packed collection: its own arrays, with local node indices."""
    cdef TreeView v
    cdef long long o = p.node_offset[t]
    v.n = <int>(p.node_offset[t + 1] - o)
    v.key = p.key + o
    v.sorted_key = p.sorted_key + o
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


cdef inline int n_children(const TreeView* t, int node) noexcept nogil:
    return t.child_ptr[node + 1] - t.child_ptr[node]
