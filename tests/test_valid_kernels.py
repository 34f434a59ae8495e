"""Defaults give valid kernels; parameters that make nonsense are refused or warned;
prepared sets cannot be changed or used against another kernel's tables; thread counts
follow the limits in force."""

import os

import joblib
import numpy as np
import pytest
from data_paths import CORPORA, need_shared
from random_trees import random_tree
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from spacy_convkernels import Tree
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import KernelUnderflowWarning
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    InvalidParameterError,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    WordVectors,
    ZelenkoTreeKernel,
)
from spacy_convkernels.kernels.base import n_threads
from spacy_convkernels.structures.paths import PathTuples

TREE_KERNELS = [
    SubtreeKernel,
    SubsetTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    CompositionalSmoothedPartialTreeKernel,
]
RNG = np.random.default_rng(11)
RANDOM_TREES = [random_tree(RNG, int(RNG.integers(1, 25))) for _ in range(300)]
EDGES, NODES = ["", "arg0", "arg1", "op1"], ["bind", "protein", "and", "site"]
RANDOM_PATHS = [
    PathTuples([(EDGES[RNG.integers(4)], NODES[RNG.integers(4)]) for _ in range(int(RNG.integers(1, 8)))])
    for _ in range(300)
]
RANDOM_TUPLE_TREES = [
    random_tree(RNG, int(RNG.integers(1, 15)), labels=[f"{e}/{n}" for e in EDGES for n in NODES]) for _ in range(300)
]


def smallest_relative_eigenvalue(G: np.ndarray) -> float:
    eigenvalues = np.linalg.eigvalsh(G)
    return eigenvalues[0] / max(eigenvalues[-1], 1e-300)


def bundled_trec_trees() -> list:
    """The five representations of the 60 bundled questions: 300 trees."""
    questions = read_klp(CORPORA / "trec-qc-kelp-sample/TREC_10.coarse.first60.klp.gz")
    return [tree for q in questions for tree in q.trees.values()]


@pytest.mark.slow
@pytest.mark.parametrize("kernel_class", TREE_KERNELS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("trees", ["random", "bundled-trec"])
def test_default_tree_kernels_give_positive_semidefinite_grams(kernel_class, trees):
    X = RANDOM_TREES if trees == "random" else bundled_trec_trees()
    assert len(X) == 300
    assert smallest_relative_eigenvalue(kernel_class().gram(X)) >= -1e-9


@pytest.mark.parametrize("kernel_class", TREE_KERNELS, ids=lambda c: c.__name__)
@pytest.mark.shared
def test_default_tree_kernels_are_psd_on_300_trec_training_trees(kernel_class):
    path = need_shared("data/trec-qc-kelp/train_5500.coarse.klp.gz")
    questions = [q for _, q in zip(range(300), read_klp(path))]
    X = [q.trees["grct"] for q in questions]
    assert smallest_relative_eigenvalue(kernel_class().gram(X)) >= -1e-9


@pytest.mark.slow
@pytest.mark.parametrize(
    "kernel, X",
    [(SubsequencePathKernel(), RANDOM_PATHS), (ZelenkoTreeKernel(), RANDOM_TUPLE_TREES)],
    ids=["path", "zelenko"],
)
def test_default_tuple_kernels_give_positive_semidefinite_grams(kernel, X):
    assert smallest_relative_eigenvalue(kernel.gram(X)) >= -1e-9


def test_kelps_subtree_variant_is_not_a_kernel_and_not_the_default():
    a, b = Tree.from_string("(B (B (B y y)) y)"), Tree.from_string("(B (B (B y y) y))")
    assert SubtreeKernel().variant == "textbook"
    assert SubtreeKernel(variant="kelp")(a, b) == pytest.approx(1.136, abs=1e-3)
    assert SubtreeKernel()(a, b) <= 1.0
    assert smallest_relative_eigenvalue(SubtreeKernel(variant="kelp").gram(bundled_trec_trees())) < -1e-3


@pytest.mark.parametrize("kernel_class", [SmoothedPartialTreeKernel, CompositionalSmoothedPartialTreeKernel])
def test_a_threshold_above_one_is_refused(kernel_class):
    tree = Tree.from_string("(a (b))")
    with pytest.raises(InvalidParameterError, match=r"threshold must be a finite number in \[0, 1\], got 1.5"):
        kernel_class(threshold=1.5)(tree, tree)
    assert kernel_class(threshold=1.0)(tree, tree) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kernel",
    [PartialTreeKernel(lam=1e-200), SubsetTreeKernel(lam=1e-320), SubsequencePathKernel(lam=1e-200)],
    ids=["ptk", "sst", "path"],
)
def test_self_kernels_that_underflow_warn(kernel):
    X = RANDOM_PATHS[:5] if isinstance(kernel, SubsequencePathKernel) else RANDOM_TREES[:5]
    with pytest.warns(KernelUnderflowWarning, match="underflows"):
        kernel.gram(X)


