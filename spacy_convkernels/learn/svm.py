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
one Gram), the inputs of a model stacked on the SVM.
"""

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import KFold, StratifiedGroupKFold, StratifiedKFold
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted

from ..errors import InvalidParameterError
from ..inputs import check_structures, structure_tags, training_set
from ..kernels.base import KERNEL, Kernel, n_threads
from ..row_blocks import gram_rows
from ..validation import COUNT, POSITIVE, Interval, validate_params

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

    def fit_gram(self, K: np.ndarray, X: Sequence, y) -> "KernelSVC":
        """Fit on ``K``, a precomputed Gram of ``X``: the kernel's, or its sum with another
        kernel on the same items (then give :meth:`decision_function_from_rows` the same sum)."""
        X, y = self._training_set(X, y)
        K = _check_gram(K, (len(X), len(X)), "K")
        return self._fit_gram(K, X, y)

    def _training_set(self, X: Sequence, y) -> tuple[list, np.ndarray]:
        X, y = training_set(self, X, y, minimum=2, multilabel=True)
        check_classification_targets(y)
        return X, y

    def _fit_gram(self, K: np.ndarray, X: list, y: np.ndarray) -> "KernelSVC":
        """Fit on the Gram ``K`` of ``X``."""
        self.classes_, self.multilabel_, columns = self._outputs(y)
        return self._fit_columns(K, X, columns)

    def _outputs(self, y: np.ndarray) -> tuple[np.ndarray, bool, np.ndarray]:
        """(classes, multilabel, one boolean column per output) of the labels ``y``."""
        if y.ndim == 2:
            return np.arange(y.shape[1]), True, y.astype(bool)
        classes = unique_labels(y)
        return classes, False, y[:, None] == (classes[1:] if len(classes) == 2 else classes)

    def _fit_columns(self, K: np.ndarray, X: list, columns: np.ndarray, *, prepare: bool = True) -> "KernelSVC":
        """Fit one SVM per output column on the Gram ``K`` of ``X`` (within the budget,
        see the module); ``prepare`` the support vectors (indexed) for
        :meth:`decision_function`, not needed by the folds of :func:`out_of_fold_decisions`,
        whose decisions come from the Gram."""
        machines = self._binary_svms(K, columns)
        support = np.unique(np.concatenate([support for support, _, _ in machines]))
        if self.max_support is not None and len(support) > self.max_support:
            weight = np.zeros(len(X))
            for rows, coef, _ in machines:
                np.maximum.at(weight, rows, np.abs(coef))
            kept = np.sort(np.argsort(-weight, kind="stable")[: self.max_support])
            machines = [
                (kept[rows], coef, intercept)
                for rows, coef, intercept in self._binary_svms(K[np.ix_(kept, kept)], columns[kept])
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

    def _binary_svms(self, K: np.ndarray, columns: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The binary SVM of every column, on threads (libsvm releases the GIL)."""
        with ThreadPoolExecutor(n_threads(self.n_jobs)) as pool:
            return list(pool.map(lambda column: self._binary_svm(K, column), columns.T))

    def _binary_svm(self, K: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(support rows, a, b) of the SVM separating ``positive``; a constant
        decision of -1 or +1 when one side is empty."""
        if positive.all() or not positive.any():
            return np.zeros(0, dtype=np.int64), np.zeros(0), 1.0 if positive.all() else -1.0
        weight = fair_weights(positive) if self.class_weight == "fair" else self.class_weight
        svm = SVC(kernel="precomputed", C=self.C, class_weight=weight).fit(K, positive.astype(int))
        return svm.support_, svm.dual_coef_[0], float(svm.intercept_[0])

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
    """The decision values of each structure of ``X`` by SVMs fitted on the other folds
    (``n_folds`` folds over one Gram of ``X``, stratified by class, or for multilabel ``y``
    by first label, when every stratum fills the folds); ``estimator`` is then fitted on
    all of ``X``. ``gram``: a precomputed Gram of ``X`` to use instead of the kernel's
    (as :meth:`KernelSVC.fit_gram`). ``groups``: one group per structure (the document it
    comes from); the structures of a group then share a fold, so that no decision comes
    from an SVM that saw a near copy of its structure (the other candidates of its
    sentence), when there are at least ``n_folds`` groups."""
    X, y = estimator._training_set(X, y)
    if len(X) < n_folds:
        raise InvalidParameterError(f"out_of_fold_decisions: {n_folds} folds need as many structures, got {len(X)}")
    if gram is None:
        K = estimator.kernel.gram(X, n_jobs=estimator.n_jobs, progress=estimator.verbose)
    else:
        K = _check_gram(gram, (len(X), len(X)), "gram")
    estimator._fit_gram(K, X, y)
    _, _, columns = estimator._outputs(y)
    strata = y if y.ndim == 1 else np.where(columns.any(axis=1), columns.argmax(axis=1), -1)
    stratify = np.unique(strata, return_counts=True)[1].min() >= n_folds
    if groups is not None and len(groups) != len(X):
        raise InvalidParameterError(f"groups must give one group per structure, got {len(groups)} for {len(X)}")
    if groups is not None and len(set(groups)) >= n_folds:
        splits = StratifiedGroupKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
        splits = splits.split(np.zeros(len(X)), strata, groups=np.unique(np.asarray(groups), return_inverse=True)[1])
    else:
        folds = (StratifiedKFold if stratify else KFold)(n_splits=n_folds, shuffle=True, random_state=random_state)
        splits = folds.split(np.zeros(len(X)), strata)
    decisions = np.zeros((len(X), columns.shape[1]))
    for fit, held in splits:
        fold = clone(estimator)._fit_columns(K[np.ix_(fit, fit)], [X[i] for i in fit], columns[fit], prepare=False)
        decisions[held] = K[np.ix_(held, fit[fold.support_])] @ fold.dual_coef_.T + fold.intercept_
    return decisions[:, 0] if estimator._binary else decisions


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
