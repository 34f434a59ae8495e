import threading
import time

import numpy as np
import pytest
from data_paths import CORPORA
from random_trees import random_tree
from sklearn.base import clone

from spacy_convkernels import ConvKernelsError, KernelOverflowError, Tree
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import (
    InvalidParameterError,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    StructureTypeError,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    ZelenkoTreeKernel,
)

KERNELS = [SubtreeKernel(), SubtreeKernel(variant="kelp"), SubsetTreeKernel(), PartialTreeKernel(terminal_factor=5)]


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


@pytest.mark.slow
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


@pytest.mark.parametrize(
    "kernel",
    [
        PartialTreeKernel(label_weights={"a": 0.0}),
        SmoothedPartialTreeKernel(),
        SubsequencePathKernel(),
        ZelenkoTreeKernel(),
    ],
    ids=repr,
)
def test_empty_inputs_with_tables(kernel):
    assert clone(kernel).gram([]).shape == (0, 0)
    assert clone(kernel).diag([]).shape == (0,)


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
    with pytest.raises(InvalidParameterError, match="outside"):
        kernel.pairs([Tree("a")], [(0, 1)])
    for bad in ([(0, 1, 0)], [(0.0, 1.0)], [0, 1, 0]):
        with pytest.raises(InvalidParameterError, match="shape"):
            kernel.pairs([Tree("a"), Tree("b")], bad)
    with pytest.raises(StructureTypeError):
        kernel.gram(Tree("a"))


@pytest.mark.parametrize(
    "kernel",
    [
        SubtreeKernel(lam=0),
        SubtreeKernel(variant="fast"),
        SubsetTreeKernel(lam=-1),
        SubsetTreeKernel(lam=float("inf")),
        PartialTreeKernel(mu=0),
        PartialTreeKernel(terminal_factor=-1),
        PartialTreeKernel(lam=float("nan")),
        PartialTreeKernel(lam="0.4"),
        PartialTreeKernel(mu=None),
        PartialTreeKernel(terminal_factor=True),
    ],
    ids=repr,
)
def test_bad_parameters_are_refused(kernel):
    with pytest.raises(InvalidParameterError):
        kernel.gram([Tree("a")])


def test_bad_n_jobs_is_refused():
    for n_jobs in (0, 1.5, "2", True):
        with pytest.raises(InvalidParameterError):
            PartialTreeKernel().gram([Tree("a")], n_jobs=n_jobs)
    assert PartialTreeKernel().gram([Tree("a")], n_jobs=10**10).shape == (1, 1)  # capped at the cores


def test_normalization_neither_overflows_nor_underflows():
    wide = Tree.from_string("(r" + " (a)" * 300 + ")")  # self-kernel about 1e179 with lam = mu = 1
    kernel = PartialTreeKernel(lam=1, mu=1)
    assert kernel(wide, wide, normalize=False) > 1e170
    assert kernel(wide, wide) == pytest.approx(1.0)
    np.testing.assert_allclose(kernel.gram([wide, wide]), 1.0)
    np.testing.assert_allclose(kernel.gram([wide], [wide]), 1.0)
    tiny = SubsetTreeKernel(lam=1e-170)
    assert tiny(Tree("x"), Tree("x")) == pytest.approx(1.0)


@pytest.mark.filterwarnings("ignore::spacy_convkernels.errors.KernelUnderflowWarning")
@pytest.mark.parametrize("lam", [1e-320, 5e-324])
def test_a_call_normalizes_tiny_self_kernels_as_the_gram_does(lam):
    """K(a, a) = lam and K(b, b) = 2 lam: their product underflows, K(a, b) r(a) r(b) does not
    (a fuzzer found the call giving 1.0 at lam = 5e-324, 0.70720 at 1e-320)."""
    kernel, a, b = SubsetTreeKernel(lam=lam), Tree("A"), Tree("A", [Tree("A")])
    assert kernel(a, b, normalize=False) == lam and kernel(b, b, normalize=False) == 2 * lam
    assert kernel(a, b) == pytest.approx(2**-0.5, rel=1e-12)
    assert kernel(a, b) == pytest.approx(kernel.gram([a], [b])[0, 0], rel=1e-12)
    assert kernel.explain(a, b).value == pytest.approx(2**-0.5, rel=1e-12)


