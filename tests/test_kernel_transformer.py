"""KernelTransformer: a kernel in scikit-learn pipelines and grid searches."""

import pickle

import numpy as np
import pytest
from data_paths import CORPORA
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import (
    InvalidParameterError,
    KernelTransformer,
    PartialTreeKernel,
    StructureTypeError,
    SubsetTreeKernel,
)

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


@pytest.fixture(scope="module")
def qc():
    examples = list(read_klp(SAMPLE))
    return [e.trees["grct"] for e in examples], np.array([e.labels[0] for e in examples])


def test_transform_is_the_normalized_kernel_against_the_training_structures(qc):
    trees, _ = qc
    kernel = PartialTreeKernel(lam=0.3)
    model = KernelTransformer(kernel).fit(trees[:40])
    training = kernel.prepare(trees[:40])  # indexed, as the transformer's
    np.testing.assert_array_equal(model.transform(trees[40:]), kernel.gram(trees[40:], training))
    np.testing.assert_allclose(model.transform(trees[40:]), kernel.gram(trees[40:], trees[:40]), rtol=1e-12)
    np.testing.assert_array_equal(model.self_kernels_, kernel.diag(trees[:40]))
    raw = KernelTransformer(kernel, normalize=False).fit(trees[:40]).transform(trees[40:])
    np.testing.assert_array_equal(raw, kernel.gram(trees[40:], training, normalize=False))
    assert model.get_feature_names_out().tolist() == [f"kerneltransformer{i}" for i in range(40)]


def test_fit_transform_computes_the_upper_triangle_only(qc, monkeypatch):
    trees, _ = qc
    kernel = PartialTreeKernel()
    computed = []
    gram = PartialTreeKernel.gram

    def counting(self, X, Y=None, **kwargs):
        computed.append(len(X) * (len(X) - 1) // 2 if Y is None else len(X) * len(Y))
        return gram(self, X, Y, **kwargs)

    monkeypatch.setattr(PartialTreeKernel, "gram", counting)
    K = KernelTransformer(kernel).fit_transform(trees)
    assert sum(computed) == 60 * 59 // 2
    monkeypatch.undo()
    np.testing.assert_array_equal(K, kernel.gram(trees))
    # K(a, b) and K(b, a) may differ in the last bit: the engine sums in another order
    np.testing.assert_allclose(K, KernelTransformer(kernel).fit(trees).transform(trees), rtol=1e-13)


def test_parameters_reach_the_kernel():
    model = KernelTransformer(PartialTreeKernel())
    assert model.get_params(deep=True)["kernel__lam"] == 0.4
    model.set_params(kernel__lam=0.2)
    assert model.kernel.lam == 0.2
    assert clone(model).kernel.lam == 0.2 and clone(model).kernel is not model.kernel


def test_grid_search_over_the_kernel_parameters_on_trec(qc):
    trees, labels = qc
    pipeline = make_pipeline(KernelTransformer(PartialTreeKernel()), SVC(kernel="precomputed"))
    search = GridSearchCV(
        pipeline,
        {"kerneltransformer__kernel__lam": [0.2, 0.4], "svc__C": [1.0, 10.0]},
        cv=StratifiedKFold(2, shuffle=True, random_state=0),
    )
    search.fit(trees[:40], labels[:40])
    assert len(search.cv_results_["params"]) == 4
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    best = search.best_estimator_
    assert best.named_steps["kerneltransformer"].kernel.lam == search.best_params_["kerneltransformer__kernel__lam"]
    assert len(best.named_steps["kerneltransformer"].X_fit_) == 40  # refit on every training question
    accuracy = search.score(trees[40:], labels[40:])
    # the same model by hand: an SVM on the precomputed Grams with the best parameters
    kernel = PartialTreeKernel(lam=search.best_params_["kerneltransformer__kernel__lam"])
    svm = SVC(kernel="precomputed", C=search.best_params_["svc__C"]).fit(kernel.gram(trees[:40]), labels[:40])
    assert accuracy == np.mean(svm.predict(kernel.gram(trees[40:], trees[:40])) == labels[40:])
    assert accuracy > 0.3  # 6 classes; chance is below 0.2


def test_bad_use(qc):
    trees, _ = qc
    with pytest.raises(NotFittedError):
        KernelTransformer(PartialTreeKernel()).transform(trees)
    with pytest.raises(InvalidParameterError):
        KernelTransformer("ptk").fit(trees)
    with pytest.raises(InvalidParameterError):
        KernelTransformer(PartialTreeKernel()).fit([])
    with pytest.raises(StructureTypeError):
        KernelTransformer(PartialTreeKernel()).fit("(S (NP a))")
    with pytest.raises(StructureTypeError):
        KernelTransformer(PartialTreeKernel()).fit(trees).transform([1.0, 2.0])


def test_pickled_transformer_gives_the_same_values(qc):
    trees, _ = qc
    model = KernelTransformer(SubsetTreeKernel()).fit(trees[:30])
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.transform(trees[30:]), model.transform(trees[30:]))
