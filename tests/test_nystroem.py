import numpy as np
import pytest
from data_paths import CORPORA
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import Nystroem as ScikitNystroem

from spacy_convkernels import ConvKernelsWarning
from spacy_convkernels.approx import Nystroem
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import InvalidParameterError, PartialTreeKernel, SmoothedPartialTreeKernel

SAMPLE = CORPORA / "trec-qc-kelp-sample"


@pytest.fixture(scope="module")
def trees():
    return [e.trees[name] for e in read_klp(SAMPLE / "TREC_10.coarse.first60.klp.gz") for name in ("grct", "lct")]


def test_equals_scikit_learn_on_the_same_kernel(trees):
    kernel = PartialTreeKernel(terminal_factor=5)
    G = kernel.gram(trees)
    index = np.arange(len(trees), dtype=float)[:, None]
    ours = Nystroem(kernel, n_components=40, random_state=3).fit(trees)
    theirs = ScikitNystroem(kernel=lambda a, b: G[int(a[0]), int(b[0])], n_components=40, random_state=3).fit(index)
    np.testing.assert_array_equal(ours.component_indices_, theirs.component_indices_)
    np.testing.assert_allclose(ours.normalization_, theirs.normalization_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours.transform(trees), theirs.transform(index), rtol=1e-9, atol=1e-9)


def test_all_structures_as_landmarks_reproduce_the_kernel(trees):
    kernel = PartialTreeKernel()
    X = trees[:50]
    Z = Nystroem(kernel, n_components=50, random_state=0).fit_transform(X)
    np.testing.assert_allclose(Z @ Z.T, kernel.gram(X), atol=1e-6)


def test_kmeans_plus_plus_landmarks(trees):
    kernel = PartialTreeKernel(terminal_factor=5)
    G = kernel.gram(trees)
    errors = {}
    for landmarks in ("uniform", "kmeans++"):
        model = Nystroem(kernel, n_components=30, landmark_init=landmarks, random_state=7).fit(trees)
        assert len(set(model.component_indices_)) == 30
        again = Nystroem(kernel, n_components=30, landmark_init=landmarks, random_state=7).fit(trees)
        np.testing.assert_array_equal(model.component_indices_, again.component_indices_)
        Z = model.transform(trees)
        errors[landmarks] = np.linalg.norm(G - Z @ Z.T) / np.linalg.norm(G)
    assert errors["kmeans++"] < errors["uniform"]


def test_float32_output_and_fit_transform(trees):
    model = Nystroem(SmoothedPartialTreeKernel(), n_components=20, dtype=np.float32, random_state=0)
    Z = model.fit_transform(trees)
    assert Z.dtype == np.float32 and Z.shape == (len(trees), 20)
    np.testing.assert_allclose(Z, model.transform(trees), rtol=1e-6)


def test_bad_use(trees):
    with pytest.raises(NotFittedError):
        Nystroem(PartialTreeKernel()).transform(trees)
    for bad in (dict(n_components=0), dict(landmark_init="random"), dict(dtype=np.int32)):
        with pytest.raises(InvalidParameterError):
            Nystroem(PartialTreeKernel(), **bad).fit(trees)
    with pytest.raises(InvalidParameterError):
        Nystroem("ptk").fit(trees)
    with pytest.raises(InvalidParameterError):
        Nystroem(PartialTreeKernel()).fit([])
    with pytest.warns(ConvKernelsWarning, match="landmarks"):
        assert Nystroem(PartialTreeKernel(), n_components=500).fit(trees[:10]).n_features_out_ == 10


def test_fitted_model_pickles(trees):
    import pickle

    model = Nystroem(SmoothedPartialTreeKernel(), n_components=15, random_state=0).fit(trees)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.transform(trees[:9]), model.transform(trees[:9]))


def test_progress_bars_only_when_asked(trees, capsys):
    quiet = Nystroem(PartialTreeKernel(), n_components=12, landmark_init="kmeans++", random_state=0).fit_transform(
        trees
    )
    assert capsys.readouterr().err == ""
    loud = Nystroem(
        PartialTreeKernel(), n_components=12, landmark_init="kmeans++", random_state=0, verbose=True
    ).fit_transform(trees)
    err = capsys.readouterr().err
    assert "k-means++ landmarks" in err and "Nystroem landmarks" in err and "Nystroem transform" in err
    assert f"{len(trees)}/{len(trees)}" in err
    np.testing.assert_array_equal(quiet, loud)


def test_landmark_gram_by_blocks_is_the_gram(trees, monkeypatch):
    from spacy_convkernels.approx import _blocks

    kernel = PartialTreeKernel()
    whole = Nystroem(kernel, n_components=30, random_state=1).fit(trees)
    monkeypatch.setattr(_blocks, "ROWS", 7)
    blocks = Nystroem(kernel, n_components=30, random_state=1).fit(trees)
    np.testing.assert_array_equal(blocks.normalization_, whole.normalization_)
    np.testing.assert_array_equal(blocks.transform(trees), whole.transform(trees))
