"""KernelSVC: scikit-learn's SVC on the exact Gram, kept as support vectors; out-of-fold decisions."""

import numpy as np
import pytest
from data_paths import CORPORA
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from sklearn.svm import SVC

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import InvalidParameterError, StructureTypeError
from spacy_convkernels.kernels import PartialTreeKernel, SubtreeKernel
from spacy_convkernels.learn.svm import KernelSVC, cross_validate_svm, fair_one_vs_all, out_of_fold_decisions

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


@pytest.fixture(scope="module")
def questions():
    examples = list(read_klp(SAMPLE))
    return [e.trees["grct"] for e in examples], np.array([e.labels[0] for e in examples])


def precomputed(kernel, X, y, Z, **options):
    """scikit-learn's own SVC on the Gram, the decisions of ``Z``."""
    svm = SVC(kernel="precomputed", **options).fit(kernel.gram(X), y)
    return svm.decision_function(kernel.gram(Z, X))


def test_binary_decisions_are_those_of_the_precomputed_svc(questions):
    X, labels = questions
    y = labels == labels[0]
    kernel = PartialTreeKernel()
    svm = KernelSVC(kernel, C=3.0).fit(X[:40], y[:40])
    assert svm.decision_function(X[40:]) == pytest.approx(precomputed(kernel, X[:40], y[:40], X[40:], C=3.0))
    assert len(svm.support_vectors_) < 40
    assert (svm.predict(X[40:]) == (svm.decision_function(X[40:]) > 0)).all()


def test_one_vs_rest_outputs_are_the_binary_svms(questions):
    X, labels = questions
    kernel = SubtreeKernel()
    svm = KernelSVC(kernel).fit(X[:45], labels[:45])
    decisions = svm.decision_function(X[45:])
    assert decisions.shape == (15, len(svm.classes_))
    for j, label in enumerate(svm.classes_):
        expected = precomputed(kernel, X[:45], labels[:45] == label, X[45:])
        assert decisions[:, j] == pytest.approx(expected)
    assert list(svm.predict(X[45:])) == list(svm.classes_[decisions.argmax(axis=1)])


def test_multilabel_columns_and_an_empty_column(questions):
    X, labels = questions
    Y = np.stack([labels == labels[0], labels == labels[1], np.zeros(len(labels), dtype=bool)], axis=1).astype(int)
    svm = KernelSVC(PartialTreeKernel()).fit(X, Y)
    decisions = svm.decision_function(X)
    assert decisions.shape == (60, 3)
    assert (decisions[:, 2] == -1.0).all()
    assert (svm.predict(X) == (decisions > 0)).all()


def test_saved_support_gives_the_same_decisions(questions):
    X, labels = questions
    svm = KernelSVC(PartialTreeKernel()).fit(X[:40], labels[:40])
    restored = KernelSVC(PartialTreeKernel()).set_support(
        svm.support_vectors_,
        dual_coef=svm.dual_coef_.tolist(),
        intercept=svm.intercept_.tolist(),
        classes=svm.classes_.tolist(),
        multilabel=False,
    )
    assert restored.decision_function(X[40:]) == pytest.approx(svm.decision_function(X[40:]))


def test_out_of_fold_decisions_come_from_svms_that_did_not_see_the_row(questions):
    X, labels = questions
    y = labels == labels[0]
    kernel = PartialTreeKernel()
    estimator = KernelSVC(kernel)
    decisions = out_of_fold_decisions(estimator, X, y.astype(int), n_folds=3, random_state=1)
    for fit, held in StratifiedKFold(n_splits=3, shuffle=True, random_state=1).split(X, y):
        Xf = [X[i] for i in fit]
        expected = precomputed(kernel, Xf, y[fit], [X[i] for i in held])
        assert decisions[held] == pytest.approx(expected)
    assert estimator.decision_function(X) == pytest.approx(precomputed(kernel, X, y, X))


