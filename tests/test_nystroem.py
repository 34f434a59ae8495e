import math
from pathlib import Path

import numpy as np
import pytest
from data_paths import CORPORA
from scipy.linalg import LinAlgError
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import Nystroem as ScikitNystroem

from spacy_convkernels import ConvKernelsWarning
from spacy_convkernels.approx import Nystroem
from spacy_convkernels.approx import nystroem as nystroem_module
from spacy_convkernels.approx.nystroem import EIGENVALUE_RTOL, nystroem_normalization
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import KernelOverflowError
from spacy_convkernels.kernels import InvalidParameterError, PartialTreeKernel, SmoothedPartialTreeKernel

SAMPLE = CORPORA / "trec-qc-kelp-sample"


@pytest.fixture(scope="module")
def trees():
    return [e.trees[name] for e in read_klp(SAMPLE / "TREC_10.coarse.first60.klp.gz") for name in ("grct", "lct")]


def test_equals_scikit_learn_on_the_same_kernel(trees):
    kernel = PartialTreeKernel(terminal_factor=1)  # positive definite on these trees (below: an indefinite one)
    G = kernel.gram(trees)
    index = np.arange(len(trees), dtype=float)[:, None]
    ours = Nystroem(kernel, n_components=40, random_state=3).fit(trees)
    theirs = ScikitNystroem(kernel=lambda a, b: G[int(a[0]), int(b[0])], n_components=40, random_state=3).fit(index)
    np.testing.assert_array_equal(ours.component_indices_, theirs.component_indices_)
    assert ours.n_features_out_ == 40  # W is well conditioned: every eigenvalue kept
    # scikit-learn's W^(-1/2) = U S^(-1/2) U^T is our projection U S^(-1/2) rotated by U^T
    P, N = ours.normalization_, theirs.normalization_
    np.testing.assert_allclose(P @ P.T, N @ N.T, rtol=1e-9, atol=1e-9)
    ours_Z, theirs_Z = ours.transform(trees), theirs.transform(index)
    np.testing.assert_allclose(ours_Z @ ours_Z.T, theirs_Z @ theirs_Z.T, rtol=1e-9, atol=1e-9)
    rotation = np.linalg.lstsq(ours_Z, theirs_Z, rcond=None)[0]
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(40), atol=1e-8)
    np.testing.assert_allclose(ours_Z @ rotation, theirs_Z, atol=1e-9)


