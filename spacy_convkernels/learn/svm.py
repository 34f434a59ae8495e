"""Exact-kernel support vector machines over structures (Moschitti 2006; Bunescu & Mooney
2005 on dependency paths).

One binary C-SVM per output, one-vs-rest, trained by libsvm on the exact normalized Gram
of the training structures (scikit-learn's ``SVC(kernel="precomputed")``). Only the
support vectors are kept, so the decision value of output j costs one kernel row against
them:

    f_j(x) = sum_i a_ij K(x, s_i) + b_j

A budget ``max_support`` bounds that cost: when the outputs' support vectors together
exceed it, the SVMs are trained again on the ``max_support`` structures of largest dual
weight max_j |a_ij| (the structures that carry the decisions), which keeps at most that
many support vectors. Cutting support vectors without retraining would leave the
intercepts and the remaining weights out of balance.

The outputs are the second class for binary labels, every class for more, and every
column for a label-indicator matrix (multilabel). :func:`out_of_fold_decisions` gives the
decision values of the training structures from SVMs that did not see them (k folds over
one Gram), the inputs of a model stacked on the SVM; :func:`cross_validate_svm` also
chooses C among several by those folds, every fit of every C, fold and output reading the
one Gram.
"""

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import KFold, StratifiedGroupKFold, StratifiedKFold
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted

from ..errors import InvalidParameterError
from ..kernels.base import KERNEL, Kernel, n_threads
from ..utils.inputs import check_structures, structure_tags, training_set
from ..utils.row_blocks import gram_rows
from ..utils.validation import COUNT, POSITIVE, Interval, Satisfies, validate_params

FOLDS = Interval(2, None, integer=True)


