"""Learning the nonstationary label weights w (the paper's sigma) of a convolution kernel (Garg et al. 2018, §5-6).

The kernel compares labels with w(l) k(l, l') w(l'); a binary w per
semantic label (an edge label of a path or subgraph, a node label of a tree) decides
whether the label counts at all. Algorithm 1 learns w for the ``n_labels`` most
frequent labels, one after the other, minimizing the k-NN loss of §6.1,

    L = sum_i K(S_i, S_1nn(i)) [y_i != y_1nn(i)] - sum_i K(S_i, S_1nn(i)) [y_i = y_1nn(i) = positive],

(normalized K; without a positive class, every agreement is rewarded) on small subsets
instead of the whole training set: for each trial, ``n_samples`` random structures that
hold the label (the inducing points), their neighbours and the structures that have them
as neighbours in a global k-NN graph (computed once, through KLSH buckets when
``method="klsh"``), and those neighbours' first neighbours; on that subset the 1-NN graph is
built for w = 0 and w = 1, and after ``n_trials`` trials the value of lower
summed loss is kept (1 on ties).
"""

from collections import Counter
from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from ..approx.klsh import KLSH_PARAMETERS
from ..kernels.base import KERNEL, Kernel
from ..structures.paths import PathTuples, split_tuple_label
from ..utils.inputs import structure_tags, training_set
from ..utils.validation import COUNT, Options, Satisfies
from .knn import METHODS, kernel_knn_graph