def test_the_truncated_projection_equals_the_full_one_on_the_kept_subspace(trees):
    kernel = PartialTreeKernel(terminal_factor=1)
    W = kernel.gram(trees[:40])
    eigenvalues, eigenvectors = np.linalg.eigh(W)
    K = kernel.gram(trees, trees[:40])
    for rtol in (1e-10, EIGENVALUE_RTOL, 1e-3, 1e-2, 0.1):
        kept = eigenvalues > rtol * eigenvalues[-1]
        inverse_root = eigenvectors @ np.diag(np.where(kept, 1 / np.sqrt(np.abs(eigenvalues)), 0)) @ eigenvectors.T
        model = Nystroem(kernel, eigenvalue_rtol=rtol).set_landmarks(trees[:40])
        P = model.normalization_
        assert P.shape == (40, kept.sum()) == (40, model.n_features_out_)
        assert len(model.get_feature_names_out()) == kept.sum()
        np.testing.assert_allclose(P @ P.T, inverse_root @ inverse_root, atol=1e-9)  # W^+ on the kept subspace
        np.testing.assert_allclose(P.T @ W @ P, np.eye(kept.sum()), atol=1e-9)  # orthonormal features
        Z = model.transform(trees)
        np.testing.assert_allclose(Z, K @ P, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(Z @ Z.T, K @ inverse_root @ inverse_root @ K.T, atol=1e-9)


def test_all_structures_as_landmarks_reproduce_the_kernel(trees):
    kernel = PartialTreeKernel()
    X = trees[:50]
    Z = Nystroem(kernel, n_components=50, random_state=0).fit_transform(X)
    np.testing.assert_allclose(Z @ Z.T, kernel.gram(X), atol=1e-6)


@pytest.mark.slow
def test_kmeans_plus_plus_landmarks(trees):
    kernel = PartialTreeKernel(terminal_factor=1)
    G = kernel.gram(trees)
    errors = {}
    for landmarks in ("uniform", "kmeans++"):
        errors[landmarks] = []
        for seed in range(5):
            model = Nystroem(kernel, n_components=30, landmark_init=landmarks, random_state=seed).fit(trees)
            assert len(set(model.component_indices_)) == 30
            Z = model.transform(trees)
            errors[landmarks].append(np.linalg.norm(G - Z @ Z.T) / np.linalg.norm(G))
    assert np.mean(errors["kmeans++"]) < np.mean(errors["uniform"])


def test_float32_output_and_fit_transform(trees):
    model = Nystroem(SmoothedPartialTreeKernel(), n_components=20, dtype=np.float32, random_state=0)
    Z = model.fit_transform(trees)
    assert Z.dtype == np.float32 and Z.shape == (len(trees), 20)
    np.testing.assert_allclose(Z, model.transform(trees), rtol=1e-6)
    wide_model = Nystroem(SmoothedPartialTreeKernel(), n_components=20, random_state=0)
    wide = wide_model.fit_transform(trees)
    assert wide.dtype == np.float64
    np.testing.assert_allclose(Z, wide, rtol=1e-6, atol=1e-6 * np.abs(wide).max())
    np.testing.assert_array_equal(wide_model.set_params(dtype=np.float32).transform(trees), Z)  # no refit needed


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


@pytest.mark.slow
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
    from spacy_convkernels.utils import row_blocks

    kernel = PartialTreeKernel()
    whole = Nystroem(kernel, n_components=30, random_state=1).fit(trees)
    monkeypatch.setattr(row_blocks, "ROWS", 7)
    blocks = Nystroem(kernel, n_components=30, random_state=1).fit(trees)
    np.testing.assert_array_equal(blocks.normalization_, whole.normalization_)
    np.testing.assert_array_equal(blocks.transform(trees), whole.transform(trees))


@pytest.fixture(scope="module")
def distinct():
    """The distinct GRCT trees of the sample (59)."""
    found = {}
    for example in read_klp(SAMPLE / "TREC_10.coarse.first60.klp.gz"):
        found.setdefault(str(example.trees["grct"]), example.trees["grct"])
    return list(found.values())


# the eigh normalization -------------------------------------------------------------------------


def test_normalization_with_duplicated_landmarks(distinct):
    kernel, trees = PartialTreeKernel(terminal_factor=5), distinct
    model = Nystroem(kernel).set_landmarks(trees[:10] + trees[:10])
    assert model.normalization_.shape == (20, 10) and np.all(np.isfinite(model.normalization_))  # rank 10
    Z = model.transform(trees[:10])
    np.testing.assert_allclose(Z @ Z.T, kernel.gram(trees[:10]), atol=1e-9)
    held_out = model.transform(trees[10:])
    assert np.all(np.sum(held_out**2, axis=1) <= 1 + 1e-9)  # no more than a unit vector's mass


def test_normalization_of_a_rank_one_landmark_set(distinct):
    kernel, trees = PartialTreeKernel(terminal_factor=5), distinct
    P = nystroem_normalization(np.ones((5, 5)))
    np.testing.assert_allclose(np.abs(P), np.full((5, 1), 1 / 5), atol=1e-15)  # the unit eigenvector / sqrt(5)
    model = Nystroem(kernel).set_landmarks([trees[0]] * 5)
    Z = model.transform([trees[0], trees[1]])
    assert Z.shape == (2, 1)
    assert Z[0] @ Z[0] == pytest.approx(1.0, abs=1e-12)
    assert Z[0] @ Z[1] == pytest.approx(kernel(trees[0], trees[1]), abs=1e-12)


def test_negative_eigenvalues_get_no_weight():
    W = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    P = nystroem_normalization(W)
    np.testing.assert_allclose(P @ P.T, np.ones((2, 2)) / 6, atol=1e-15)
    rng = np.random.RandomState(0)
    A = rng.normal(size=(30, 30))
    W = A + A.T  # indefinite
    P = nystroem_normalization(W)
    eigenvalues, eigenvectors = np.linalg.eigh(W)
    positive = eigenvectors[:, eigenvalues > 0]
    assert P.shape == (30, positive.shape[1])
    np.testing.assert_allclose(P @ P.T @ W @ P @ P.T, P @ P.T, atol=1e-10)  # W^+ of W's positive part
    np.testing.assert_allclose(W @ P @ P.T, positive @ positive.T, atol=1e-10)  # the projector on it


def test_an_indefinite_kernel_fits(trees):
    """PTK with terminal factor 5 over GRCT and LCT trees together is not positive
    semidefinite (a LEX node is a leaf in one and not in the other)."""
    kernel = PartialTreeKernel(terminal_factor=5)
    W = kernel.gram(trees[:40])
    assert np.linalg.eigvalsh(W)[0] < -0.1
    model = Nystroem(kernel, n_components=40, random_state=0).fit(trees[:40])
    assert np.all(np.isfinite(model.transform(trees)))


def test_tiny_eigenvalues_are_cut_relative_to_the_largest():
    for rtol in (1e-10, EIGENVALUE_RTOL, 1e-2):
        W = np.diag([8 * rtol, 4.0, 2 * rtol, 0.0, -1e-17])  # kept above 4 rtol: 4 and 8 rtol
        P = nystroem_normalization(W, rtol=rtol)
        np.testing.assert_allclose(np.abs(P), [[0, 1 / math.sqrt(8 * rtol)], [0.5, 0], [0, 0], [0, 0], [0, 0]])
    default = np.diag([8 * EIGENVALUE_RTOL, 4.0, 2 * EIGENVALUE_RTOL])
    assert nystroem_normalization(default).shape == (3, 2)
    for nothing_positive in (np.zeros((3, 3)), -np.eye(3)):
        P = nystroem_normalization(nothing_positive)
        assert P.shape == (3, 1) and not np.any(P)


def test_the_default_cutoff_is_the_one_chosen_by_accuracy():
    """The default is what docs/results/nystroem_cutoff.md's rule picked from QC and STS
    accuracy, for the estimator and the normalization alike."""
    page = (Path(__file__).parent.parent / "docs" / "results" / "nystroem_cutoff.md").read_text(encoding="utf-8")
    assert f"So the rule picks **{EIGENVALUE_RTOL:g}**." in page
    assert Nystroem(PartialTreeKernel()).eigenvalue_rtol == EIGENVALUE_RTOL


def test_a_saved_normalization_is_used_as_it_is(trees):
    """A saved model keeps its features whatever the cutoff of the estimator that loads it:
    set_landmarks takes the normalization as it is, never cut again."""
    kernel = PartialTreeKernel(terminal_factor=1)
    saved = Nystroem(kernel, eigenvalue_rtol=1e-10).set_landmarks(trees[:60])
    assert saved.n_features_out_ > Nystroem(kernel, eigenvalue_rtol=1e-2).set_landmarks(trees[:60]).n_features_out_
    loaded = Nystroem(kernel, eigenvalue_rtol=1e-2).set_landmarks(trees[:60], saved.normalization_)
    assert loaded.n_features_out_ == saved.n_features_out_
    np.testing.assert_array_equal(loaded.transform(trees), saved.transform(trees))


def test_the_normalization_never_raises_a_linear_algebra_error(monkeypatch):
    calls = []

    def failing(W, driver=None):
        calls.append(driver)
        if driver == "evd":
            raise LinAlgError("did not converge")
        return np.linalg.eigh(W)

    monkeypatch.setattr(nystroem_module, "eigh", failing)
    P = nystroem_normalization(4 * np.eye(3))
    np.testing.assert_allclose(P @ P.T, np.eye(3) / 4)
    assert calls == ["evd", "ev"]


def test_a_gram_that_is_not_finite_is_an_error():
    with pytest.raises(KernelOverflowError):
        nystroem_normalization(np.array([[1.0, np.inf], [np.inf, 1.0]]))
