"""Label tables of the engine: the node similarity and the (edge, node) tuple similarity,
indexed by label id, with their hot lookups inlined into the kernels."""
from libc.math cimport exp


cpdef enum SimilarityKind:
    EXACT = 0           # the label matches itself only
    LEXICAL = 1         # cosine of word vectors, kept when positive (KeLP's lexical similarity)
    COMPOSITIONAL = 2   # cosine of composed head-modifier vectors
    EXPONENTIAL = 3     # exp(c - 1) * ((c - gamma) / (1 - gamma))+ of the cosine c (Garg et al.)
    SHARED_FEATURES = 4  # the number of features two labels share, itself included (Bunescu & Mooney 2005)


cdef struct Similarity:
    const int* kind             # per label id: a SimilarityKind
    const int* group            # labels are compared only within a group (same POS, same POS pattern)
    const int* row              # row of the label's unit vector, -1 for none
    const double* weight        # per label id: the trust in its vector, in [0, 1]
    const double* label_weight  # per label id: the nonstationary weight w (Garg et al. §5), 1 by default
    const double* vectors
    const int* own_word         # per vector row, 2 entries: words whose own part the vector holds (-1: none), or NULL
    const double* own_part      # per vector row, 2 entries: the coefficients of those parts
    const int* features         # per label id, feature_width entries: its sorted feature ids, padded with -1, or NULL
    int feature_width
    int dim
    double threshold
    double gamma                # sparsity of the EXPONENTIAL kind


cdef struct TupleSimilarity:
    const int* edge             # per tuple label id: its edge id
    const int* node             # per tuple label id: its node label id, in ``nodes``
    const double* weight        # per edge id: the nonstationary weight w(e)
    const Similarity* nodes


cdef class NodeSimilarity:
    cdef readonly object kinds, groups, rows, weights, label_weights, vectors, own_words, own_parts, features
    cdef Similarity similarity
    cdef bint ready


cdef class TupleTable:
    cdef readonly object edges, nodes, weights, node_similarity
    cdef TupleSimilarity table
    cdef bint ready


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


cdef inline double shared_features(const Similarity* s, int a, int b) noexcept nogil:
    """The number of features labels ``a`` and ``b`` share: a merge of their sorted ids."""
    cdef const int* f = s.features + <long long>a * s.feature_width
    cdef const int* g = s.features + <long long>b * s.feature_width
    cdef int i = 0, j = 0, shared = 0
    while i < s.feature_width and j < s.feature_width and f[i] >= 0 and g[j] >= 0:
        if f[i] == g[j]:
            shared += 1
            i += 1
            j += 1
        elif f[i] < g[j]:
            i += 1
        else:
            j += 1
    return shared


cdef inline bint similarity_without_vectors(const Similarity* s, int a, int b, double* value) noexcept nogil:
    """Whether sigma(a, b) of two label ids is known without the dot product of their
    vector rows, and then its value in ``value[0]``: for two SHARED_FEATURES labels the
    number of features they share (|F| for a label with itself); else 1 for the same
    label; 0 for labels of different or exact kinds or groups, or without a vector or
    weight; w_a * w_b for two labels on one vector row. Otherwise sigma comes from the
    dot product of their rows (:func:`similarity_from_dot`)."""
    cdef int kind = s.kind[a]
    if a == b:
        value[0] = shared_features(s, a, a) if kind == SHARED_FEATURES else 1.0
        return True
    if kind == EXACT or kind != s.kind[b] or s.group[a] != s.group[b]:
        value[0] = 0.0
        return True
    if kind == SHARED_FEATURES:
        value[0] = shared_features(s, a, b)
        return True
    cdef int ra = s.row[a], rb = s.row[b]
    cdef double scale = s.weight[a] * s.weight[b]
    if ra < 0 or rb < 0 or scale == 0.0:
        value[0] = 0.0
        return True
    if ra == rb:
        value[0] = scale
        return True
    return False


cdef inline double similarity_from_dot(const Similarity* s, int a, int b, double dot) noexcept nogil:
    """sigma(a, b) of two labels of the same non-exact kind and group on different vector
    rows, from ``dot`` = <r_a, r_b>, the dot product of the rows' shared coordinates:
    w_a * w_b * c with c = dot plus the rows' private coordinates, a lexical c kept only
    when positive, an exponential one turned into exp(c - 1) * ((c - gamma) / (1 - gamma))+.
    The plain and the one-against-many engines share it, whoever summed ``dot``."""
    cdef int kind = s.kind[a]
    if s.own_word != NULL:
        dot += own_overlap(s, s.row[a], s.row[b])
    if kind == LEXICAL and dot <= 0.0:
        return 0.0
    if kind == EXPONENTIAL:
        dot = exp(dot - 1.0) * (dot - s.gamma) / (1.0 - s.gamma) if dot > s.gamma else 0.0
    return s.weight[a] * s.weight[b] * dot


cdef inline double row_dot(const Similarity* s, int ra, int rb) noexcept nogil:
    """<r_a, r_b>: the dot product of two vector rows, summed in coordinate order."""
    cdef const double* u = s.vectors + <long long>ra * s.dim
    cdef const double* v = s.vectors + <long long>rb * s.dim
    cdef double dot = 0.0
    cdef int t
    for t in range(s.dim):
        dot += u[t] * v[t]
    return dot


cdef inline double node_similarity(const Similarity* s, int a, int b) noexcept nogil:
    """sigma(a, b) for two label ids of the table: :func:`similarity_without_vectors` when
    it decides, else w_a * w_b * <u_a, u_b> with u the unit vectors, private coordinates
    included (:func:`similarity_from_dot`)."""
    cdef double value
    if similarity_without_vectors(s, a, b, &value):
        return value
    return similarity_from_dot(s, a, b, row_dot(s, s.row[a], s.row[b]))


cdef inline double weighted_similarity(const Similarity* s, int a, int b, double sigma) noexcept nogil:
    """SPTK's factor w(a) sigma w(b) of two labels of similarity sigma, 0 below the threshold."""
    if sigma >= s.threshold and sigma > 0.0:
        return sigma * (s.label_weight[a] * s.label_weight[b])
    return 0.0


cdef inline double tuple_similarity(const TupleSimilarity* t, int a, int b) noexcept nogil:
    """k((e, n), (e', n')) = w(e) [e = e'] w(e') * k_n(n, n') of two tuple label ids."""
    cdef int e = t.edge[a]
    if e != t.edge[b] or t.weight[e] == 0.0:
        return 0.0
    return t.weight[e] * t.weight[e] * node_similarity(t.nodes, t.node[a], t.node[b])