def test_zero_self_kernels_from_zero_weights_do_not_warn(recwarn):
    PartialTreeKernel(terminal_factor=0).gram([Tree("a")])
    SubsetTreeKernel(label_weights={"a": 0.0}).gram([Tree("a")])
    assert not [w for w in recwarn if issubclass(w.category, KernelUnderflowWarning)]


def test_a_prepared_set_cannot_be_changed():
    kernel = PartialTreeKernel()
    prepared = kernel.prepare(RANDOM_TREES[:3])
    with pytest.raises(AttributeError):
        prepared.structures.append(RANDOM_TREES[3])
    with pytest.raises(AttributeError):
        prepared.structures = RANDOM_TREES[:4]
    with pytest.raises(AttributeError):
        prepared.packed = kernel.prepare(RANDOM_TREES[:4]).packed
    np.testing.assert_allclose(kernel.gram(prepared), kernel.gram(RANDOM_TREES[:3]))


def test_a_prepared_set_is_bound_to_the_tables_it_was_packed_against():
    rng = np.random.default_rng(2)
    vectors = WordVectors.from_arrays([f"w{k}" for k in range(30)], rng.normal(size=(30, 6)))
    trees = [Tree("SYNT##root", [Tree(f"LEX##w{rng.integers(30)}::n") for _ in range(4)]) for _ in range(20)]
    first, second = SmoothedPartialTreeKernel(vectors=vectors), SmoothedPartialTreeKernel(vectors=vectors)
    second.gram(trees[10:])  # the second kernel's table numbers the labels in another order
    prepared = first.prepare(trees[:10])
    expected = clone(first).gram([Tree.from_string(str(t)) for t in trees[:10]])
    np.testing.assert_allclose(second.gram(prepared), expected, rtol=1e-12)
    np.testing.assert_allclose(second.pairs(prepared, [(0, 1), (2, 3)]), expected[[0, 2], [1, 3]], rtol=1e-12)


def test_threads_follow_the_limits_in_force():
    with threadpool_limits(limits=1):
        assert n_threads(None) == 1
        assert n_threads(2) == min(2, os.cpu_count())  # an explicit count is honoured
    assert n_threads(None) == os.cpu_count() or "OMP_NUM_THREADS" in os.environ


def _threads_in_worker():
    return n_threads(None)


@pytest.mark.slow
def test_a_joblib_worker_computes_on_the_threads_joblib_gives_it():
    counts = joblib.Parallel(n_jobs=2, backend="loky")(joblib.delayed(_threads_in_worker)() for _ in range(2))
    assert counts == [max(os.cpu_count() // 2, 1)] * 2


def test_progress_bars_only_when_asked(capsys, tmp_path):
    kernel = PartialTreeKernel()
    quiet = kernel.gram(RANDOM_TREES[:50])
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(kernel.gram(RANDOM_TREES[:50], progress=True), quiet)
    assert "PartialTreeKernel Gram" in capsys.readouterr().err
    kernel.pairs(RANDOM_TREES[:50], [(0, 1), (2, 3)], progress=True)
    assert "PartialTreeKernel pairs" in capsys.readouterr().err
    questions = list(read_klp(CORPORA / "trec-qc-kelp-sample/TREC_10.coarse.first60.klp.gz", progress=True))
    assert len(questions) == 60 and "lines" in capsys.readouterr().err


def test_numpy_integer_parameters_work_as_floats():
    rng = np.random.default_rng(4)
    vectors = WordVectors.from_arrays([f"w{k}" for k in range(6)], rng.normal(size=(3, 4))[[0, 0, 1, 1, 2, 2]])
    trees = [Tree("SYNT##root", [Tree(f"LEX##w{k}::n"), Tree(f"LEX##w{(k + 1) % 6}::n")]) for k in range(6)]
    as_float = SmoothedPartialTreeKernel(vectors=vectors, shared_rows="diluted", dilution=1.0, mu=1.0).gram(trees)
    as_numpy = SmoothedPartialTreeKernel(
        vectors=vectors, shared_rows="diluted", dilution=np.int64(1), mu=np.int64(1)
    ).gram([Tree.from_string(str(t)) for t in trees])
    np.testing.assert_allclose(as_numpy, as_float, rtol=1e-12)
