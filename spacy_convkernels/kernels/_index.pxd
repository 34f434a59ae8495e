"""The one-against-many index of a fixed set of structures (see ``_index.pyx``): its
nodes sorted into buckets of possible partners, and the bucket of a query node."""
from ._packing cimport PackedStructures
from ._settings cimport BY_KEY, BY_KEY_OR_GROUP, BY_TUPLE, NO_BUCKETS, EngineSettings, Settings
from ._tables cimport EXACT, Similarity, TupleSimilarity


cdef struct Fixed:
    int rule                        # a BucketRule (``kinds.py``, C constants in ``_settings.pxd``)
    int n_structures
    int n_nodes                     # distinct subtrees (trees) or distinct tuple labels (paths)
    const int* label                # per index node, sorted by (bucket, label)
    const int* child_ptr            # trees: per index node, n_nodes + 1 offsets into child_idx
    const int* child_idx            # trees: the index nodes of its children, left to right
    int n_buckets
    const long long* bucket         # the distinct buckets, increasing
    const int* bucket_start         # n_buckets + 1: bucket b holds index nodes bucket_start[b] .. [b + 1] - 1
    const long long* occurrence_ptr  # trees: per index node, n_nodes + 1 offsets into the two arrays below
    const int* occurrence_structure  # the fixed structures in which the subtree occurs
    const double* occurrence_count   # and how often
    const int* root                 # trees: per fixed structure, the index node of its root
    const int* vector_slot          # SPTK: per index node, its vector row's place among its group's rows, or -1
    const long long* path_offset    # paths: per fixed path, n_structures + 1 offsets into path_node
    const int* path_node            # paths: the index node (distinct label) of each position
    # paths of feature positions: the distinct features of the index nodes (increasing), and
    # n_features + 1 offsets into feature_node, the index nodes of each feature (increasing)
    int n_features
    const int* feature
    const long long* feature_ptr
    const int* feature_node


cdef class FixedSet:
    cdef Fixed fixed
    cdef readonly int kind
    cdef readonly Py_ssize_t n_structures
    cdef readonly PackedStructures packed
    cdef readonly object labels, child_ptr, child_idx, buckets, bucket_start
    cdef readonly object occurrence_ptr, occurrence_structure, occurrence_count, roots
    cdef readonly object vector_slot, vector_groups, panel_start, group_panels, path_node
    cdef readonly object features, feature_ptr, feature_node
    cdef object described, description, first_rows  # the label ids and vector rows read when built, what was read
    cdef bint ready
    cdef _index_trees(self, EngineSettings settings)
    cdef _index_paths(self, EngineSettings settings)
    cdef _index_features(self, EngineSettings settings)
    cdef _sort(self, EngineSettings settings, label, key)
    cdef _group_vectors(self, EngineSettings settings, bucket)
    cdef _read_tables(self, EngineSettings settings)
    cdef _point(self)
    cdef check_settings(self, settings)


cdef inline long long bucket_of(const Settings* prm, int rule, int key, int label) noexcept nogil:
    """The bucket of a node with match key ``key`` and label id ``label``: two nodes can
    pair (have a non-zero Delta) only within one bucket. -1: the node pairs with nothing
    (a tuple whose edge weighs 0)."""
    cdef const Similarity* s
    cdef const TupleSimilarity* t
    cdef int e, n
    if rule == BY_KEY:
        return key
    if rule == BY_KEY_OR_GROUP:
        s = prm.similarity
        if s.kind[label] == EXACT:
            return key
        return (1LL << 32) | s.group[label]
    t = prm.tuples
    e = t.edge[label]
    if t.weight[e] == 0.0:
        return -1
    n = t.node[label]
    if t.nodes.kind[n] == EXACT:
        return (<long long>e << 33) | (2LL * n)
    return (<long long>e << 33) | (2LL * t.nodes.group[n] + 1)


ctypedef fused sorted_key:
    int
    long long


cdef inline int sorted_find(const sorted_key* values, int n, sorted_key value) noexcept nogil:
    """The index of ``value`` among the ``n`` increasing ``values`` (binary search), -1 if absent."""
    cdef int lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < n and values[lo] == value else -1


cdef inline int find_bucket(const Fixed* f, long long value) noexcept nogil:
    """The index of bucket ``value`` among the fixed set's buckets, -1 if it has none."""
    return -1 if value < 0 else sorted_find(f.bucket, f.n_buckets, value)


cdef inline int find_feature(const Fixed* f, int value) noexcept nogil:
    """The index of feature ``value`` among the fixed set's features, -1 if none has it."""
    return sorted_find(f.feature, f.n_features, value)
