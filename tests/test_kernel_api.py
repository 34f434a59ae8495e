import threading
import time

import numpy as np
import pytest
from sklearn.base import clone

from spacy_convkernels import ConvKernelsError, Tree
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import (
    InvalidParameterError,
    PartialTreeKernel,
    StructureTypeError,
    SubsetTreeKernel,
    SubtreeKernel,
)

from conftest import CORPORA
from random_trees import random_tree

KERNELS = [SubtreeKernel(), SubtreeKernel(variant="textbook"), SubsetTreeKernel(), PartialTreeKernel(terminal_factor=5)]


@pytest.fixture(scope="module")
def qc_trees():
    path = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
    return [e.trees[name] for e in read_klp(path) for name in ("grct", "lct", "clct")]


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_gram_agrees_with_pairs_and_call(kernel, qc_trees):
    X, Y = qc_trees[:50], qc_trees[40:120]
    G = kernel.gram(X, Y)
    assert G.shape == (50, 80) and G.dtype == np.float64
    index = [(i, 50 + j) for i in range(50) for j in range(80)]
    np.testing.assert_allclose(kernel.pairs(X + Y, index).reshape(50, 80), G, rtol=1e-12)
    assert kernel(X[3], Y[7]) == pytest.approx(G[3, 7], rel=1e-12)
    raw = kernel.gram(X, Y, normalize=False)
    expected = raw / np.sqrt(np.outer(kernel.diag(X), kernel.diag(Y)))
    np.testing.assert_allclose(G, expected, rtol=1e-12)
    S = kernel.gram(X)
    np.testing.assert_array_equal(S, S.T)
    np.testing.assert_allclose(np.diag(S), 1.0)
    np.testing.assert_allclose(S, kernel.gram(X, X), rtol=1e-12)


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_threads_give_identical_results(kernel, qc_trees):
    one = kernel.gram(qc_trees, n_jobs=1)
    np.testing.assert_array_equal(kernel.gram(qc_trees, n_jobs=2), one)
    np.testing.assert_array_equal(kernel.gram(qc_trees, n_jobs=-1), one)
    np.testing.assert_allclose(kernel.gram(qc_trees, qc_trees[:7], n_jobs=3), one[:, :7], rtol=1e-12)


def test_engine_releases_the_gil(qc_trees):
    """While a long Gram runs in a thread, this thread keeps running Python code."""
    kernel = PartialTreeKernel()
    X = qc_trees * 16  # 2,880 trees, about four million pairs
    done = threading.Event()
    spent = {}

    def work():
        start = time.perf_counter()
        kernel.gram(X, n_jobs=1)
        spent["seconds"] = time.perf_counter() - start
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    longest_gap, last = 0.0, time.perf_counter()
    while not done.is_set():
        now = time.perf_counter()
        longest_gap, last = max(longest_gap, now - last), now
    worker.join()
    assert spent["seconds"] > 0.2
    assert longest_gap < spent["seconds"] / 3


def test_empty_inputs():
    kernel = PartialTreeKernel()
    assert kernel.gram([]).shape == (0, 0)
    assert kernel.gram([Tree("a")], []).shape == (1, 0)
    assert kernel.pairs([Tree("a")], []).shape == (0,)
    assert kernel.diag([]).shape == (0,)


def test_zero_self_kernel_normalizes_to_zero():
    # with terminal factor 0, single nodes have no fragments: 0/0 must become 0, not NaN
    kernel = PartialTreeKernel(terminal_factor=0)
    G = kernel.gram([Tree("a"), Tree("a"), Tree.from_string("(a(b))")])
    assert not np.isnan(G).any()
    assert G[0, 1] == 0.0 and G[2, 2] == pytest.approx(1.0)


def test_bad_structures_are_named():
    kernel = SubsetTreeKernel()
    with pytest.raises(StructureTypeError, match="item 1 is str"):
        kernel.gram([Tree("a"), "(a)"])
    with pytest.raises(ConvKernelsError):
        kernel(Tree("a"), None)
    with pytest.raises(IndexError):
        kernel.pairs([Tree("a")], [(0, 1)])


@pytest.mark.parametrize(
    "kernel",
    [SubtreeKernel(lam=0), SubtreeKernel(variant="fast"), SubsetTreeKernel(lam=-1),
     PartialTreeKernel(mu=0), PartialTreeKernel(terminal_factor=-1), PartialTreeKernel(lam=float("nan"))],
    ids=repr,
)
def test_bad_parameters_are_refused(kernel):
    with pytest.raises(InvalidParameterError):
        kernel.gram([Tree("a")])


def test_bad_n_jobs_is_refused():
    with pytest.raises(InvalidParameterError):
        PartialTreeKernel().gram([Tree("a")], n_jobs=0)


def test_scikit_learn_estimator_protocol():
    kernel = PartialTreeKernel(lam=0.3, mu=0.5, terminal_factor=2)
    assert kernel.get_params() == {"lam": 0.3, "mu": 0.5, "terminal_factor": 2}
    copy = clone(kernel).set_params(lam=0.9)
    assert copy.lam == 0.9 and kernel.lam == 0.3
    assert repr(kernel) == "PartialTreeKernel(lam=0.3, mu=0.5, terminal_factor=2)"


def test_precomputed_svm_accepts_the_gram(qc_trees):
    from sklearn.svm import SVC

    rng = np.random.default_rng(0)
    X = [random_tree(rng, 12) for _ in range(30)]
    y = np.arange(30) % 2
    G = SubsetTreeKernel().gram(X)
    assert SVC(kernel="precomputed").fit(G, y).predict(G).shape == (30,)
