"""Kernels over the structures of candidate interactions (Garg et al. 2018, §4.1, §5.1):
paths of (edge, node) tuples and subgraph trees whose nodes are such tuples.

Both compare tuples with

    k((e, n), (e', n')) = w(e) [e = e'] w(e') * k_n(n, n'),

k_n the exact match of node labels, or, with ``vectors``, 1 for equal labels and
exp(c - 1) * ((c - gamma) / (1 - gamma))+ of the cosine c of their word vectors.
``edge_weights`` maps edge labels to the nonstationary weight w (default 1 for all; 0
ignores every tuple with that edge).

Partial credit (Bunescu & Mooney 2005) is a choice of the structure, not of the kernel:
a node labelled ``feature_label(features)`` (:mod:`~..structures.paths`) is a set of
features, and k_n of two such nodes is the number of features they share (|F| for a
node with itself), 0 against any other node; word vectors never apply to them.
"""

import threading
from dataclasses import dataclass

import numpy as np

from ..structures.interning import LABELS
from ..structures.networkx_graphs import is_networkx_graph, path_from_networkx, tree_from_networkx
from ..structures.paths import PathTuples, split_tuple_label
from ..structures.tree import Tree
from ..utils.validation import Interval, Weights
from ._tables import TupleTable
from .base import EngineSpec, Kernel
from .growing import Coverage, GrowingArray
from .kinds import KernelKind
from .node_similarity import ExponentialSimilarity, SharedFeatures, SimilarityTable
from .path_explain import explain_paths
from .smoothed_tree_kernels import VECTOR_SOURCE
from .vectors import VectorsParameter, WordVectors
from .work import DEFAULT_MAX_WORK, MAX_WORK


class TupleKernel(Kernel):
    """A kernel over structures of (edge, node) tuples.

    Parameters
    ----------
    lam : float in (0, 1), default=0.5
        Decay lam of long spans.
    vectors : spaCy ``Vocab`` or ``Vectors``, :class:`~.vectors.WordVectors`, path, or None
        Word vectors of the node labels for k_n; None: exact match.
    gamma : float in (-1, 1), default=0.6
        The cosine below which two nodes do not match (k_n above).
    edge_weights : dict of str to float >= 0, or None
        The nonstationary weight w(e) per edge label (default 1; 0 ignores the edge).
    max_work : int >= 1 or None, default=100_000_000
        The most work K(t, t) of one structure may need (:mod:`~.work`: pairs of
        matching positions or nodes weighted by their children, and similarities of
        word vectors; the default is about a second of one core): a structure that
        needs more raises ``StructureSizeError`` before any work, and so no pair of
        accepted structures needs more. None: no bound.
    """

    _kind: KernelKind  # set by each subclass
    _match_key: str | None = "label"
    _parameter_constraints = {
        "lam": [Interval(0, 1, closed="neither")],
        "vectors": [VECTOR_SOURCE, None],
        "gamma": [Interval(-1, 1, closed="neither")],
        "edge_weights": [Weights(), None],
        "max_work": MAX_WORK,
    }
    vectors = VectorsParameter()

    def __init__(
        self,
        lam: float = 0.5,
        *,
        vectors=None,
        gamma: float = 0.6,
        edge_weights: dict[str, float] | None = None,
        max_work: int | None = DEFAULT_MAX_WORK,
    ):
        self.lam = lam
        self.vectors = vectors
        self.gamma = gamma
        self.edge_weights = edge_weights
        self.max_work = max_work

    def _engine_spec(self) -> EngineSpec:
        tables = TupleSpec(self.vectors, float(self.gamma), tuple(sorted((self.edge_weights or {}).items())))
        return EngineSpec(self._kind, self.lam, match_key=self._match_key, tables=tables)


class SubsequencePathKernel(TupleKernel):
    """Subsequence kernel over paths of (edge, node) tuples (Bunescu & Mooney 2005, as in
    Garg et al. §4.1): the sum over pairs of equal-length subsequences i, j (not
    necessarily contiguous) of prod_k k(S(i_k), S'(j_k)) * lam^(span(i) + span(j)), with
    span = last index - first index + 1 and lam in (0, 1) penalizing long spans.

    Bunescu & Mooney's own kernel, positions that are sets of features counted by the
    features they share, edges and words as separate positions, is this kernel on paths
    of feature positions (:class:`~..structures.paths.PathTuples`); plain tuples match
    whole, as Garg et al.'s do.

    Parameters
    ----------
    lam, vectors, gamma, edge_weights, max_work
        As for :class:`TupleKernel`.
    """

    structure_type = PathTuples
    _kind = KernelKind.SUBSEQUENCE_PATH
    _match_key = None

    def as_structure(self, x):
        """A ``networkx.DiGraph`` path becomes its :class:`PathTuples`
        (:func:`~..structures.networkx_graphs.path_from_networkx`); anything else is as given."""
        return path_from_networkx(x) if is_networkx_graph(x) else x

    def explain(self, a, b, *, top: int | None = 10, normalize: bool = True):
        """The ``top`` position pairs contributing most to K(a, b), each with its value
        (each term shared equally among the pairs it matches: the values of all pairs sum
        to K(a, b)) and share: a :class:`~spacy_convkernels.kernels.path_explain.PathExplanation`."""
        return explain_paths(self, self.as_structure(a), self.as_structure(b), top=top, normalize=normalize)


