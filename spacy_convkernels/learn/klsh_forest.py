"""Random forests on random subspaces of KLSH codes (Garg et al. 2019, §3.2-3.3).

Algorithm 2: every structure gets a long KLSH code (H bits, default 1000) from its
kernel similarities to M references; each of R decision trees (default 250) learns
from a random subspace of beta bits (default 30); the forest's class probabilities are
the mean of the trees'.

Algorithm 3 (``optimize_references=True``): the references are chosen to maximize a
variational lower bound on the mutual information between codes and labels,

    I(C; Y) >= H(Y) + < log q(y | c) >,

with the forest itself as the proposal q. Starting from random references, each one in
turn is replaced by the best of the candidates: one structure drawn from each bucket of
short codes (computed with the initial references), then every structure of the buckets
whose candidates scored best (at most ``max_candidates``). The bound is estimated on a
random subset of ``mi_samples`` training structures with a forest of ``mi_trees`` trees,
fitted on one half and its log-probabilities taken on the other, and back; the current
reference is always among the candidates, so on a fixed subset (``mi_samples`` >= N)
the bound never decreases. ``mi_history_`` records it (nats).
"""

from collections.abc import Sequence

import numpy as np
from scipy.stats import entropy
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import BaggingClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_is_fitted
from tqdm import tqdm

from ..approx.klsh import KLSH, KLSH_PARAMETERS, klsh_parameters, random_knn_codes, random_knn_subsets, unpack_codes
from ..errors import InvalidParameterError
from ..kernels.base import KERNEL, Kernel
from ..utils.inputs import structure_list, structure_tags, training_set
from ..utils.validation import COUNT, Boolean, Interval