class NonstationaryKernelLearner(BaseEstimator):
    """Learns a binary label weight w per semantic label, minimizing the 1-NN loss L of Garg et al.
    2018, §6.1, on subsets (Algorithm 1; see the module).

    Parameters
    ----------
    kernel : Kernel
        A kernel with nonstationary weights (``edge_weights`` or ``label_weights``); its
        structures are the input.
    n_labels : int, default=10
        Learn w for this many most frequent labels (when ``labels`` is None).
    labels : sequence of str or None, default=None
        The labels to learn w for, in this order.
    n_samples : int, default=50
        Inducing points per trial.
    n_trials : int, default=5
        Trials per label.
    n_neighbors : int, default=4
        Neighbours per structure in the global k-NN graph.
    method : {"klsh", "exact"}, default="klsh"
        Build the global graph through KLSH buckets (``n_references``, ``n_bits``), or
        exactly (by row blocks, O(N k) memory), as
        :func:`~spacy_convkernels.learn.kernel_knn_graph`.
    n_references : int, default=100
        M, the references of the KLSH codes (``"klsh"``).
    n_bits : int, default=12
        H, bits per code (``"klsh"``).
    positive_class : label or None, default=None
        Reward agreement on this class only (None: every agreement).
    random_state : int, RandomState instance or None, default=None
        Seeds the codes and the subsets.
    n_jobs : int or None, default=None
        Threads of the kernel computations, as :meth:`Kernel.gram`.

    Attributes
    ----------
    kernel_ : Kernel
        The kernel with the learned weights.
    weights_ : dict
        Label -> learned weight w (0.0 or 1.0).
    losses_ : dict
        Label -> (summed loss with w = 0, with w = 1).
    n_graph_evaluations_ : int
        Kernel values computed for the global k-NN graph (its KLSH codes included).
    """

    _parameter_constraints = {
        "kernel": [
            Satisfies(
                lambda kernel: KERNEL.accepts(kernel) and _weights_parameter(kernel) is not None,
                "a kernel of spacy_convkernels with nonstationary weights (edge_weights or label_weights)",
            )
        ],
        "n_neighbors": [COUNT],
        "method": [Options(*METHODS)],
        "n_references": KLSH_PARAMETERS["n_references"],
        "n_bits": KLSH_PARAMETERS["n_bits"],
    }

    def __init__(
        self,
        kernel: Kernel,
        *,
        n_labels: int = 10,
        labels: Sequence[str] | None = None,
        n_samples: int = 50,
        n_trials: int = 5,
        n_neighbors: int = 4,
        method: str = "klsh",
        n_references: int = 100,
        n_bits: int = 12,
        positive_class=None,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
    ):
        self.kernel = kernel
        self.n_labels = n_labels
        self.labels = labels
        self.n_samples = n_samples
        self.n_trials = n_trials
        self.n_neighbors = n_neighbors
        self.method = method
        self.n_references = n_references
        self.n_bits = n_bits
        self.positive_class = positive_class
        self.random_state = random_state
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = structure_tags(super().__sklearn_tags__())
        tags.target_tags.required = True
        return tags

    def fit(self, X: Sequence, y):
        X, y = training_set(self, X, y, minimum=2)
        parameter = _weights_parameter(self.kernel)
        assert parameter is not None  # validated: the kernel has nonstationary weights
        rng = check_random_state(self.random_state)
        holders = _label_holders(X, parameter)
        labels = (
            list(self.labels)
            if self.labels is not None
            else [
                label
                for label, _ in Counter({label: len(h) for label, h in holders.items()}).most_common(self.n_labels)
            ]
        )
        weights: dict[str, float] = {label: 1.0 for label in labels}
        base = dict(self.kernel.get_params().get(parameter) or {})
        kernel = self._with_weights(parameter, {**base, **weights})
        seed = rng.randint(2**31) if self.method == "klsh" else None
        _, graph, self.n_graph_evaluations_ = kernel_knn_graph(
            kernel,
            X,
            self.n_neighbors,
            method=self.method,
            n_references=self.n_references,
            n_bits=self.n_bits,
            random_state=seed,
            n_jobs=self.n_jobs,
        )
        incoming: list[list[int]] = [[] for _ in X]
        for i, neighbours in enumerate(graph):
            for n in neighbours[neighbours >= 0]:
                incoming[n].append(i)
        self.losses_ = {}
        for label in labels:
            summed = {0.0: 0.0, 1.0: 0.0}
            holding = holders.get(label, [])
            for _ in range(self.n_trials if holding else 0):
                subset = self._loss_subset(holding, graph, incoming, rng)
                for value in summed:
                    trial = self._with_weights(parameter, {**base, **weights, label: value})
                    summed[value] += self._loss(trial, [X[i] for i in subset], y[subset])
            weights[label] = 0.0 if summed[0.0] < summed[1.0] else 1.0
            self.losses_[label] = (summed[0.0], summed[1.0])
        self.weights_ = weights
        self.kernel_ = self._with_weights(parameter, {**base, **weights})
        return self

    def _with_weights(self, parameter: str, weights: dict[str, float]) -> Kernel:
        """The kernel with other weights (its other parameters shared, not copied)."""
        return type(self.kernel)(**{**self.kernel.get_params(deep=False), parameter: dict(weights)})

    def _loss_subset(self, holding, graph, incoming, rng) -> np.ndarray:
        """Inducing points, their neighbours both ways, and those neighbours' nearest ones."""
        chosen = rng.choice(holding, min(self.n_samples, len(holding)), replace=False)
        out = graph[chosen].ravel()
        into = [i for c in chosen for i in incoming[c]]
        near = np.concatenate([out[out >= 0], np.asarray(into, dtype=np.int64)]).astype(np.int64)
        first = graph[near, 0] if len(near) else np.zeros(0, np.int64)
        return np.unique(np.concatenate([chosen, near, first[first >= 0]]))

    def _loss(self, kernel: Kernel, X: list, y: np.ndarray) -> float:
        """The 1-NN loss of §6.1 on a subset (normalized kernel)."""
        if len(X) < 2:
            return 0.0
        K = kernel.gram(X, n_jobs=self.n_jobs)
        np.fill_diagonal(K, -np.inf)
        nearest = K.argmax(axis=1)
        similarity = K[np.arange(len(X)), nearest]
        wrong = y != y[nearest]
        if self.positive_class is not None:
            rewarded = ~wrong & (y == self.positive_class)
        else:
            rewarded = ~wrong
        return float(similarity[wrong].sum() - similarity[rewarded].sum())


def _weights_parameter(kernel: Kernel) -> str | None:
    """The kernel's parameter of nonstationary weights (None: it has none)."""
    names = [name for name in ("edge_weights", "label_weights") if name in kernel.get_params(deep=False)]
    return names[0] if names else None


def _label_holders(X: list, parameter: str) -> dict[str, list[int]]:
    """Semantic label -> indices of the structures holding it: edges of paths and tuple
    trees (``edge_weights``), node labels of trees (``label_weights``)."""
    holders: dict[str, list[int]] = {}
    for i, x in enumerate(X):
        if isinstance(x, PathTuples):
            found = {edge for edge, _ in x if edge}
        elif parameter == "edge_weights":
            found = {split_tuple_label(label)[0] for label in x.labels} - {""}
        else:
            found = set(x.labels)
        for label in found:
            holders.setdefault(label, []).append(i)
    return holders
