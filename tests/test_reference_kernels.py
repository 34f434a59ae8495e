"""The compiled kernels equal the plain-Python references; the references equal brute force."""

import numpy as np
import pytest
import reference_kernels as ref
from oracles import ORACLES
from random_trees import random_pairs, random_tree
from sklearn.base import clone

from spacy_convkernels import Tree
from spacy_convkernels.kernels import PartialTreeKernel, SubsetTreeKernel, SubtreeKernel
from spacy_convkernels.kernels.kinds import KernelKind

CASES = [
    (SubtreeKernel(lam=0.4, variant="kelp"), ref.subtree_kelp, {"lam": 0.4}),
    (SubtreeKernel(lam=0.7, variant="textbook"), ref.subtree_textbook, {"lam": 0.7}),
    (SubsetTreeKernel(lam=0.4), ref.subset_tree, {"lam": 0.4}),
    (SubsetTreeKernel(lam=1.0), ref.subset_tree, {"lam": 1.0}),
    (
        PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=5),
        ref.partial_tree,
        {"lam": 0.4, "mu": 0.4, "terminal_factor": 5.0},
    ),
    (
        PartialTreeKernel(lam=0.9, mu=0.7, terminal_factor=1),
        ref.partial_tree,
        {"lam": 0.9, "mu": 0.7, "terminal_factor": 1.0},
    ),
]
# nonstationary weights: a label ignored, one damped, one boosted (B##x and A##x share a content)
WEIGHTS = {"A##y": 0.0, "B##x": 0.5, "w": 1.5}
CASES += [
    (
        SubtreeKernel(lam=0.4, variant="kelp", label_weights=WEIGHTS),
        ref.subtree_kelp,
        {"lam": 0.4, "label_weights": WEIGHTS},
    ),
    (
        SubtreeKernel(lam=0.7, variant="textbook", label_weights=WEIGHTS),
        ref.subtree_textbook,
        {"lam": 0.7, "label_weights": WEIGHTS},
    ),
    (SubsetTreeKernel(lam=0.4, label_weights=WEIGHTS), ref.subset_tree, {"lam": 0.4, "label_weights": WEIGHTS}),
    (
        PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=5, label_weights=WEIGHTS),
        ref.partial_tree,
        {"lam": 0.4, "mu": 0.4, "terminal_factor": 5.0, "label_weights": WEIGHTS},
    ),
]
IDS = [
    "st-kelp",
    "st-textbook",
    "sst",
    "sst-lam1",
    "ptk-tf5",
    "ptk",
    "st-kelp-weighted",
    "st-textbook-weighted",
    "sst-weighted",
    "ptk-weighted",
]

PAIRS = random_pairs(seed=20261125, n_pairs=520)


@pytest.mark.parametrize("kind", list(KernelKind), ids=lambda kind: kind.name)
def test_every_kind_of_the_table_equals_its_reference(kind):
    """Every kind of the engine's table, compiled, against its definition (``oracles.py``)."""
    assert kind in ORACLES, f"{kind.name} has no oracle in tests/oracles.py"
    kernel, reference, pairs = ORACLES[kind]
    assert kernel._configuration()[0].kind == kind
    expected = [reference(a, b) for a, b in pairs]
    assert np.count_nonzero(expected) > len(pairs) // 2
    X = [structure for pair in pairs for structure in pair]
    index = [(2 * k, 2 * k + 1) for k in range(len(pairs))]
    np.testing.assert_allclose(kernel.pairs(X, index, normalize=False), expected, rtol=1e-9, atol=1e-12)


def test_pairs_cover_the_awkward_shapes():
    trees = [t for pair in PAIRS for t in pair]
    assert sum(t.is_leaf for t in trees) >= 20
    assert sum(max(t.parents.count(i) for i in range(t.n_nodes)) >= 30 for t in trees) >= 50
    assert sum(_depth(t) >= 200 for t in trees) >= 50


def _depth(tree):
    depth = [1] * tree.n_nodes
    for i, p in enumerate(tree.parents[1:], start=1):
        depth[i] = depth[p] + 1
    return max(depth)


