"""Kernels over the structures of candidate interactions (Garg et al. 2018, §4.1, §5.1):
paths of (edge, node) tuples and subgraph trees whose nodes are such tuples.

Both compare tuples with

    k((e, n), (e', n')) = sigma(e) [e = e'] sigma(e') * k_n(n, n'),

k_n the exact match of node labels, or, with ``vectors``, 1 for equal labels and
exp(c - 1) * ((c - gamma) / (1 - gamma))+ of the cosine c of their word vectors.
``edge_weights`` maps edge labels to the nonstationary sigma (default 1 for all; 0
ignores every tuple with that edge).
"""
from typing import Dict, Optional

import numpy as np

from ..structures.paths import PathTuples, split_tuple_label
from ..structures.interning import LABELS
from ..structures.tree import Tree
from ._engine import KernelKind, PackedSequences, PackedTrees, TupleTable
from .base import CompiledKernel, InvalidParameterError, check_number
from .node_similarity import ExponentialSimilarity, SimilarityTable
from .vectors import WordVectors


class _TupleKernel(CompiledKernel):
    """Plumbing shared by the kernels over (edge, node) tuples."""

    _kind = None
    _table_params = ("gamma", "edge_weights")

    def __init__(self, lam: float = 0.5, vectors=None, gamma: float = 0.6, edge_weights: Optional[Dict[str, float]] = None):
        self.lam = lam
        self.vectors = vectors
        self.gamma = gamma
        self.edge_weights = edge_weights

    def _tables(self) -> "_TupleTables":
        return self._engine_table(lambda: _TupleTables(self.vectors, self.gamma, self.edge_weights))

    def _engine_args(self):
        lam = check_number("lam", self.lam)
        if lam >= 1:
            raise InvalidParameterError(f"lam must be < 1, got {lam!r}")
        return self._kind, lam, 1.0, 1.0, None, self._tables().engine()


class SubsequencePathKernel(_TupleKernel):
    """Subsequence kernel over paths of (edge, node) tuples (Bunescu & Mooney 2005, as in
    Garg et al. §4.1): the sum over pairs of equal-length subsequences i, j (not
    necessarily contiguous) of prod_k k(S(i_k), S'(j_k)) * lam^(span(i) + span(j)), with
    span = last index - first index + 1 and lam in (0, 1) penalizing long spans."""

    structure_type = PathTuples
    _kind = KernelKind.SUBSEQUENCE_PATH

    def _prepare(self, paths):
        compiled = [p.compiled for p in paths]
        self._tables().cover(compiled, lambda: [p.labels for p in paths])
        return PackedSequences(compiled)


class ZelenkoTreeKernel(_TupleKernel):
    """Sparse subtree kernel of Zelenko, Aone & Richardella (2003) between the roots of two
    subgraph trees whose labels are ``edge/node`` tuples, with k as matching and similarity:

        K(x, y) = k(x, y) * (k(x, y) + sum over equal-length child subsequences i, j of
                  lam^(span(i) + span(j)) * (sum_s K(c_x[i_s], c_y[j_s])) * prod_s k(c_x[i_s], c_y[j_s])).
    """

    structure_type = Tree
    _kind = KernelKind.ZELENKO_TREE

    def _prepare(self, trees):
        compiled = [t.compiled for t in trees]
        self._tables().cover(compiled, lambda: [t.labels for t in trees])
        return PackedTrees(compiled, "label")


class _TupleTables:
    """The tuple table of a kernel configuration, grown as new tuple labels appear."""

    def __init__(self, vectors, gamma: float, edge_weights: Optional[Dict[str, float]]):
        gamma = check_number("gamma", gamma, minimum=-1.0)
        if gamma >= 1:
            raise InvalidParameterError(f"gamma must be in (-1, 1), got {gamma!r}")
        rules = [] if vectors is None else [ExponentialSimilarity(WordVectors.load(vectors))]
        self.nodes = SimilarityTable(rules, threshold=0.0, gamma=gamma)
        self.edge_weights = dict(edge_weights or {})
        for edge, weight in self.edge_weights.items():
            check_number(f"edge_weights[{edge!r}]", weight, inclusive=True)
        self.edge_ids: Dict[str, int] = {}
        self.edges = np.zeros(0, dtype=np.int32)
        self.node_ids = np.zeros(0, dtype=np.int32)
        self._engine = None

    def cover(self, compiled, labels) -> None:
        """Describe the tuple labels not seen yet; ``labels()`` gives the structures' labels
        (aligned with their compiled ids) and is called only when some are new."""
        ids = np.concatenate([c.labels for c in compiled]) if compiled else np.zeros(0, np.int32)
        if ids.size and ids.max() >= len(self.edges):
            grow = int(ids.max()) + 1 + len(self.edges) // 2 - len(self.edges)
            self.edges = np.concatenate([self.edges, np.full(grow, -1, dtype=np.int32)])
            self.node_ids = np.concatenate([self.node_ids, np.zeros(grow, dtype=np.int32)])
        new = np.flatnonzero(self.edges[ids] < 0) if ids.size else []
        if len(new) == 0:
            return
        flat = [label for group in labels() for label in group]
        node_labels = []
        for k in new:
            edge, node = split_tuple_label(flat[k])
            self.edges[ids[k]] = self.edge_ids.setdefault(edge, len(self.edge_ids))
            node_labels.append(node)
        node_ids = LABELS.ids(node_labels)
        self.node_ids[ids[new]] = node_ids
        self.nodes.cover(node_ids, node_labels)
        self._engine = None

    def engine(self) -> TupleTable:
        if self._engine is None:
            weights = np.ones(max(len(self.edge_ids), 1))
            for edge, index in self.edge_ids.items():
                weights[index] = self.edge_weights.get(edge, 1.0)
            edges = np.where(self.edges < 0, 0, self.edges)
            self._engine = TupleTable(edges, self.node_ids, weights, self.nodes.engine())
        return self._engine