class KernelSVC(ClassifierMixin, BaseEstimator):
    """C-SVMs, one per output, over the exact kernel (see the module).

    Parameters
    ----------
    kernel : Kernel
        A kernel of the package; the SVMs see its normalized values.
    C : float, default=1.0
        The SVMs' regularization.
    class_weight : dict, "balanced", "fair" or None, default=None
        As scikit-learn's ``SVC``, for every binary SVM (classes 0 and 1); ``"fair"`` is
        KeLP's fairness: an error on a positive costs C * negatives / positives, on a
        negative C.
    max_support : int >= 1 or None, default=None
        The budget of support vectors (see the module); None for no bound.
    n_jobs : int or None, default=None
        Threads of the kernel computations, as :meth:`Kernel.gram`, and of the binary SVMs'
        training (libsvm releases the GIL).
    verbose : bool, default=False
        Show progress bars (tqdm, on stderr).

    Attributes
    ----------
    classes_ : ndarray
        The class labels (the output columns' indices for multilabel ``y``).
    support_ : ndarray of int
        The rows of the training structures that support some output.
    support_vectors_ : list
        Those structures.
    dual_coef_ : ndarray of shape (n_outputs, n_support)
        a_ij, zero where a structure does not support output j.
    intercept_ : ndarray of shape (n_outputs,)
        b_j.
    """

    _parameter_constraints = {"kernel": [KERNEL], "C": [POSITIVE], "max_support": [COUNT, None]}

    def __init__(
        self,
        kernel: Kernel,
        *,
        C: float = 1.0,
        class_weight=None,
        max_support: int | None = None,
        n_jobs: int | None = None,
        verbose: bool = False,
    ):
        self.kernel = kernel
        self.C = C
        self.class_weight = class_weight
        self.max_support = max_support
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = structure_tags(super().__sklearn_tags__())
        tags.classifier_tags.multi_label = True
        return tags

    def fit(self, X: Sequence, y):
        X, y = self._training_set(X, y)
        return self._fit_gram(self.kernel.gram(X, n_jobs=self.n_jobs, progress=self.verbose), X, y)

    def fit_gram(self, K: np.ndarray, X: Sequence, y, *, within=None) -> "KernelSVC":
        """Fit on ``K``, a precomputed Gram of ``X``: the kernel's, or its sum with another
        kernel on the same items (then give :meth:`decision_function_from_rows` the same sum);
        ``within`` (n_structures x n_outputs, boolean): the rows each output's SVM trains on."""
        X, y = self._training_set(X, y)
        K = _check_gram(K, (len(X), len(X)), "K")
        return self._fit_gram(K, X, y, within=None if within is None else np.asarray(within, dtype=bool))

    def _training_set(self, X: Sequence, y) -> tuple[list, np.ndarray]:
        X, y = training_set(self, X, y, minimum=2, multilabel=True)
        check_classification_targets(y)
        return X, y

    def _fit_gram(self, K: np.ndarray, X: list, y: np.ndarray, within: np.ndarray | None = None) -> "KernelSVC":
        """Fit on the Gram ``K`` of ``X``; ``within``: the rows each output's SVM is trained on."""
        self.classes_, self.multilabel_, columns = self._outputs(y)
        return self._fit_columns(K, X, columns, within=within)

    def _outputs(self, y: np.ndarray) -> tuple[np.ndarray, bool, np.ndarray]:
        """(classes, multilabel, one boolean column per output) of the labels ``y``."""
        if y.ndim == 2:
            return np.arange(y.shape[1]), True, y.astype(bool)
        classes = unique_labels(y)
        return classes, False, y[:, None] == (classes[1:] if len(classes) == 2 else classes)

    def _fit_columns(
        self, K: np.ndarray, X: list, columns: np.ndarray, *, within: np.ndarray | None = None, prepare: bool = True
    ) -> "KernelSVC":
        """Fit one SVM per output column on the Gram ``K`` of ``X`` (within the budget,
        see the module), the SVM of column j on the rows where ``within[:, j]`` (None: all);
        ``prepare`` the support vectors (indexed) for :meth:`decision_function`."""
        within = np.ones(columns.shape, dtype=bool) if within is None else within
        machines = self._binary_svms(K, columns, within)
        support = np.unique(np.concatenate([support for support, _, _ in machines]))
        if self.max_support is not None and len(support) > self.max_support:
            weight = np.zeros(len(X))
            for rows, coef, _ in machines:
                np.maximum.at(weight, rows, np.abs(coef))
            kept = np.sort(np.argsort(-weight, kind="stable")[: self.max_support])
            machines = [
                (kept[rows], coef, intercept)
                for rows, coef, intercept in self._binary_svms(K[np.ix_(kept, kept)], columns[kept], within[kept])
            ]
        self.support_ = np.unique(np.concatenate([support for support, _, _ in machines])).astype(np.int64)
        self.support_vectors_ = [X[i] for i in self.support_]
        self.dual_coef_ = np.zeros((len(machines), len(self.support_)))
        for j, (support, coef, _) in enumerate(machines):
            self.dual_coef_[j, np.searchsorted(self.support_, support)] = coef
        self.intercept_ = np.array([intercept for _, _, intercept in machines])
        if prepare:
            self._prepared = self.kernel.prepare(self.support_vectors_)
        return self

    def _binary_svms(
        self, K: np.ndarray, columns: np.ndarray, within: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The binary SVM of every column on its rows, on threads (libsvm releases the GIL)."""
        with ThreadPoolExecutor(n_threads(self.n_jobs)) as pool:
            return list(pool.map(lambda j: self._binary_svm(K, columns[:, j], within[:, j]), range(columns.shape[1])))

    def _binary_svm(
        self, K: np.ndarray, positive: np.ndarray, rows: np.ndarray, C: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """(support rows, a, b) of the SVM separating ``positive`` among the ``rows``
        (a mask) of the Gram ``K``, regularized by ``C`` (default ``self.C``); a constant
        decision of -1 or +1 when one side is empty."""
        chosen = np.flatnonzero(rows)
        positive = positive[chosen]
        if positive.all() or not positive.any():
            return np.zeros(0, dtype=np.int64), np.zeros(0), 1.0 if positive.all() and len(chosen) else -1.0
        weight = fair_weights(positive) if self.class_weight == "fair" else self.class_weight
        sub = K if len(chosen) == len(K) else K[np.ix_(chosen, chosen)]
        svm = SVC(kernel="precomputed", C=self.C if C is None else C, class_weight=weight).fit(
            sub, positive.astype(int)
        )
        return chosen[svm.support_], svm.dual_coef_[0], float(svm.intercept_[0])

    def set_support(self, support_vectors: Sequence, *, dual_coef, intercept, classes, multilabel: bool) -> "KernelSVC":
        """Fit to saved support vectors, coefficients, intercepts and classes."""
        self.classes_, self.multilabel_ = np.asarray(classes), multilabel
        self.support_vectors_ = list(support_vectors)
        self.support_ = np.arange(len(self.support_vectors_))
        self.dual_coef_ = np.asarray(dual_coef, dtype=np.float64).reshape(-1, len(self.support_vectors_))
        self.intercept_ = np.asarray(intercept, dtype=np.float64)
        self._prepared = self.kernel.prepare(self.support_vectors_)
        return self

    def decision_function(self, X: Sequence) -> np.ndarray:
        """f_j(x): shape (n,) for binary labels (positive: the second class), else (n, n_outputs)."""
        return self.decision_function_from_rows(self.support_rows(X))

    def support_rows(self, X: Sequence) -> np.ndarray:
        """K(x, s_i) for every x of ``X`` and support vector s_i, by blocks of rows."""
        check_is_fitted(self, "dual_coef_")
        X = check_structures(self.kernel, X, type(self).__name__)
        if not self.support_vectors_:
            return np.zeros((len(X), 0))
        return gram_rows(self.kernel, X, self._prepared, n_jobs=self.n_jobs, verbose=self.verbose, desc="SVM rows")

    def decision_function_from_rows(self, K: np.ndarray) -> np.ndarray:
        """The decision values from kernel rows against ``support_vectors_`` (the kernel's,
        or the sum the SVMs were fitted on by :meth:`fit_gram`)."""
        check_is_fitted(self, "dual_coef_")
        K = _check_gram(K, (None, len(self.support_vectors_)), "K")
        decisions = K @ self.dual_coef_.T + self.intercept_
        return decisions[:, 0] if self._binary else decisions

    @property
    def _binary(self) -> bool:
        return not self.multilabel_ and len(self.classes_) == 2

    def __getstate__(self):
        """Pickled without the engine-ready support vectors, which are rebuilt on unpickling."""
        return {name: value for name, value in super().__getstate__().items() if name != "_prepared"}

    def __setstate__(self, state):
        super().__setstate__(state)
        if "support_vectors_" in state:
            self._prepared = self.kernel.prepare(self.support_vectors_)

    def predict(self, X: Sequence) -> np.ndarray:
        """The class of highest decision (binary: the second when positive); for
        multilabel ``y``, the indicator of the positive decisions."""
        decisions = self.decision_function(X)
        if self.multilabel_:
            return (decisions > 0).astype(int)
        if self._binary:
            return self.classes_[(decisions > 0).astype(int)]
        return self.classes_[np.argmax(decisions, axis=1)]


def _positive_values(values) -> bool:
    return len(values) > 0 and all(isinstance(v, (int, float)) and v > 0 for v in values)


@dataclass(frozen=True)
class CrossValidated:
    """What :func:`cross_validate_svm` found: the chosen ``C``, the out-of-fold decisions
    at that C (the shape of ``decision_function``'s), and the score of every C tried."""

    C: float
    decisions: np.ndarray
    scores: dict


@validate_params({"n_folds": [FOLDS]})
def out_of_fold_decisions(
    estimator: KernelSVC,
    X: Sequence,
    y,
    *,
    n_folds: int = 5,
    random_state: int | None = 0,
    gram=None,
    groups: Sequence | None = None,
) -> np.ndarray:
    """The decision values of each structure of ``X`` by SVMs fitted on the other folds, with
    ``estimator``'s C; ``estimator`` is then fitted on all of ``X``
    (:func:`cross_validate_svm` with one C)."""
    return cross_validate_svm(
        estimator, X, y, n_folds=n_folds, random_state=random_state, gram=gram, groups=groups
    ).decisions


@validate_params({"n_folds": [FOLDS], "Cs": [Satisfies(_positive_values, "positive numbers"), None]})
def cross_validate_svm(
    estimator: KernelSVC,
    X: Sequence,
    y,
    *,
    Cs: Sequence[float] | None = None,
    score: Callable[[np.ndarray, np.ndarray], float] | None = None,
    n_folds: int = 5,
    random_state: int | None = 0,
    gram=None,
    groups: Sequence | None = None,
    within=None,
    progress: Callable[[str], None] | None = None,
    refit: bool = True,
) -> CrossValidated:
    """Out-of-fold decisions of ``X`` and the choice of C among ``Cs`` (default: the
    estimator's C alone), on one Gram of ``X`` (``gram``, precomputed, or the kernel's).

    ``n_folds`` folds, stratified by class (for multilabel ``y``, by first label) when
    every stratum fills them; with ``groups`` (one per structure: its document) the
    structures of a group share a fold, when there are at least ``n_folds`` groups, so no
    decision comes from an SVM that saw a near copy of its structure. Each C is scored by
    ``score(decisions, y)`` on its out-of-fold decisions (higher is better; ties go to the
    smaller C); ``estimator`` is then fitted on all of ``X`` with the chosen C (its ``C``
    set to it; with ``refit=False`` its SVMs are not fitted, for a caller that compares
    several Grams and fits on the best with :meth:`KernelSVC.fit_gram`). ``within`` (n_structures x
    n_outputs, boolean): the rows each output's SVMs train on (a second stage trained on
    the items the first one accepts); every row still gets every output's decision. Fits
    run on threads (``estimator.n_jobs``), each fold's Gram copied once for all its fits;
    ``progress(message)`` after each fold."""
    X, y = estimator._training_set(X, y)
    Cs = [float(estimator.C)] if Cs is None else sorted({float(C) for C in Cs})
    if len(Cs) > 1 and score is None:
        raise InvalidParameterError("cross_validate_svm: choosing among several Cs needs a score")
    if len(X) < n_folds:
        raise InvalidParameterError(f"out_of_fold_decisions: {n_folds} folds need as many structures, got {len(X)}")
    if groups is not None and len(groups) != len(X):
        raise InvalidParameterError(f"groups must give one group per structure, got {len(groups)} for {len(X)}")
    if gram is None:
        K = estimator.kernel.gram(X, n_jobs=estimator.n_jobs, progress=estimator.verbose)
    else:
        K = _check_gram(gram, (len(X), len(X)), "gram")
    _, _, columns = estimator._outputs(y)
    within = np.ones(columns.shape, dtype=bool) if within is None else np.asarray(within, dtype=bool)
    if within.shape != columns.shape:
        raise InvalidParameterError(f"within must have the shape of the outputs {columns.shape}, got {within.shape}")
    decisions = {C: np.zeros(columns.shape) for C in Cs}
    folds = _folds(y, columns, n_folds, random_state, groups)
    for number, (fit, held) in enumerate(folds, start=1):
        fold_gram = K[np.ix_(fit, fit)]
        if estimator.max_support is None:  # every (C, output) SVM apart, all on threads
            jobs = [(C, j) for C in Cs for j in range(columns.shape[1])]
            n_fits = len(jobs)

            def fold_fit(job, fit=fit, held=held, fold_gram=fold_gram):
                C, j = job
                support, coef, intercept = estimator._binary_svm(fold_gram, columns[fit, j], within[fit, j], C)
                decisions[C][held, j] = K[np.ix_(held, fit[support])] @ coef + intercept

            with ThreadPoolExecutor(n_threads(estimator.n_jobs)) as pool:
                list(pool.map(fold_fit, jobs))
        else:  # the budget retrains on the outputs' joint support: the fold's SVMs of a C together
            n_fits = len(Cs)
            for C in Cs:
                fold = clone(estimator).set_params(C=C)
                fold._fit_columns(fold_gram, [X[i] for i in fit], columns[fit], within=within[fit], prepare=False)
                decisions[C][held] = K[np.ix_(held, fit[fold.support_])] @ fold.dual_coef_.T + fold.intercept_
        if progress is not None:
            progress(f"fold {number}/{n_folds}: {n_fits} SVMs on {len(fit):,} structures")
    estimator.classes_, estimator.multilabel_ = estimator._outputs(y)[:2]
    shaped = {C: values[:, 0] if estimator._binary else values for C, values in decisions.items()}
    scores = {C: float(score(shaped[C], y)) if score is not None else float("nan") for C in Cs}
    best = max(Cs, key=lambda C: (scores[C], -C)) if score is not None else Cs[0]
    if refit:
        estimator.set_params(C=best)
        estimator._fit_gram(K, X, y, within=within)
    return CrossValidated(best, shaped[best], scores)


def _folds(y: np.ndarray, columns: np.ndarray, n_folds: int, random_state, groups) -> list:
    """The (fitting rows, held-out rows) of ``n_folds`` folds (:func:`cross_validate_svm`)."""
    strata = y if y.ndim == 1 else np.where(columns.any(axis=1), columns.argmax(axis=1), -1)
    stratify = np.unique(strata, return_counts=True)[1].min() >= n_folds
    if groups is not None and len(set(groups)) >= n_folds:
        splits = StratifiedGroupKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
        return list(
            splits.split(np.zeros(len(y)), strata, groups=np.unique(np.asarray(groups), return_inverse=True)[1])
        )
    folds = (StratifiedKFold if stratify else KFold)(n_splits=n_folds, shuffle=True, random_state=random_state)
    return list(folds.split(np.zeros(len(y)), strata))


def _check_gram(K, shape: tuple, name: str) -> np.ndarray:
    """``K`` as a float64 matrix of ``shape`` (None: any number of rows)."""
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or any(want is not None and got != want for got, want in zip(K.shape, shape)):
        raise InvalidParameterError(f"{name} must be a matrix of shape {shape}, got shape {K.shape}")
    return K


def fair_weights(positive: np.ndarray) -> dict[int, float]:
    """KeLP's fairness as libsvm class weights: a positive error costs negatives / positives times a negative one."""
    return {1: (~positive).sum() / positive.sum(), 0: 1.0}


def fair_one_vs_all(train_gram: np.ndarray, y: np.ndarray, test_gram: np.ndarray, *, C: float = 10.0) -> np.ndarray:
    """The predicted classes of ``test_gram``'s rows: one C-SVM per class on a precomputed
    Gram with KeLP's fairness (a positive error costs C * negatives / positives, a
    negative one C), the highest decision value wins. The classes' SVMs train on threads
    (libsvm releases the GIL)."""
    classes = np.unique(y)

    def decisions(label) -> np.ndarray:
        positive = y == label
        svm = SVC(kernel="precomputed", C=C, class_weight=fair_weights(positive)).fit(train_gram, positive.astype(int))
        return svm.decision_function(test_gram)

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        scores = np.stack(list(pool.map(decisions, classes)), axis=1)
    return classes[scores.argmax(axis=1)]
