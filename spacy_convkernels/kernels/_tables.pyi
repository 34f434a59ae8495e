from enum import IntEnum

import numpy as np
from numpy.typing import ArrayLike

class SimilarityKind(IntEnum):
    EXACT = 0
    LEXICAL = 1
    COMPOSITIONAL = 2
    EXPONENTIAL = 3
    SHARED_FEATURES = 4

class NodeSimilarity:
    kinds: np.ndarray
    groups: np.ndarray
    rows: np.ndarray
    weights: np.ndarray
    label_weights: np.ndarray
    vectors: np.ndarray
    own_words: np.ndarray | None
    own_parts: np.ndarray | None
    features: np.ndarray | None
    def __init__(
        self,
        kinds: ArrayLike,
        *,
        groups: ArrayLike,
        rows: ArrayLike,
        weights: ArrayLike,
        vectors: ArrayLike,
        threshold: float,
        gamma: float = 0.0,
        label_weights: ArrayLike | None = None,
        own_words: ArrayLike | None = None,
        own_parts: ArrayLike | None = None,
        features: ArrayLike | None = None,
    ) -> None: ...

class TupleTable:
    edges: np.ndarray
    nodes: np.ndarray
    weights: np.ndarray
    node_similarity: NodeSimilarity
    def __init__(
        self, edges: ArrayLike, *, nodes: ArrayLike, weights: ArrayLike, node_similarity: NodeSimilarity
    ) -> None: ...