class ZelenkoTreeKernel(TupleKernel):
    """Sparse subtree kernel of Zelenko, Aone & Richardella (2003) between the roots of two
    subgraph trees whose labels are ``edge/node`` tuples, with k as matching and similarity:

        K(x, y) = k(x, y) * (k(x, y) + sum over equal-length child subsequences i, j of
                  lam^(span(i) + span(j)) * (sum_s K(c_x[i_s], c_y[j_s])) * prod_s k(c_x[i_s], c_y[j_s])).

    Nodes ``edge/FEAT##...`` (:func:`~..structures.paths.feature_label`) match by the
    number of features they share, under equal edges.

    Parameters
    ----------
    lam, vectors, gamma, edge_weights, max_work
        As for :class:`TupleKernel`.
    """

    structure_type = Tree
    _kind = KernelKind.ZELENKO_TREE

    def as_structure(self, x):
        """A ``networkx.DiGraph`` rooted tree becomes its subgraph :class:`Tree`
        (:func:`~..structures.networkx_graphs.tree_from_networkx`); anything else is as given."""
        return tree_from_networkx(x) if is_networkx_graph(x) else x


@dataclass(frozen=True)
class TupleSpec:
    """What the tuple table depends on: vectors, gamma and the edge weights (sorted items)."""

    vectors: object
    gamma: float
    edge_weights: tuple

    def build(self) -> "_TupleTables":
        return _TupleTables(self.vectors, self.gamma, dict(self.edge_weights))

    def has_zero_weight(self) -> bool:
        return any(weight == 0 for _, weight in self.edge_weights)


class _TupleTables:
    """The tuple table of a kernel configuration, grown as new tuple labels appear; safe to
    share between threads as :class:`~.node_similarity.SimilarityTable` is: grown under a
    lock, each entry written once per label its id holds, and published as a new :class:`TupleTable`."""

    def __init__(self, vectors, gamma: float, edge_weights: dict[str, float]):
        rules = [SharedFeatures()] + ([] if vectors is None else [ExponentialSimilarity(WordVectors.load(vectors))])
        self.nodes = SimilarityTable(rules, threshold=0.0, gamma=gamma)
        self.uid = self.nodes.uid
        self.edge_weights = edge_weights
        self.edge_ids: dict[str, int] = {}
        self.edges = GrowingArray(np.int32, -1)
        self.node_ids = GrowingArray(np.int32, 0)
        self._coverage = Coverage(LABELS)
        self._node_leases: dict[int, object] = {}  # per tuple label id: the lease on its node label id
        self._lock = threading.Lock()
        self._published = self._publish()

    @property
    def current(self) -> TupleTable:
        """The table published last: it covers every tuple label described so far."""
        return self._published[1]

    def cover_structures(self, structures) -> TupleTable:
        """Describe the tuple labels of ``structures`` not seen yet; the published table,
        which covers them all."""
        ids = np.concatenate([s.compiled.labels for s in structures]) if structures else np.zeros(0, np.int32)
        coverage, table = self._published
        if self._coverage.covers(coverage, ids):
            return table
        with self._lock:
            self.edges.reserve(int(ids.max()) + 1)
            self.node_ids.reserve(int(ids.max()) + 1)
            new = self._coverage.missing(ids)
            if len(new):
                flat = [label for s in structures for label in s.labels]
                edge_labels, node_labels = zip(*(split_tuple_label(flat[k]) for k in new))
                lease = LABELS.lease(node_labels)
                self._node_leases.update((int(i), lease) for i in ids[new])
                self.nodes.cover(lease.ids, node_labels)
                self.node_ids.data[ids[new]] = lease.ids
                self.edges.data[ids[new]] = [self.edge_ids.setdefault(edge, len(self.edge_ids)) for edge in edge_labels]
                self._coverage.record(ids[new])
            self._published = self._publish()
            return self._published[1]

    def _publish(self):
        """(coverage snapshot, the table as the engine reads it)."""
        weights = np.ones(max(len(self.edge_ids), 1))
        for edge, index in self.edge_ids.items():
            weights[index] = self.edge_weights.get(edge, 1.0)
        edges = np.maximum(self.edges.view(), 0)  # ids not described yet are never read
        return self._coverage.publish(), TupleTable(
            edges, nodes=self.node_ids.view(), weights=weights, node_similarity=self.nodes.current
        )