@pytest.mark.slow
@pytest.mark.parametrize("kernel, reference, params", CASES, ids=IDS)
def test_compiled_equals_reference(kernel, reference, params):
    X = [t for pair in PAIRS for t in pair]
    index = [(2 * k, 2 * k + 1) for k in range(len(PAIRS))]
    raw = kernel.pairs(X, index, normalize=False)
    norm = kernel.pairs(X, index)
    values = np.array(
        [[reference(a, b, **params), reference(a, a, **params), reference(b, b, **params)] for a, b in PAIRS]
    )
    expected_raw = values[:, 0]
    expected_norm = np.array([ref.normalize(*row) for row in values])
    assert np.count_nonzero(expected_raw) > 300  # the pairs really share fragments
    np.testing.assert_allclose(raw, expected_raw, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(norm, expected_norm, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kernel, reference, params", CASES, ids=IDS)
def test_gram_equals_reference(kernel, reference, params):
    rng = np.random.default_rng(7)
    X = [random_tree(rng, int(rng.integers(1, 25))) for _ in range(14)]
    Y = X[:5] + [random_tree(rng, int(rng.integers(1, 25))) for _ in range(6)]
    expected = np.array([[ref.normalized(reference, a, b, **params) for b in Y] for a in X])
    np.testing.assert_allclose(kernel.gram(X, Y), expected, rtol=1e-9, atol=1e-12)
    expected_sym = np.array([[ref.normalized(reference, a, b, **params) for b in X] for a in X])
    np.testing.assert_allclose(kernel.gram(X), expected_sym, rtol=1e-9, atol=1e-12)
    raw = np.array([[reference(a, b, **params) for b in X] for a in X])
    np.testing.assert_allclose(kernel.gram(X, normalize=False), raw, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(kernel.diag(X), np.diag(raw), rtol=1e-9)


@pytest.mark.parametrize("kernel", [SubtreeKernel(), SubsetTreeKernel(), PartialTreeKernel()], ids=["st", "sst", "ptk"])
def test_label_weights_change_the_kernel(kernel):
    X = [t for pair in PAIRS[:100] for t in pair]
    index = [(2 * k, 2 * k + 1) for k in range(100)]
    plain = kernel.pairs(X, index, normalize=False)
    weighted = clone(kernel).set_params(label_weights=WEIGHTS).pairs(X, index, normalize=False)
    assert np.abs(plain - weighted).max() > 1e-3
    assert np.array_equal(
        clone(kernel).set_params(label_weights={"unused": 0.0}).pairs(X, index, normalize=False), plain
    )


@pytest.mark.slow
def test_references_skip_only_node_pairs_that_add_nothing(monkeypatch):
    """The references sum over the node pairs with equal productions (ST, SST) or contents
    (PTK) only; over every node pair they give the same values."""
    small = [(a, b) for a, b in PAIRS[:120] if a.n_nodes + b.n_nodes < 120]
    assert len(small) >= 60 and any(a.n_nodes > 30 for a, _ in small)
    pairs = small + [(a, a) for a, _ in small]  # and the self-pairs, where every production matches
    matched = [[reference(x, y, **params) for x, y in pairs] for _, reference, params in CASES]
    convolution = ref.convolution
    monkeypatch.setattr(ref, "convolution", lambda delta, a, b, match=None: convolution(delta, a, b))
    for (_, reference, params), values in zip(CASES, matched):
        every_pair = [reference(x, y, **params) for x, y in pairs]
        assert values == pytest.approx(every_pair, rel=1e-12, abs=1e-300)
        assert sum(v > 0 for v in values) > len(small) // 2


def test_reference_subsequence_sum_equals_enumeration():
    rng = np.random.default_rng(3)
    for _ in range(60):
        a = Tree("r", [random_tree(rng, int(rng.integers(1, 4))) for _ in range(int(rng.integers(1, 7)))])
        b = Tree("r", [random_tree(rng, int(rng.integers(1, 4))) for _ in range(int(rng.integers(1, 7)))])
        for lam in (0.4, 1.0):
            by_length = ref.partial_tree(a, b, lam=lam, mu=0.5, terminal_factor=2)
            brute = ref.partial_tree(a, b, lam=lam, mu=0.5, terminal_factor=2, subsequences=ref.subsequence_sum_brute)
            assert by_length == pytest.approx(brute, rel=1e-12)


@pytest.mark.slow
def test_reference_textbook_subtree_equals_counting_identical_subtrees():
    for a, b in PAIRS[:150]:
        assert ref.subtree_textbook(a, b, lam=0.7) == pytest.approx(
            ref.subtree_textbook_brute(a, b, lam=0.7), rel=1e-12
        )


def test_kernels_differ_where_their_definitions_differ():
    # (A(B(C))(D)) vs (A(B(E))(D)): B has equal labels but different productions below A
    a = Tree.from_string("(A(B(C))(D))")
    b = Tree.from_string("(A(B(E))(D))")
    lam = 0.5
    # pairs with equal productions: A (A->B D), D (leaf); B differs (B->C vs B->E)
    assert SubtreeKernel(lam=lam, variant="kelp")(a, b, normalize=False) == pytest.approx(lam * 1 + lam)
    assert SubtreeKernel(lam=lam, variant="textbook")(a, b, normalize=False) == pytest.approx(lam)
    assert SubsetTreeKernel(lam=lam)(a, b, normalize=False) == pytest.approx(lam + lam)