def test_overflow_is_an_error_not_a_wrong_value():
    huge = Tree.from_string("(r" + " (a)" * 600 + ")")
    with pytest.raises(KernelOverflowError, match="overflowed"):
        PartialTreeKernel(lam=1, mu=1).gram([huge])


def test_self_kernels_are_computed_once_per_structure(monkeypatch):
    kernel = PartialTreeKernel(terminal_factor=3)
    a, b, c = (Tree.from_string(s) for s in ("(a(b)(c))", "(a(b))", "(a(c)(b))"))
    computed = []
    original = type(kernel)._raw_pairs

    def counting(A, index, spec, tables, threads, inv=None, progress=None):
        if inv is None:  # the raw values: self-kernels
            computed.append(len(index))
        return original(A, index, spec, tables, threads, inv, progress)

    monkeypatch.setattr(type(kernel), "_raw_pairs", staticmethod(counting))
    first = kernel.pairs([a, b], [(0, 1)])
    assert computed == [2]  # K(a,a) and K(b,b)
    computed.clear()
    assert kernel.pairs([a, b], [(0, 1)]) == first and computed == []  # the self-kernels were kept
    kernel.pairs([a, c], [(0, 1)])
    assert computed == [1]  # only K(c, c) is new
    computed.clear()
    kernel.set_params(lam=0.5).pairs([a, b], [(0, 1)])
    assert computed == [2]  # another configuration, other self-kernels


@pytest.mark.parametrize("call", ["gram", "gram_xy", "pairs"])
def test_structures_are_prepared_once_per_call(monkeypatch, qc_trees, call):
    kernel = PartialTreeKernel(terminal_factor=2)
    X, Y = [Tree.from_string(str(t)) for t in qc_trees[:20]], [Tree.from_string(str(t)) for t in qc_trees[20:30]]
    prepared = []
    original = type(kernel)._pack
    monkeypatch.setattr(
        type(kernel),
        "_pack",
        lambda self, Z, spec, tables: prepared.append(len(Z)) or original(self, Z, spec, tables),
    )
    if call == "gram":
        kernel.gram(X)
    elif call == "gram_xy":
        kernel.gram(X, Y)
    else:
        kernel.pairs(X, [(0, 1), (2, 3)])
    assert prepared == {"gram": [20], "gram_xy": [20, 10], "pairs": [20]}[call]


def test_scikit_learn_estimator_protocol():
    kernel = PartialTreeKernel(lam=0.3, mu=0.5, terminal_factor=2)
    expected = {"lam": 0.3, "mu": 0.5, "terminal_factor": 2, "label_weights": None, "max_work": 10**8}
    assert kernel.get_params() == expected
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


def test_prepared_structures_give_the_same_gram(qc_trees):
    kernel = PartialTreeKernel(terminal_factor=5)
    X, Y = qc_trees[:40], qc_trees[40:70]
    prepared = kernel.prepare(Y, index=False)
    np.testing.assert_array_equal(kernel.gram(X, prepared), kernel.gram(X, Y))
    np.testing.assert_array_equal(kernel.gram(prepared), kernel.gram(Y))
    # indexed (the default), rows are computed against all of Y at once: sums in another order
    indexed = kernel.prepare(Y)
    np.testing.assert_allclose(kernel.gram(X, indexed), kernel.gram(X, Y), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(kernel.gram(indexed), kernel.gram(Y))
    # a stale preparation is redone, not misused: with vectors SPTK packs trees by full label
    # and marks the smoothed nodes, so the old packing would give other values
    sptk = SmoothedPartialTreeKernel(terminal_factor=5)
    stale = sptk.prepare(Y)
    without_vectors = sptk.gram(X, Y)
    sptk.set_params(vectors=CORPORA / "trec-qc-kelp-sample" / "wordspace_md300.first60.txt.gz")
    with_vectors = sptk.gram(X, Y)
    assert np.abs(with_vectors - without_vectors).max() > 1e-3
    np.testing.assert_array_equal(sptk.gram(X, stale), with_vectors)