class KLSHForestClassifier(ClassifierMixin, BaseEstimator):
    """Random forest of decision trees on random subspaces of KLSH codes (Garg et al. 2019,
    Algorithms 2 and 3; see the module).

    Parameters
    ----------
    kernel : Kernel
        A kernel of the package; its structures (trees, path tuples) are the input.
    n_references : int, default=100
        M, the references of the KLSH codes.
    n_bits : int, default=1000
        H, bits per code.
    n_estimators : int, default=250
        R, decision trees in the forest.
    subspace_bits : int, default=30
        beta, bits (features) seen by each tree.
    subset_size : int, default=20
        alpha of the codes (:class:`~spacy_convkernels.approx.KLSH`).
    hash_function : {"random_knn", "kulis_grauman"}, default="random_knn"
        Hash functions of the codes.
    optimize_references : bool, default=False
        Choose the references by Algorithm 3 (``hash_function="random_knn"`` only).
    mi_samples : int, default=1000
        Structures of the random subset on which Algorithm 3 estimates the bound (all of
        them when there are fewer).
    mi_trees : int, default=20
        Trees of the forest q of the bound.
    bucket_bits : int, default=5
        Bits of the short codes whose buckets give the candidate references.
    top_buckets : int, default=2
        Buckets of best-scoring candidates searched in full.
    max_candidates : int, default=20
        Candidates at most per reference in those buckets.
    random_state : int, RandomState instance or None, default=None
        Seeds the codes, the reference optimization and the forest.
    n_jobs : int or None, default=None
        Threads of the kernel computations, as :meth:`Kernel.gram`, and joblib jobs of the
        forest's trees (scikit-learn's meaning there: None is one job, -1 every core).
    verbose : bool, default=False
        Show progress bars (tqdm, on stderr) over the structures coded and the references
        optimized.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    klsh_ : KLSH
        The fitted codes.
    forest_ : sklearn.ensemble.BaggingClassifier
        The trees on random subspaces of the unpacked code bits (``estimators_features_``).
    mi_history_ : list of float
        The mutual-information bound (nats) after each reference of Algorithm 3.
    n_kernel_evaluations_ : int
        Kernel values between two structures computed by ``fit`` (the training codes, the
        reference optimization); coding n structures to predict costs n M more.
    """

    _parameter_constraints = {
        "kernel": [KERNEL],
        **KLSH_PARAMETERS,
        "n_estimators": [COUNT],
        "subspace_bits": [Interval(1, "n_bits", integer=True)],
        "optimize_references": [Boolean()],
    }

    def __init__(
        self,
        kernel: Kernel,
        *,
        n_references: int = 100,
        n_bits: int = 1000,
        n_estimators: int = 250,
        subspace_bits: int = 30,
        subset_size: int = 20,
        hash_function: str = "random_knn",
        optimize_references: bool = False,
        mi_samples: int = 1000,
        mi_trees: int = 20,
        bucket_bits: int = 5,
        top_buckets: int = 2,
        max_candidates: int = 20,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool = False,
    ):
        self.kernel = kernel
        self.n_references = n_references
        self.n_bits = n_bits
        self.n_estimators = n_estimators
        self.subspace_bits = subspace_bits
        self.subset_size = subset_size
        self.hash_function = hash_function
        self.optimize_references = optimize_references
        self.mi_samples = mi_samples
        self.mi_trees = mi_trees
        self.bucket_bits = bucket_bits
        self.top_buckets = top_buckets
        self.max_candidates = max_candidates
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        return structure_tags(super().__sklearn_tags__())

    def fit(self, X: Sequence, y):
        X, y = training_set(self, X, y, minimum=2)
        if self.optimize_references and self.hash_function != "random_knn":
            raise InvalidParameterError(
                "optimize_references needs hash_function='random_knn', whose bits need no Gram of the references"
            )
        rng = check_random_state(self.random_state)
        self.classes_ = unique_labels(y)
        y_index = np.searchsorted(self.classes_, y)
        self.klsh_ = KLSH(
            self.kernel,
            **klsh_parameters(self),
            random_state=rng.randint(2**31),
            n_jobs=self.n_jobs,
            verbose=self.verbose,
        ).fit(X)
        self.n_kernel_evaluations_ = self.klsh_.n_kernel_evaluations_
        if self.optimize_references:
            similarities = self._optimize_references(X, y_index, rng)
        else:
            similarities = self.klsh_.similarities(X)
            self.n_kernel_evaluations_ += similarities.size
        bits = self.klsh_.codes_from_similarities(similarities)
        self.forest_ = self._grow(bits, y_index, rng.randint(2**31), self.n_estimators, self.n_jobs)
        return self

    def predict_proba(self, X: Sequence) -> np.ndarray:
        """The mean of the trees' class probabilities."""
        check_is_fitted(self, "forest_")
        bits = self.klsh_.transform(structure_list(X, type(self).__name__))
        return self._forest_proba(self.forest_, bits)

    def predict(self, X: Sequence) -> np.ndarray:
        """The class of highest mean probability."""
        proba = self.predict_proba(X)
        return self.classes_[proba.argmax(axis=1)]

    def _grow(self, bits: np.ndarray, y_index: np.ndarray, seed: int, n_trees: int, n_jobs=None) -> BaggingClassifier:
        """Decision trees, each on all the structures and a random subspace of beta bits."""
        return BaggingClassifier(
            DecisionTreeClassifier(),
            n_estimators=n_trees,
            max_features=min(self.subspace_bits, bits.shape[1]),
            bootstrap=False,
            n_jobs=n_jobs,
            random_state=seed,
        ).fit(bits, y_index)

    def _forest_proba(self, forest: BaggingClassifier, bits: np.ndarray) -> np.ndarray:
        """Class probabilities over every class (a forest fitted on part of the data may lack some)."""
        proba = np.zeros((len(bits), len(self.classes_)))
        proba[:, forest.classes_] = forest.predict_proba(bits)
        return proba

    # Algorithm 3 -------------------------------------------------------------------------
    def _optimize_references(self, X: list, y_index: np.ndarray, rng) -> np.ndarray:
        """Algorithm 3; returns the similarities of X to the chosen references. No kernel
        value is computed twice for one sample: the similarities to the initial references
        (made for the buckets) give every column not replaced, and a candidate's column is
        kept while the sample lasts."""
        klsh = self.klsh_
        M = len(klsh.references_)
        initial, chosen = list(klsh.reference_indices_), list(klsh.reference_indices_)
        S = klsh.similarities(X)
        self.n_kernel_evaluations_ += S.size
        buckets = self._short_code_buckets(S)

        def on_sample(sample, known=None):
            """K of the sample against the chosen references, and the columns known on it
            (``known``: those already computed on this sample)."""
            K = S[sample]
            known = dict(zip(initial, K.T.copy())) if known is None else known
            replaced = [k for k in range(M) if chosen[k] != initial[k]]
            if replaced:
                K[:, replaced] = self._columns(X, sample, [chosen[k] for k in replaced], known)
            return K, known

        sample = np.arange(len(X)) if self.mi_samples >= len(X) else rng.choice(len(X), self.mi_samples, replace=False)
        hash_seed = rng.randint(2**31)
        forest_seed = rng.randint(2**31)
        # the hash functions of the final codes, the same for every candidate reference
        subsets = random_knn_subsets(M, n_bits=self.n_bits, subset_size=self.subset_size, random_state=hash_seed)
        K, known = on_sample(sample)
        self.mi_history_ = [self._mi_lower_bound(K, y_index[sample], subsets, forest_seed)]
        for j in tqdm(range(M), desc="KLSH references", disable=not self.verbose):
            if self.mi_samples < len(X):  # stochastic: a fresh subset for each reference
                sample = rng.choice(len(X), self.mi_samples, replace=False)
                K, known = on_sample(sample)
            labels = y_index[sample]
            first = [members[rng.randint(len(members))] for members in buckets]
            scores, _ = self._score_candidates(X, sample, K, j, first, known, labels, subsets, forest_seed)
            best_buckets = np.argsort(-scores, kind="stable")[: self.top_buckets]
            members = np.concatenate([buckets[b] for b in best_buckets])
            if len(members) > self.max_candidates:
                members = rng.choice(members, self.max_candidates, replace=False)
            second = sorted({int(i) for i in members} | {int(chosen[j])})
            scores, columns = self._score_candidates(X, sample, K, j, second, known, labels, subsets, forest_seed)
            winner = int(np.argmax(scores))
            chosen[j] = second[winner]
            K[:, j] = columns[:, winner]
            self.mi_history_.append(float(scores[winner]))
        klsh.restore([X[i] for i in chosen], subsets=subsets, indices=chosen)
        return on_sample(np.arange(len(X)), known if len(sample) == len(X) else None)[0]

    def _columns(self, X: list, sample: np.ndarray, indices: Sequence[int], known: dict) -> np.ndarray:
        """K(x_s, x_i) for s in ``sample`` and i in ``indices``: from ``known`` (columns on
        this sample by index), else computed, counted and added to it."""
        missing = sorted({i for i in indices if i not in known})
        if missing:
            computed = self.kernel.gram([X[s] for s in sample], [X[i] for i in missing], n_jobs=self.n_jobs)
            self.n_kernel_evaluations_ += computed.size
            known.update(zip(missing, computed.T))
        return np.stack([known[i] for i in indices], axis=1)

    def _score_candidates(self, X, sample, K, j, candidates, known, labels, subsets, forest_seed):
        """(the bound with each candidate as reference j, the candidates' kernel columns)."""
        columns = self._columns(X, sample, candidates, known)
        scores = np.empty(len(candidates))
        saved = K[:, j].copy()
        for c in range(len(candidates)):
            K[:, j] = columns[:, c]
            scores[c] = self._mi_lower_bound(K, labels, subsets, forest_seed)
        K[:, j] = saved
        return scores, columns

    def _mi_lower_bound(self, K: np.ndarray, labels: np.ndarray, subsets: np.ndarray, forest_seed: int) -> float:
        """H(Y) + mean log q(y | c) in nats, q a small forest on the random k-NN codes of K's
        rows (hash functions ``subsets``), fitted and evaluated on the two halves of the
        rows in turn."""
        bits = unpack_codes(random_knn_codes(K, subsets), self.n_bits)
        rng = np.random.RandomState(forest_seed)
        order = rng.permutation(len(labels))
        halves = (order[: len(order) // 2], order[len(order) // 2 :])
        log_q = np.empty(len(labels))
        for fit, held in (halves, halves[::-1]):
            forest = self._grow(bits[fit], labels[fit], forest_seed, self.mi_trees)
            proba = 1e-12 + self._forest_proba(forest, bits[held])
            log_q[held] = np.log(np.clip(proba[np.arange(len(held)), labels[held]], 1e-3, 1.0))
        prior = np.bincount(labels, minlength=len(self.classes_)) / len(labels)
        return float(entropy(prior) + log_q.mean())

    def _short_code_buckets(self, S: np.ndarray) -> list:
        """Training structures grouped by the first ``bucket_bits`` bits of their codes under
        the initial references (``S``: their similarities to them)."""
        bits = self.klsh_.codes_from_similarities(S)[:, : self.bucket_bits]
        _, bucket = np.unique(bits, axis=0, return_inverse=True)
        bucket = bucket.reshape(-1)
        return [np.flatnonzero(bucket == b) for b in range(bucket.max() + 1)]
