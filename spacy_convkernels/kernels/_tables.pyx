# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Label tables of the engine (see ``_tables.pxd``): what the kernels know of labels beyond
their ids. Immutable once built; the arrays are read-only."""
import numpy as np

from ..errors import InvalidParameterError
from ._readonly import frozen_copy, read_only_view


cdef class NodeSimilarity:
    """A node similarity as tables indexed by label id (see the ``Similarity`` struct):
    ``kinds``, ``groups``, ``rows`` and ``weights`` per label, unit ``vectors`` by row.
    ``own_words`` and ``own_parts`` (rows x 2, optional) extend each unit vector by up to
    two coordinates private to a word: the part of its words that no other word shares.
    ``label_weights`` (optional, 1 by default) are the nonstationary weights w per label.
    ``features`` (labels x width, needed when a kind is SHARED_FEATURES) holds per label
    its sorted feature ids, padded with -1."""

    def __init__(self, kinds, *, groups, rows, weights, vectors, double threshold, double gamma=0.0,
                 label_weights=None, own_words=None, own_parts=None, features=None):
        if self.ready:
            raise InvalidParameterError("a NodeSimilarity cannot be initialized twice")
        # the rows index the vectors: a private frozen copy; the rest are only compared or
        # multiplied, so read-only views of the caller's arrays do (no copy of the vectors)
        self.kinds = read_only_view(kinds, np.int32)
        self.groups = read_only_view(groups, np.int32)
        self.rows = frozen_copy(rows, np.int32)
        self.weights = read_only_view(weights, np.float64)
        self.label_weights = read_only_view(np.ones(len(self.kinds)) if label_weights is None else label_weights,
                                            np.float64)
        self.vectors = read_only_view(vectors, np.float64)
        per_label = (self.kinds, self.groups, self.rows, self.weights, self.label_weights)
        if (any(a.ndim != 1 or len(a) != len(self.kinds) for a in per_label)) or self.vectors.ndim != 2:
            raise InvalidParameterError("kinds, groups, rows, weights and label_weights must be per label id; "
                                        "vectors a matrix")
        n_rows = len(self.vectors)
        if self.rows.max(initial=-1) >= n_rows:
            raise InvalidParameterError(f"a label points to vector row {self.rows.max()}, beyond the {n_rows} rows")
        if (own_words is None) != (own_parts is None):
            raise InvalidParameterError("own_words and own_parts go together")
        if self.vectors.size == 0:  # no coordinates: keep the rows, give them one zero coordinate
            self.vectors = frozen_copy(np.zeros((max(n_rows, 1), 1)), np.float64)
        cdef const int[::1] k = self.kinds, g = self.groups, r = self.rows
        cdef const double[::1] w = self.weights, lw = self.label_weights
        cdef const double[:, ::1] v = self.vectors
        cdef const int[:, ::1] ow, fv
        cdef const double[:, ::1] op
        self.similarity.own_word = NULL
        self.similarity.own_part = NULL
        if own_words is not None:
            self.own_words = read_only_view(own_words, np.int32)
            self.own_parts = read_only_view(own_parts, np.float64)
            if self.own_words.shape != (n_rows, 2) or self.own_parts.shape != (n_rows, 2):
                raise InvalidParameterError("own_words and own_parts need two entries per vector row")
            if n_rows:  # read only for rows that exist
                ow, op = self.own_words, self.own_parts
                self.similarity.own_word = &ow[0, 0]
                self.similarity.own_part = &op[0, 0]
        self.features = _checked_features(features, self.kinds)
        self.similarity.features = NULL
        self.similarity.feature_width = 0
        if self.features is not None and len(self.kinds):
            fv = self.features
            self.similarity.features = &fv[0, 0]
            self.similarity.feature_width = self.features.shape[1]
        self.similarity.kind = &k[0] if len(self.kinds) else NULL
        self.similarity.group = &g[0] if len(self.kinds) else NULL
        self.similarity.row = &r[0] if len(self.kinds) else NULL
        self.similarity.weight = &w[0] if len(self.kinds) else NULL
        self.similarity.label_weight = &lw[0] if len(self.kinds) else NULL
        self.similarity.vectors = &v[0, 0]
        self.similarity.dim = self.vectors.shape[1]
        self.similarity.threshold = threshold
        self.similarity.gamma = gamma
        self.ready = True


def _checked_features(features, kinds):
    """``features`` as a read-only int32 matrix, checked: a row per label, each holding
    increasing feature ids >= 0, then -1 padding; None when not given (and not needed)."""
    if features is None:
        if (kinds == SHARED_FEATURES).any():
            raise InvalidParameterError("labels of kind SHARED_FEATURES need a features table")
        return None
    f = read_only_view(features, np.int32)
    if f.ndim != 2 or f.shape[0] != len(kinds) or f.shape[1] == 0:
        raise InvalidParameterError(f"features must be a matrix of {len(kinds)} rows (one per label id) "
                                    f"and at least one column, got shape {f.shape}")
    padding = f < 0
    if (f < -1).any() or (padding[:, :-1] & ~padding[:, 1:]).any() or ((f[:, 1:] <= f[:, :-1]) & ~padding[:, 1:]).any():
        raise InvalidParameterError("each row of features must hold increasing feature ids >= 0, then -1 padding")
    return f


cdef class TupleTable:
    """The similarity of (edge, node) tuples, Garg et al. (2018) §5.1, as tables:

        k((e, n), (e', n')) = w(e) [e = e'] w(e') * k_n(n, n'),

    per tuple label id its edge id (``edges``) and node label id (``nodes``), per edge id
    its nonstationary weight w (``weights``), and k_n a :class:`NodeSimilarity` over
    node label ids."""
    def __init__(self, edges, *, nodes, weights, NodeSimilarity node_similarity not None):
        if self.ready:
            raise InvalidParameterError("a TupleTable cannot be initialized twice")
        if not node_similarity.ready:
            raise InvalidParameterError("the node similarity of a TupleTable was not initialized")
        self.edges = frozen_copy(edges, np.int32)
        self.nodes = frozen_copy(nodes, np.int32)
        self.weights = read_only_view(weights, np.float64)
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
