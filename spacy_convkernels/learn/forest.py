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
from typing import Sequence

import numpy as np
from scipy.stats import entropy
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_is_fitted

from ..approx.klsh import KLSH, unpack_codes
from ..kernels.base import InvalidParameterError, Kernel
from .knn import training_set


class KLSHForestClassifier(ClassifierMixin, BaseEstimator):
    """Random forest of decision trees on random subspaces of KLSH codes (see the module)."""

    def __init__(self, kernel: Kernel, n_references: int = 100, n_bits: int = 1000, n_subspaces: int = 250,
                 subspace_bits: int = 30, subset_size: int = 20, hash_function: str = "random_knn",
                 optimize_references: bool = False, mi_samples: int = 1000, mi_trees: int = 20,
                 bucket_bits: int = 5, top_buckets: int = 2, max_candidates: int = 20, random_state=None,
                 n_jobs=None):
        self.kernel = kernel
        self.n_references = n_references
        self.n_bits = n_bits
        self.n_subspaces = n_subspaces
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

    def fit(self, X: Sequence, y):
        X, y = training_set(X, y, minimum=2)
        if not 1 <= self.subspace_bits <= self.n_bits:
            raise InvalidParameterError(f"subspace_bits must be in 1..n_bits, got {self.subspace_bits!r}")
        if self.optimize_references and self.hash_function != "random_knn":
            raise InvalidParameterError("optimize_references needs hash_function='random_knn', whose bits need "
                                        "no Gram of the references")
        rng = check_random_state(self.random_state)
        self.classes_ = unique_labels(y)
        y_index = np.searchsorted(self.classes_, y)
        self.klsh_ = KLSH(self.kernel, self.n_references, self.n_bits, self.subset_size, self.hash_function,
                          rng.randint(2**31), self.n_jobs).fit(X)
        similarities = (self._optimize_references(X, y_index, rng) if self.optimize_references
                        else self.klsh_.similarities(X))
        bits = unpack_codes(self.klsh_.codes_from_similarities(similarities), self.n_bits)
        self.subspaces_, self.trees_ = self._grow(bits, y_index, rng)
        return self

    @property
    def n_kernel_evaluations_(self) -> int:
        """Kernel values computed so far: codes of training and predicted structures, and
        the reference optimization (the training codes included when it ran)."""
        return self.klsh_.n_kernel_evaluations_ + getattr(self, "optimization_evaluations_", 0)

    def predict_proba(self, X: Sequence) -> np.ndarray:
        check_is_fitted(self, "trees_")
        return self._forest_proba(self.subspaces_, self.trees_, unpack_codes(self.klsh_.transform(list(X)), self.n_bits))

    def predict(self, X: Sequence) -> np.ndarray:
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    def _grow(self, bits: np.ndarray, y_index: np.ndarray, rng, n_subspaces=None):
        subspaces, trees = [], []
        for _ in range(n_subspaces or self.n_subspaces):
            subspace = rng.choice(bits.shape[1], min(self.subspace_bits, bits.shape[1]), replace=False)
            tree = DecisionTreeClassifier(random_state=rng.randint(2**31)).fit(bits[:, subspace], y_index)
            subspaces.append(subspace)
            trees.append(tree)
        return subspaces, trees

    def _forest_proba(self, subspaces, trees, bits: np.ndarray) -> np.ndarray:
        proba = np.zeros((len(bits), len(self.classes_)))
        for subspace, tree in zip(subspaces, trees):
            proba[:, tree.classes_] += tree.predict_proba(bits[:, subspace])
        return proba / len(trees)

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
        buckets = self._short_code_buckets(S)
        self.optimization_evaluations_ = klsh.n_kernel_evaluations_

        def on_sample(sample, known=None):
            """K of the sample against the chosen references, and the columns known on it
            (``known``: those already computed on this sample)."""
            K = S[sample]
            known = dict(zip(initial, K.T.copy())) if known is None else known
            replaced = [k for k in range(M) if chosen[k] != initial[k]]
            if replaced:
                K[:, replaced] = self._columns(X, sample, [chosen[k] for k in replaced], known)
            return K, known

        sample = (np.arange(len(X)) if self.mi_samples >= len(X)
                  else rng.choice(len(X), self.mi_samples, replace=False))
        hash_seed = rng.randint(2**31)
        forest_seed = rng.randint(2**31)
        K, known = on_sample(sample)
        self.mi_history_ = [self._mi_lower_bound(K, y_index[sample], hash_seed, forest_seed)]
        for j in range(M):
            if self.mi_samples < len(X):  # stochastic: a fresh subset for each reference
                sample = rng.choice(len(X), self.mi_samples, replace=False)
                K, known = on_sample(sample)
            labels = y_index[sample]
            first = [members[rng.randint(len(members))] for members in buckets]
            scores, _ = self._score_candidates(X, sample, K, j, first, known, labels, hash_seed, forest_seed)
            best_buckets = np.argsort(-scores, kind="stable")[: self.top_buckets]
            members = np.concatenate([buckets[b] for b in best_buckets])
            if len(members) > self.max_candidates:
                members = rng.choice(members, self.max_candidates, replace=False)
            second = sorted({int(i) for i in members} | {int(chosen[j])})
            scores, columns = self._score_candidates(X, sample, K, j, second, known, labels, hash_seed, forest_seed)
            winner = int(np.argmax(scores))
            chosen[j] = second[winner]
            K[:, j] = columns[:, winner]
            self.mi_history_.append(float(scores[winner]))
        klsh.set_references([X[i] for i in chosen], chosen, hash_seed)
        return on_sample(np.arange(len(X)), known if len(sample) == len(X) else None)[0]

    def _columns(self, X: list, sample: np.ndarray, indices: Sequence[int], known: dict) -> np.ndarray:
        """K(x_s, x_i) for s in ``sample`` and i in ``indices``: from ``known`` (columns on
        this sample by index), else computed, counted and added to it."""
        missing = sorted({i for i in indices if i not in known})
        if missing:
            computed = self.kernel.gram([X[s] for s in sample], [X[i] for i in missing], n_jobs=self.n_jobs)
            self.optimization_evaluations_ += computed.size
            known.update(zip(missing, computed.T))
        return np.stack([known[i] for i in indices], axis=1)

    def _score_candidates(self, X, sample, K, j, candidates, known, labels, hash_seed, forest_seed):
        """(the bound with each candidate as reference j, the candidates' kernel columns)."""
        columns = self._columns(X, sample, candidates, known)
        scores = np.empty(len(candidates))
        saved = K[:, j].copy()
        for c in range(len(candidates)):
            K[:, j] = columns[:, c]
            scores[c] = self._mi_lower_bound(K, labels, hash_seed, forest_seed)
        K[:, j] = saved
        return scores, columns

    def _mi_lower_bound(self, K: np.ndarray, labels: np.ndarray, hash_seed: int, forest_seed: int) -> float:
        """H(Y) + mean log q(y | c) in nats, q a small forest on codes made from K's
        columns, fitted and evaluated on the two halves of the rows in turn."""
        bits = unpack_codes(self._hash(K, hash_seed), self.n_bits)
        rng = np.random.RandomState(forest_seed)
        order = rng.permutation(len(labels))
        halves = (order[: len(order) // 2], order[len(order) // 2 :])
        log_q = np.empty(len(labels))
        for fit, held in (halves, halves[::-1]):
            subspaces, trees = self._grow(bits[fit], labels[fit], np.random.RandomState(forest_seed),
                                          n_subspaces=self.mi_trees)
            proba = np.full((len(held), len(self.classes_)), 1e-12)
            for subspace, tree in zip(subspaces, trees):
                proba[:, tree.classes_] += tree.predict_proba(bits[held][:, subspace]) / len(trees)
            log_q[held] = np.log(np.clip(proba[np.arange(len(held)), labels[held]], 1e-3, 1.0))
        prior = np.bincount(labels, minlength=len(self.classes_)) / len(labels)
        return float(entropy(prior) + log_q.mean())

    def _hash(self, K: np.ndarray, seed: int) -> np.ndarray:
        """Codes of similarity rows under hash functions drawn with ``seed`` (same for every candidate)."""
        return self._hasher(K.shape[1], seed).codes_from_similarities(K)

    def _hasher(self, M: int, seed: int) -> KLSH:
        cache = getattr(self, "_hashers", {})
        if (M, seed) not in cache:
            hasher = KLSH(self.kernel, M, self.n_bits, self.subset_size, "random_knn", seed)
            rng = check_random_state(seed)
            alpha = min(self.subset_size, M)
            hasher.subsets_ = np.stack([[rng.choice(M, alpha, replace=False) for _ in range(2)]
                                        for _ in range(self.n_bits)])
            hasher.references_ = [None] * M
            cache[(M, seed)] = hasher
            self._hashers = cache
        return cache[(M, seed)]

    def _short_code_buckets(self, S: np.ndarray) -> list:
        """Training structures grouped by the first ``bucket_bits`` bits of their codes under
        the initial references (``S``: their similarities to them)."""
        bits = unpack_codes(self.klsh_.codes_from_similarities(S), self.n_bits)[:, : self.bucket_bits]
        _, bucket = np.unique(bits, axis=0, return_inverse=True)
        bucket = bucket.reshape(-1)
        return [np.flatnonzero(bucket == b) for b in range(bucket.max() + 1)]