def test_out_of_fold_groups_stay_in_one_fold(questions):
    X, labels = questions
    y = (labels == labels[0]).astype(int)
    groups = [i // 4 for i in range(len(X))]  # 4 structures a group, as the candidates of one document
    kernel = PartialTreeKernel()
    decisions = out_of_fold_decisions(KernelSVC(kernel), X, y, n_folds=3, random_state=1, groups=groups)
    folds = StratifiedGroupKFold(n_splits=3, shuffle=True, random_state=1).split(X, y, groups=groups)
    for fit, held in folds:
        assert not {groups[i] for i in fit} & {groups[i] for i in held}
        expected = precomputed(kernel, [X[i] for i in fit], y[fit], [X[i] for i in held])
        assert decisions[held] == pytest.approx(expected)
    ungrouped = out_of_fold_decisions(KernelSVC(kernel), X, y, n_folds=3, random_state=1)
    assert not np.allclose(decisions, ungrouped)
    with pytest.raises(InvalidParameterError, match="one group per structure"):
        out_of_fold_decisions(KernelSVC(kernel), X, y, n_folds=3, groups=groups[:-1])


def test_cross_validation_chooses_c_by_its_score_on_one_gram(questions):
    """Every C's out-of-fold decisions are those of SVMs fitted by hand on the other folds;
    the chosen C is the one of the best score (ties: the smaller), the estimator refitted with it."""
    X, labels = questions
    y = (labels == labels[0]).astype(int)
    kernel = PartialTreeKernel()
    calls = []

    def score(decisions, truth):  # prefers the C whose decisions are largest on the positives
        calls.append(decisions.copy())
        return float(decisions[truth == 1].mean())

    estimator = KernelSVC(kernel)
    found = cross_validate_svm(estimator, X, y, Cs=[10.0, 0.1, 1.0], score=score, n_folds=3, random_state=1)
    assert sorted(found.scores) == [0.1, 1.0, 10.0] and len(calls) == 3
    assert found.C == max(found.scores, key=found.scores.get) and estimator.C == found.C
    folds = list(StratifiedKFold(n_splits=3, shuffle=True, random_state=1).split(X, y))
    for C, decisions in zip([0.1, 1.0, 10.0], calls):
        for fit, held in folds:
            expected = precomputed(kernel, [X[i] for i in fit], y[fit], [X[i] for i in held], C=C)
            assert decisions[held] == pytest.approx(expected)
    assert found.decisions == pytest.approx(calls[[0.1, 1.0, 10.0].index(found.C)])
    assert estimator.decision_function(X) == pytest.approx(precomputed(kernel, X, y, X, C=found.C))
    again = cross_validate_svm(KernelSVC(kernel), X, y, Cs=[10.0, 0.1, 1.0], score=score, n_folds=3, random_state=1)
    assert again.C == found.C and (again.decisions == found.decisions).all()
    with pytest.raises(InvalidParameterError, match="needs a score"):
        cross_validate_svm(KernelSVC(kernel), X, y, Cs=[0.1, 1.0], n_folds=3)
    with pytest.raises(InvalidParameterError, match="Cs"):
        cross_validate_svm(KernelSVC(kernel), X, y, Cs=[0.0], n_folds=3)


def test_each_output_trains_on_its_rows_and_decides_on_all(questions):
    """A second stage (``within``): output 0 is trained on the rows of class A or B only,
    output 1 on all; every row gets both decisions, out of fold and after the final fit,
    with or without a support budget."""
    X, labels = questions
    a, b = np.unique(labels)[:2]
    Y = np.stack([labels == a, np.isin(labels, [a, b])], axis=1).astype(int)
    within = np.stack([np.isin(labels, [a, b]), np.ones(len(X), dtype=bool)], axis=1)
    kernel = PartialTreeKernel()
    for budget in (None, 10_000):
        estimator = KernelSVC(kernel, max_support=budget)
        found = cross_validate_svm(estimator, X, Y, n_folds=3, random_state=2, within=within)
        strata = np.where(Y.any(axis=1), Y.argmax(axis=1), -1)
        for fit, held in StratifiedKFold(n_splits=3, shuffle=True, random_state=2).split(X, strata):
            rows = fit[within[fit, 0]]
            first = precomputed(kernel, [X[i] for i in rows], Y[rows, 0], [X[i] for i in held])
            assert found.decisions[held, 0] == pytest.approx(first)
            second = precomputed(kernel, [X[i] for i in fit], Y[fit, 1], [X[i] for i in held])
            assert found.decisions[held, 1] == pytest.approx(second)
        rows = np.flatnonzero(within[:, 0])
        final = estimator.decision_function(X)
        assert final[:, 0] == pytest.approx(precomputed(kernel, [X[i] for i in rows], Y[rows, 0], X))
        assert final[:, 1] == pytest.approx(precomputed(kernel, X, Y[:, 1], X))


def test_fair_class_weight_is_kelps_fairness(questions):
    X, labels = questions
    kernel = PartialTreeKernel()
    svm = KernelSVC(kernel, C=10.0, class_weight="fair").fit(X[:45], labels[:45])
    for j, label in enumerate(svm.classes_):
        positive = labels[:45] == label
        weight = {1: (~positive).sum() / positive.sum(), 0: 1.0}
        expected = precomputed(kernel, X[:45], positive, X[45:], C=10.0, class_weight=weight)
        assert svm.decision_function(X[45:])[:, j] == pytest.approx(expected)


def test_a_support_budget_retrains_on_the_largest_dual_weights(questions):
    X, labels = questions
    kernel = PartialTreeKernel()
    full = KernelSVC(kernel, C=10.0).fit(X, labels)
    budget = len(full.support_) // 2
    bounded = KernelSVC(kernel, C=10.0, max_support=budget).fit(X, labels)
    assert len(bounded.support_) <= budget < len(full.support_)
    weight = np.abs(full.dual_coef_).max(axis=0)
    kept = np.sort(full.support_[np.argsort(-weight, kind="stable")[:budget]])
    assert set(bounded.support_) <= set(kept)
    retrained = KernelSVC(kernel, C=10.0).fit([X[i] for i in kept], labels[kept])
    assert bounded.decision_function(X) == pytest.approx(retrained.decision_function(X))
    assert KernelSVC(kernel, max_support=len(full.support_)).fit(X, labels).dual_coef_ == pytest.approx(
        KernelSVC(kernel).fit(X, labels).dual_coef_
    )


@pytest.mark.parametrize("budget", [None, 12])
def test_shared_gram_folds_decide_as_svms_fitted_on_each_fold_alone(questions, budget):
    """One Gram serves every class and fold: the out-of-fold decisions of every class equal
    those of a KernelSVC fitted from scratch on the fold's structures (its own Gram), with a
    support budget that binds in every fold or without one."""
    X, labels = questions
    kernel = PartialTreeKernel()
    estimator = KernelSVC(kernel, C=3.0, class_weight="fair", max_support=budget)
    found = cross_validate_svm(estimator, X, labels, n_folds=3, random_state=4)
    for fit, held in StratifiedKFold(n_splits=3, shuffle=True, random_state=4).split(X, labels):
        alone = KernelSVC(kernel, C=3.0, class_weight="fair", max_support=budget).fit([X[i] for i in fit], labels[fit])
        assert budget is None or len(alone.support_) == budget
        assert found.decisions[held] == pytest.approx(alone.decision_function([X[i] for i in held]), abs=1e-9)
    everything = KernelSVC(kernel, C=3.0, class_weight="fair", max_support=budget).fit(X, labels)
    assert estimator.decision_function(X) == pytest.approx(everything.decision_function(X), abs=1e-9)


def test_bad_input():
    kernel = PartialTreeKernel()
    with pytest.raises(InvalidParameterError, match="C must be"):
        KernelSVC(kernel, C=0).fit([], [])
    with pytest.raises(StructureTypeError, match="item 0"):
        KernelSVC(kernel).fit(["not a tree", "x"], [0, 1])
    with pytest.raises(InvalidParameterError, match="agree"):
        KernelSVC(kernel).fit([], [])
    with pytest.raises(InvalidParameterError, match="max_support"):
        KernelSVC(kernel, max_support=0).fit([], [])
    with pytest.raises(InvalidParameterError, match="n_folds"):
        out_of_fold_decisions(KernelSVC(kernel), [], [], n_folds=1)


def test_fair_one_vs_all_weighs_positive_errors_by_the_class_ratio(questions):
    X, labels = questions
    kernel = PartialTreeKernel()
    train, test = kernel.gram(X[:45]), kernel.gram(X[45:], X[:45])
    y = labels[:45]
    scores = []
    for label in np.unique(y):
        positive = y == label
        weight = {1: (~positive).sum() / positive.sum(), 0: 1.0}
        scores.append(
            SVC(kernel="precomputed", C=10.0, class_weight=weight).fit(train, positive).decision_function(test)
        )
    expected = np.unique(y)[np.argmax(scores, axis=0)]
    assert list(fair_one_vs_all(train, y, test, C=10.0)) == list(expected)
