"""The one-against-many engine: ``kernel.gram(X, kernel.prepare(F))``, each row of X against
the indexed fixed set F at once, equals the plain engine, ``kernel.gram(X,
kernel.prepare(F, index=False))``, to 1e-12 (relative for unnormalized values) for every
kernel kind, on random structures: wide, deep, repeated labels, single nodes, structures
repeated in the fixed set and shared with the queries; and equals the plain-Python
references on a few cases."""

import pickle
import re
import threading

import numpy as np
import pytest
import reference_kernels as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from interrupts import assert_interruptible
from oracles import ORACLES
from path_data import EDGES, NODES, exponential, path_pairs, rooted_pairs
from path_data import LABELS as TUPLE_LABELS
from path_data import VECTORS as NODE_VECTORS
from path_data import WEIGHTS as EDGE_WEIGHTS
from random_trees import ALPHABET, chain, random_tree, small_tree, wide_tree
from smoothed_data import CASES as SMOOTHED_CASES
from smoothed_data import LABELS as SMOOTHED_LABELS
from smoothed_data import PAIRS as SMOOTHED_PAIRS
from smoothed_data import VECTORS

from spacy_convkernels import Tree
from spacy_convkernels.approx import KLSH, Nystroem
from spacy_convkernels.errors import InvalidParameterError, KernelOverflowError
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    ForestKernel,
    KernelTransformer,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    ZelenkoTreeKernel,
    _driver,
    base,
)
from spacy_convkernels.kernels._index import FixedSet
from spacy_convkernels.kernels._tables import SimilarityKind
from spacy_convkernels.kernels.base import Kernel, _engine_settings
from spacy_convkernels.kernels.kinds import KernelKind
from spacy_convkernels.kernels.node_similarity import (
    CompositionalSimilarity,
    LexicalSimilarity,
    SimilarityTable,
)
from spacy_convkernels.learn import KernelSVC
from spacy_convkernels.learn.knn import NeighborSearch
from spacy_convkernels.structures.forest import Forest
from spacy_convkernels.structures.interning import LABELS
from spacy_convkernels.structures.paths import PathTuples, feature_label, tuple_label

WEIGHTS = {"A##y": 0.0, "B##x": 0.5, "w": 1.5}  # a label ignored, one damped, one boosted
SMOOTHED_WEIGHTS = {"LEX##dog::n": 0.0, "POS##NN": 0.5, "COMP##root<*::*,run::v>": 2.0, "SYNT##nsubj": 0.0}
FEATURES = [feature_label(f) for f in (["pos=NN", "lemma=ras"], ["pos=NN"], ["lemma=ras", "edge=nsubj>"])]
ZELENKO_LABELS = TUPLE_LABELS + [tuple_label(edge, node) for edge in EDGES[1:3] for node in FEATURES]


def exact_tree_kernels():
    for weights in (None, WEIGHTS):
        yield SubtreeKernel(0.4, variant="kelp", label_weights=weights)
        yield SubtreeKernel(0.7, variant="textbook", label_weights=weights)
        yield SubsetTreeKernel(0.4, label_weights=weights)
        yield PartialTreeKernel(0.4, mu=0.4, terminal_factor=5, label_weights=weights)
    yield SubsetTreeKernel(1.0)
    yield PartialTreeKernel(0.9, mu=0.7, terminal_factor=0)  # single leaves have K(x, x) = 0
    yield SmoothedPartialTreeKernel(0.6, mu=0.5, terminal_factor=2.0)  # no vectors: labels match by content


def smoothed_kernels():
    for shared_rows in ("kelp", "diluted", "exclusive"):
        yield SmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2, vectors=VECTORS, shared_rows=shared_rows)
        yield CompositionalSmoothedPartialTreeKernel(0.4, mu=0.4, vectors=VECTORS, shared_rows=shared_rows)
        yield CompositionalSmoothedPartialTreeKernel(
            0.6, mu=0.3, terminal_factor=1.5, threshold=0.3, vectors=VECTORS, lexical=True, shared_rows=shared_rows,
            label_weights=SMOOTHED_WEIGHTS, alpha=0.7, beta=1.3, syntactic_restriction=shared_rows == "diluted",
        )  # fmt: skip
    yield SmoothedPartialTreeKernel(0.5, mu=0.6, threshold=0.0, vectors=VECTORS, label_weights=SMOOTHED_WEIGHTS)


def tuple_tree_kernels():
    yield ZelenkoTreeKernel(lam=0.5)
    yield ZelenkoTreeKernel(lam=0.8, vectors=NODE_VECTORS, gamma=0.2, edge_weights=EDGE_WEIGHTS)


def path_kernels():
    yield SubsequencePathKernel(lam=0.5)
    yield SubsequencePathKernel(lam=0.8, vectors=NODE_VECTORS, gamma=0.2, edge_weights=EDGE_WEIGHTS)


def kernel_id(kernel) -> str:
    """The kernel's repr on one line, without the addresses of the objects it holds: the
    same in every process (pytest-xdist's workers must collect the same test ids)."""
    return " ".join(re.sub(r" object at 0x[0-9a-f]+", "", repr(kernel)).split())


def random_trees(rng, labels, count: int) -> list:
    """``count`` trees of the awkward shapes: ordinary, repeated labels (two of them),
    wide (30+ children), deep (50+ levels), single nodes."""

    def one():
        shape = rng.choice(5, p=[0.45, 0.2, 0.1, 0.1, 0.15])
        if shape == 0:
            return random_tree(rng, int(rng.integers(1, 30)), labels)
        if shape == 1:
            return random_tree(rng, int(rng.integers(5, 40)), labels=labels[:2], max_children=3)
        if shape == 2:
            return wide_tree(rng, int(rng.integers(30, 36)), labels)
        if shape == 3:
            return chain(rng, int(rng.integers(50, 120)), labels)
        return Tree(labels[int(rng.integers(len(labels)))])

    return [one() for _ in range(count)]


def rerooted(trees: list) -> list:
    """Zelenko's structures: most roots the same trigger, as candidate subgraphs have."""
    return [Tree.from_flat(("/bind",) + t.labels[1:], t.parents) if k % 4 else t for k, t in enumerate(trees)]


def random_paths(rng, count: int) -> list:
    nodes = NODES + FEATURES

    def one():
        return PathTuples(
            [(EDGES[rng.integers(len(EDGES))], nodes[rng.integers(len(nodes))]) for _ in range(rng.integers(1, 16))]
        )

    return [one() for _ in range(count)]


def random_forests(rng, count: int) -> list:
    forests = []
    for _ in range(count):
        n_leaves = int(rng.integers(1, 6))
        trees = [(small_tree(rng, n_leaves), float(rng.uniform(0.1, 1))) for _ in range(int(rng.integers(1, 4)))]
        forests.append(Forest.from_trees(trees))
    return forests


FAMILIES = {
    "exact": (exact_tree_kernels, lambda rng, n: random_trees(rng, ALPHABET, n)),
    "smoothed": (smoothed_kernels, lambda rng, n: random_trees(rng, SMOOTHED_LABELS, n)),
    "zelenko": (tuple_tree_kernels, lambda rng, n: rerooted(random_trees(rng, ZELENKO_LABELS, n))),
    "path": (path_kernels, random_paths),
    "forest": (lambda: [ForestKernel(lam=0.4), ForestKernel(lam=0.7, terminal_factor=0.0)], random_forests),
}
CASES = [(family, kernel) for family, (kernels, _) in FAMILIES.items() for kernel in kernels()]


@st.composite
def fixed_and_queries(draw, family):
    """(fixed set, queries): the fixed set with some structures twice, the queries with
    some structures of the fixed set; either may be empty."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    make = FAMILIES[family][1]
    fixed = make(rng, draw(st.integers(0, 7)))
    if fixed:
        fixed += [fixed[i] for i in rng.integers(0, len(fixed), size=draw(st.integers(0, 3)))]
    queries = make(rng, draw(st.integers(0, 5)))
    if fixed:
        queries += [fixed[i] for i in rng.integers(0, len(fixed), size=draw(st.integers(0, 2)))]
    return fixed, queries


def assert_same_values(kernel, queries, fixed, n_jobs: int) -> np.ndarray:
    """The indexed and the plain engine agree, normalized (1e-12) and not (1e-12 relative);
    returns the unnormalized block."""
    indexed, plain = kernel.prepare(fixed), kernel.prepare(fixed, index=False)
    assert indexed.index is not None and plain.index is None
    for normalize in (True, False):
        got = kernel.gram(queries, indexed, normalize=normalize, n_jobs=n_jobs)
        expected = kernel.gram(queries, plain, normalize=normalize, n_jobs=n_jobs)
        assert got.shape == expected.shape == (len(queries), len(fixed))
        if normalize:
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    return expected


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::spacy_convkernels.errors.KernelUnderflowWarning")
@pytest.mark.parametrize("family, kernel", CASES, ids=[f"{f}-{kernel_id(k)}" for f, k in CASES])
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_indexed_equals_plain(family, kernel, data):
    fixed, queries = data.draw(fixed_and_queries(family))
    assert_same_values(kernel, queries, fixed, n_jobs=data.draw(st.sampled_from([1, 2])))


@pytest.mark.filterwarnings("ignore::spacy_convkernels.errors.KernelUnderflowWarning")
@pytest.mark.parametrize("family, kernel", CASES, ids=[f"{f}-{kernel_id(k)}" for f, k in CASES])
def test_the_comparisons_are_not_trivial(family, kernel):
    """On larger sets, most values are non-zero: the agreement above means something."""
    rng = np.random.default_rng(5)
    make = FAMILIES[family][1]
    fixed = make(rng, 25)
    values = assert_same_values(kernel, make(rng, 12) + fixed[:3], fixed + fixed[:4], n_jobs=2)
    assert np.count_nonzero(values) > values.size // 3


@pytest.mark.parametrize("kind", list(KernelKind), ids=lambda kind: kind.name)
def test_every_kind_indexed_equals_its_reference(kind):
    """Every kind of the table, against an index of its oracle's structures (``oracles.py``)."""
    kernel, reference, pairs = ORACLES[kind]
    queries, fixed = [a for a, _ in pairs[:8]], [b for _, b in pairs[:8]] + [pairs[0][0]]
    expected = np.array([[reference(a, b) for b in fixed] for a in queries])
    np.testing.assert_allclose(kernel.gram(queries, kernel.prepare(fixed), normalize=False), expected, rtol=1e-9)
    assert np.count_nonzero(expected) > expected.size // 3


def test_indexed_equals_the_tree_references():
    rng = np.random.default_rng(11)
    fixed = [random_tree(rng, int(rng.integers(1, 25))) for _ in range(9)]
    fixed += fixed[:2]
    queries = [random_tree(rng, int(rng.integers(1, 25))) for _ in range(6)] + fixed[3:5]
    for kernel, reference, params in [
        (SubtreeKernel(0.4, variant="kelp", label_weights=WEIGHTS), ref.subtree_kelp, {"lam": 0.4}),
        (SubtreeKernel(0.7), ref.subtree_textbook, {"lam": 0.7}),
        (SubsetTreeKernel(0.4, label_weights=WEIGHTS), ref.subset_tree, {"lam": 0.4}),
        (PartialTreeKernel(0.4, mu=0.4, terminal_factor=5), ref.partial_tree, {"mu": 0.4, "terminal_factor": 5.0}),
    ]:
        if kernel.get_params().get("label_weights"):
            params = {**params, "label_weights": WEIGHTS}
        expected = np.array([[reference(a, b, **params) for b in fixed] for a in queries])
        got = kernel.gram(queries, kernel.prepare(fixed), normalize=False)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
        assert np.count_nonzero(expected) > expected.size // 2


@pytest.mark.parametrize("case", [0, 3, 4], ids=["sptk", "csptk", "csptk-options"])
def test_indexed_equals_the_smoothed_references(case):
    kernel, sigma = SMOOTHED_CASES[case]
    params = dict(lam=kernel.lam, mu=kernel.mu, terminal_factor=kernel.terminal_factor, threshold=kernel.threshold)
    trees = [t for pair in SMOOTHED_PAIRS[:12] for t in pair if t.n_nodes < 60]
    fixed, queries = trees[:10] + trees[:2], trees[10:]
    expected = np.array([[ref.smoothed_partial_tree(a, b, sigma, **params) for b in fixed] for a in queries])
    np.testing.assert_allclose(kernel.gram(queries, kernel.prepare(fixed), normalize=False), expected, rtol=1e-9)
    assert np.count_nonzero(expected) > expected.size // 2


@pytest.mark.slow
def test_indexed_equals_the_tuple_references():
    k = ref.tuple_kernel(exponential(0.2), EDGE_WEIGHTS)
    params = dict(lam=0.8, vectors=NODE_VECTORS, gamma=0.2, edge_weights=EDGE_WEIGHTS)
    trees = [t for pair in rooted_pairs(8, 12) for t in pair]
    fixed, queries = trees[:14] + trees[:2], trees[14:]
    expected = np.array([[ref.zelenko(a, b, k, 0.8) for b in fixed] for a in queries])
    got = ZelenkoTreeKernel(**params).gram(queries, ZelenkoTreeKernel(**params).prepare(fixed), normalize=False)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    paths = [p for pair in path_pairs(1, 12, long=True) for p in pair]
    fixed, queries = paths[:14] + paths[:1], paths[14:]
    kernel = SubsequencePathKernel(**params)
    expected = np.array([[ref.subsequence_path(a.labels, b.labels, k, 0.8) for b in fixed] for a in queries])
    np.testing.assert_allclose(kernel.gram(queries, kernel.prepare(fixed), normalize=False), expected, rtol=1e-9)
    assert np.count_nonzero(expected) > expected.size // 2


def test_indexed_equals_the_forest_reference():
    forests = random_forests(np.random.default_rng(3), 14)
    kernel = ForestKernel(lam=0.4)
    expected = np.array([[ref.forest_kernel(a, b, 0.4) for b in forests[:9]] for a in forests[9:]])
    np.testing.assert_allclose(
        kernel.gram(forests[9:], kernel.prepare(forests[:9]), normalize=False), expected, rtol=1e-9
    )


@pytest.mark.parametrize("family, kernel", [CASES[3], CASES[15], CASES[-5], CASES[-3], CASES[-1]])
def test_empty_and_single_sets(family, kernel):
    structures = FAMILIES[family][1](np.random.default_rng(1), 4)
    assert kernel.gram(structures, kernel.prepare([])).shape == (4, 0)
    assert kernel.gram([], kernel.prepare(structures)).shape == (0, 4)
    assert_same_values(kernel, structures, structures[:1], n_jobs=2)
    assert_same_values(kernel, structures[:1], structures, n_jobs=1)


def test_labels_the_fixed_set_never_saw():
    fixed = [Tree.from_string("(A##x (B##z w) (C##y))"), Tree("w")]
    queries = [Tree.from_string("(Q##q (R##r s))"), Tree.from_string("(Q##q (B##z w))")]
    kernel = PartialTreeKernel(terminal_factor=2)
    values = assert_same_values(kernel, queries, fixed, n_jobs=1)
    assert (values[0] == 0).all() and (values[1] > 0).all()
    # smoothed: words and compositions described only when the queries come
    kernel = CompositionalSmoothedPartialTreeKernel(vectors=VECTORS, lexical=True)
    fixed = [Tree.from_string("(COMP##nsubj<run::v,dog::n> (LEX##dog::n) (POS##NN))")]
    queries = [Tree.from_string("(COMP##nsubj<walk::v,cat::n> (LEX##cat::n) (POS##NN))")]
    values = assert_same_values(kernel, queries, fixed, n_jobs=2)
    assert values[0, 0] > 0


def table_entries(published, ids):
    """What a published NodeSimilarity says of label ids ``ids`` (vectors: of those with a row)."""
    rows = np.asarray(published.rows)[ids]
    with_row = rows[rows >= 0]
    features = None if published.features is None else np.asarray(published.features)[ids]
    if published.own_words is None:  # no private coordinates yet: as rows of -1 (no word) and 0
        own = (np.full((len(with_row), 2), -1), np.zeros((len(with_row), 2)))
    else:
        own = (published.own_words[with_row], published.own_parts[with_row])
    return (
        np.asarray(published.kinds)[ids],
        np.asarray(published.groups)[ids],
        rows,
        np.asarray(published.weights)[ids],
        np.asarray(published.label_weights)[ids],
        np.asarray(published.vectors)[with_row],
        own,
        features,
    )


@settings(max_examples=30, deadline=None)
@given(
    batches=st.lists(st.lists(st.sampled_from(SMOOTHED_LABELS + ["LEX##new::n", "COMP##x<a::n,b::n>"]), max_size=8),
                     min_size=2, max_size=5),
    shared_rows=st.sampled_from(["kelp", "diluted", "exclusive"]),
)  # fmt: skip
def test_published_entries_never_change(batches, shared_rows):
    """Each publication of a growing table says of the labels covered before exactly what
    the earlier publications said: an index built against one stays valid for the next."""
    rules = [CompositionalSimilarity(VECTORS, shared_rows=shared_rows), LexicalSimilarity(VECTORS, shared_rows)]
    table = SimilarityTable(rules, label_weights=SMOOTHED_WEIGHTS)
    seen, earlier, leases = [], [], []
    for batch in batches:
        leases.append(LABELS.lease(batch))  # held to the end: the ids stay these labels'
        ids = leases[-1].ids.tolist()
        published = table.cover(ids, batch)
        for old_ids, old_published in earlier:
            for before, now in zip(table_entries(old_published, old_ids), table_entries(published, old_ids)):
                if isinstance(before, tuple):
                    for b, n in zip(before, now):
                        np.testing.assert_array_equal(b, n)
                elif before is not None and before.ndim == 2 and now.shape[1] > before.shape[1]:  # widened features
                    np.testing.assert_array_equal(now[:, : before.shape[1]], before)
                    assert (now[:, before.shape[1] :] == -1).all()
                else:
                    np.testing.assert_array_equal(before, now)
        seen += ids
        earlier.append((np.array(seen, dtype=np.int64), published))


def test_queries_packed_against_a_later_publication():
    kernel = SmoothedPartialTreeKernel(vectors=VECTORS, shared_rows="diluted")
    rng = np.random.default_rng(12)
    older = [label for label in SMOOTHED_LABELS if "cat" not in label and "walk" not in label]
    fixed = [Tree.from_string("(LEX##run::v (LEX##dog::n (POS##NN)) (SYNT##root))")] + random_trees(rng, older, 8)
    prepared = kernel.prepare(fixed)
    published = kernel._configuration()[1].current
    # LEX##cat::n is described for the queries only; read its entry now, as a publication's
    # entries of labels it does not cover may fill in later
    lease = LABELS.lease(["LEX##cat::n"])  # held to the end: the id stays this label's
    cat = int(lease.ids[0])
    before = int(published.kinds[cat]) if cat < len(published.kinds) else None
    queries = [Tree.from_string("(LEX##walk::v (LEX##cat::n (POS##NN)) (SYNT##root))")]
    queries += random_trees(rng, SMOOTHED_LABELS, 8)
    got = kernel.gram(queries, prepared, normalize=False)
    later = kernel._configuration()[1].current
    assert later is not published and later.kinds[cat] == SimilarityKind.LEXICAL
    assert before in (None, SimilarityKind.EXACT)
    expected = kernel.gram(queries, kernel.prepare(fixed, index=False), normalize=False)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert got[0, 0] > PartialTreeKernel(0.4, mu=0.4)(queries[0], fixed[0], normalize=False)  # smoothed: walk ~ run


@pytest.mark.parametrize("family, kernel", [CASES[3], CASES[15], CASES[-5], CASES[-3], CASES[-1]])
def test_thread_counts_give_the_same_bits(family, kernel):
    rng = np.random.default_rng(2)
    make = FAMILIES[family][1]
    fixed, queries = make(rng, 20), make(rng, 30)
    prepared = kernel.prepare(fixed)
    one = kernel.gram(queries, prepared, n_jobs=1)
    np.testing.assert_array_equal(kernel.gram(queries, prepared, n_jobs=2), one)
    np.testing.assert_array_equal(np.vstack([kernel.gram(queries[k : k + 7], prepared) for k in (0, 7, 14, 21, 28)]),
                                  one)  # fmt: skip


def test_a_symmetric_gram_of_an_indexed_set_is_the_plain_one():
    kernel = PartialTreeKernel()
    trees = random_trees(np.random.default_rng(4), ALPHABET, 12)
    np.testing.assert_array_equal(kernel.gram(kernel.prepare(trees)), kernel.gram(trees))


TREE_CASES = [(family, kernel) for family, kernel in CASES if family != "path"]


@pytest.mark.filterwarnings("ignore::spacy_convkernels.errors.KernelUnderflowWarning")
@pytest.mark.parametrize("family, kernel", TREE_CASES, ids=[f"{f}-{kernel_id(k)}" for f, k in TREE_CASES])
def test_a_tree_gram_is_indexed_and_equals_the_plain_one(family, kernel, monkeypatch):
    """The Gram of a large enough set of trees (or forests) is computed against an index
    made on the fly, whole rows, the upper triangle mirrored: the plain engine's values to
    1e-12, exactly symmetric, a normalized diagonal of 1; a smaller set pair by pair."""
    calls = []
    against = _driver.gram_against
    monkeypatch.setattr(_driver, "gram_against", lambda *a, **k: calls.append(k["symmetric"]) or against(*a, **k))
    monkeypatch.setattr(base, "INDEXED_GRAM_MIN", 20)  # below it, pair by pair (the index's fixed cost)
    kernel.gram(FAMILIES[family][1](np.random.default_rng(8), 19))
    assert not calls
    structures = FAMILIES[family][1](np.random.default_rng(7), 30)
    structures += structures[:3]  # repeated structures
    for normalize in (True, False):
        for n_jobs in (1, 2):
            plain = kernel.gram(structures, kernel.prepare(structures, index=False), normalize=normalize, n_jobs=n_jobs)
            symmetric = kernel.gram(structures, normalize=normalize, n_jobs=n_jobs)
            scale = 1.0 if normalize else np.abs(plain).max()
            np.testing.assert_allclose(symmetric, plain, rtol=0, atol=1e-12 * scale)
            assert (symmetric == symmetric.T).all() and np.count_nonzero(plain) > len(structures)
        if normalize:
            assert (np.diag(symmetric)[np.diag(plain) > 0] == 1.0).all()
    assert calls == [True] * 4


@pytest.mark.parametrize("kernel", list(path_kernels()), ids=kernel_id)
def test_a_path_gram_is_indexed_and_equals_the_plain_one(kernel, monkeypatch):
    """Paths (plain tuples and feature positions) are always computed against an index made
    on the fly, a symmetric Gram from the diagonal on: the values of the plain engine."""
    calls = []
    against = _driver.gram_against
    monkeypatch.setattr(_driver, "gram_against", lambda *a, **k: calls.append(k["symmetric"]) or against(*a, **k))
    paths = random_paths(np.random.default_rng(5), 40)
    other = random_paths(np.random.default_rng(6), 9)
    for normalize in (True, False):
        for n_jobs in (1, 2):
            plain = kernel.gram(paths, kernel.prepare(paths, index=False), normalize=normalize, n_jobs=n_jobs)
            symmetric = kernel.gram(paths, normalize=normalize, n_jobs=n_jobs)
            np.testing.assert_allclose(symmetric, plain, rtol=1e-12, atol=1e-12)
            assert (symmetric == symmetric.T).all() and np.count_nonzero(plain) > len(paths)
            rows = kernel.gram(other, paths, normalize=normalize, n_jobs=n_jobs)
            expected = kernel.gram(other, kernel.prepare(paths, index=False), normalize=normalize, n_jobs=n_jobs)
            np.testing.assert_allclose(rows, expected, rtol=1e-12, atol=1e-12)
        if normalize:
            assert (np.diag(symmetric)[np.diag(plain) > 0] == 1.0).all()
    assert calls.count(True) == 4 and calls.count(False) == 4


def paths_sharing_prefixes(rng, count: int) -> list:
    """Paths grown from a few stems, as a batch of candidate paths from the same triggers
    is: each a stem's prefix (of any length, the whole stem too), then a random tail."""
    stems = [p.tuples for p in random_paths(rng, 4)]
    tails = [p.tuples for p in random_paths(rng, count)]
    paths = []
    for k in range(count):
        stem = stems[rng.integers(len(stems))]
        tail = tails[k][: rng.integers(0, 4)]
        paths.append(PathTuples(stem[: rng.integers(0, len(stem) + 1)] + tail or stem))
    return paths


@pytest.mark.parametrize("kernel", list(path_kernels()), ids=kernel_id)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_jobs=st.sampled_from([1, 2]))
def test_paths_sharing_prefixes_get_the_bits_of_paths_alone(kernel, seed, n_jobs):
    """Against a fixed set, a path starts at the rows it shares with the path before it in
    sorted order (``_one_against_many.path_row``; in a symmetric Gram, in their own order):
    the same bits as each path alone, which shares nothing, and the plain engine's values."""
    rng = np.random.default_rng(seed)
    queries, fixed = paths_sharing_prefixes(rng, 24), paths_sharing_prefixes(rng, 9) + random_paths(rng, 3)
    indexed = kernel.prepare(fixed)
    for normalize in (True, False):
        together = kernel.gram(queries, indexed, normalize=normalize, n_jobs=n_jobs)
        alone = np.vstack([kernel.gram([q], indexed, normalize=normalize, n_jobs=1) for q in queries])
        assert (together == alone).all()
        plain = kernel.gram(queries, kernel.prepare(fixed, index=False), normalize=normalize, n_jobs=n_jobs)
        np.testing.assert_allclose(together, plain, rtol=1e-12, atol=1e-12)
        # a symmetric Gram shares prefixes in the paths' own order, each row from its diagonal on
        symmetric = kernel.gram(queries, normalize=normalize, n_jobs=n_jobs)
        rows = np.vstack([kernel.gram([q], kernel.prepare(queries), normalize=normalize, n_jobs=1) for q in queries])
        above = np.triu_indices(len(queries), k=1 if normalize else 0)
        assert (symmetric[above] == rows[above]).all() and (symmetric == symmetric.T).all()


def test_paths_sharing_prefixes_equal_the_tuple_reference():
    """Paths of a few stems against a fixed set, computed sharing their prefixes (plain
    tuples with vectors and edge weights): the plain-Python reference's values."""
    k = ref.tuple_kernel(exponential(0.2), EDGE_WEIGHTS)
    kernel = SubsequencePathKernel(lam=0.8, vectors=NODE_VECTORS, gamma=0.2, edge_weights=EDGE_WEIGHTS)
    stems = [p.tuples for pair in path_pairs(3, 3) for p in pair]
    queries = [PathTuples(stem[:cut] + tail[:2] or stem) for stem in stems for cut in (1, 3, 6) for tail in stems[:2]]
    fixed = [p for pair in path_pairs(4, 5) for p in pair]
    expected = np.array([[ref.subsequence_path(a.labels, b.labels, k, 0.8) for b in fixed] for a in queries])
    for n_jobs in (1, 2):
        got = kernel.gram(queries, kernel.prepare(fixed), normalize=False, n_jobs=n_jobs)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    assert np.count_nonzero(expected) > expected.size // 2


def test_paths_are_sorted_with_the_positions_each_shares():
    """The order in which a Gram block against a fixed set computes paths, and the leading
    positions each shares with the one before it."""
    paths = [PathTuples(t) for t in ([("a", "x"), ("b", "y")], [("a", "x")], [("c", "z")], [("a", "x"), ("b", "w")])]
    packed = SubsequencePathKernel().prepare(paths).packed
    order, shared = _driver.sorted_paths(packed)
    labels = [tuple(packed.label[packed.node_offset[r] : packed.node_offset[r + 1]]) for r in order]
    assert labels == sorted(labels) and sorted(order) == [0, 1, 2, 3]
    expected = [0] + [
        next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        for a, b in zip(labels, labels[1:])
    ]
    assert shared.tolist() == expected and sum(expected) == 2


def test_an_index_follows_its_kernel_configuration():
    """A set indexed under other parameters is packed again (and computed by the plain
    engine), never read with the new parameters."""
    kernel = PartialTreeKernel(lam=0.4)
    trees = random_trees(np.random.default_rng(6), ALPHABET, 10)
    prepared = kernel.prepare(trees[:6])
    kernel.set_params(lam=0.7)
    np.testing.assert_allclose(kernel.gram(trees[6:], prepared), PartialTreeKernel(lam=0.7).gram(trees[6:], trees[:6]))


def test_the_engine_refuses_an_index_of_another_kernel_or_table():
    trees = random_trees(np.random.default_rng(7), SMOOTHED_LABELS, 6)
    sptk = SmoothedPartialTreeKernel(vectors=VECTORS)
    index = sptk.prepare(trees).index
    spec, tables = sptk._configuration()
    queries = sptk.prepare(trees[:2], index=False).packed
    assert _driver.gram_against(_engine_settings(spec, tables), queries, index).shape == (2, 6)
    other = SmoothedPartialTreeKernel(vectors=VECTORS, shared_rows="exclusive")
    other.gram(trees[::-1])  # its own table, its own order of labels
    other_spec, other_tables = other._configuration()
    with pytest.raises(InvalidParameterError, match="tables differ|packed against other|covers label"):
        _driver.gram_against(_engine_settings(other_spec, other_tables), other.prepare(trees[:2]).packed, index)
    with pytest.raises(InvalidParameterError, match="tables differ|packed against other|covers label"):
        index.block_similarities(_engine_settings(other_spec, other_tables), other.prepare(trees[:2]).packed, 0, 2)
    with pytest.raises(InvalidParameterError, match="not trees of A"):
        index.block_similarities(_engine_settings(spec, tables), queries, 1, 3)
    ptk = PartialTreeKernel()
    ptk_trees = random_trees(np.random.default_rng(8), ALPHABET, 3)
    ptk_spec, _ = ptk._configuration()
    packed = ptk.prepare(ptk_trees, index=False).packed
    with pytest.raises(InvalidParameterError):
        _driver.gram_against(_engine_settings(ptk_spec, None), packed, index)
    with pytest.raises(InvalidParameterError, match="initialized twice"):
        index.__init__(_engine_settings(spec, tables), sptk.prepare(trees, index=False).packed)


def test_overflow_is_an_error_not_a_wrong_value():
    huge = Tree.from_string("(r" + " (a)" * 600 + ")")
    kernel = PartialTreeKernel(lam=1, mu=1)
    with pytest.raises(KernelOverflowError, match="overflowed"):
        kernel.gram([huge], kernel.prepare([huge, Tree("a")]), normalize=False)


def test_an_indexed_set_is_not_picklable():
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(PartialTreeKernel().prepare([Tree("a")]))


def test_the_estimators_use_the_index_and_prepare_once(monkeypatch):
    """Nystroem, KLSH, KernelSVC, KernelTransformer and the exact k-NN search compute their
    rows through the one-against-many engine, without preparing their fixed set again."""
    rng = np.random.default_rng(9)
    trees = random_trees(rng, ALPHABET, 60)
    y = np.arange(60) % 3
    kernel = PartialTreeKernel()
    estimators = [
        (Nystroem(kernel, n_components=20, random_state=0).fit(trees), "transform"),
        (KLSH(kernel, n_references=15, n_bits=16, random_state=0).fit(trees), "transform"),
        (KernelSVC(kernel).fit(trees, y), "decision_function"),
        (KernelTransformer(kernel).fit(trees[:30]), "transform"),
    ]
    search = NeighborSearch(kernel, trees[:40])
    search.kneighbors(trees[40:42], 3)  # the first exact search indexes the structures
    calls, prepared = [], []
    gram_against = _driver.gram_against
    monkeypatch.setattr(_driver, "gram_against", lambda *a, **k: calls.append(1) or gram_against(*a, **k))
    prepare = Kernel.prepare
    monkeypatch.setattr(Kernel, "prepare", lambda self, *a, **k: prepared.append(1) or prepare(self, *a, **k))
    for estimator, method in estimators:
        before = len(calls)
        getattr(estimator, method)(trees[:10])
        getattr(estimator, method)(trees[10:20])
        assert len(calls) == before + 2, type(estimator).__name__
    search.kneighbors(trees[40:], 3)
    assert len(calls) == 9 and not prepared
    for estimator, method in estimators:  # unpickled, the fixed set is indexed again
        again = pickle.loads(pickle.dumps(estimator))
        np.testing.assert_array_equal(getattr(again, method)(trees[:10]), getattr(estimator, method)(trees[:10]))
    assert pickle.loads(pickle.dumps(search)).kneighbors(trees[40:42], 3)[1].tolist() == (
        search.kneighbors(trees[40:42], 3)[1].tolist()
    )


INTERRUPT_SCRIPT = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[2])
from random_trees import random_tree
from spacy_convkernels.kernels import PartialTreeKernel

rng = np.random.default_rng(5)
fixed = [random_tree(rng, 60) for _ in range(2000)]
base = [random_tree(rng, 60) for _ in range(50)]
kernel = PartialTreeKernel()
prepared = kernel.prepare(fixed)
expected = kernel.gram(base[:3], prepared, n_jobs=1)
X = base * 100  # 5,000 rows of about 10 ms each: far more than a second of work
print("started", flush=True)
try:
    kernel.gram(X, prepared, normalize=False, n_jobs=int(sys.argv[1]))
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
assert np.array_equal(kernel.gram(base[:3], prepared, n_jobs=1), expected)
assert np.array_equal(kernel.gram(base[:3], prepared, n_jobs=2), expected)
print("usable", flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("threads", ["1", "2"])
def test_ctrl_c_stops_a_long_call(threads):
    """SIGINT a second into a long call against an indexed set: KeyboardInterrupt within
    3 s, and the index still gives the values it gave before."""
    assert_interruptible(INTERRUPT_SCRIPT, threads)


def test_fixed_set_index_is_built_for_its_settings():
    kernel = PartialTreeKernel()
    trees = [Tree.from_string("(A##x (B##z w))"), Tree.from_string("(A##x (B##z w))"), Tree("w")]
    spec, tables = kernel._configuration()
    packed = kernel.prepare(trees, index=False).packed
    index = FixedSet(_engine_settings(spec, tables), packed)
    assert len(index) == 3
    assert int(np.asarray(index.occurrence_count)[:-1].sum()) == sum(t.n_nodes for t in trees)
    assert len(np.asarray(index.labels)) - 1 == 3  # three distinct subtrees: the tree, (B##z w) and w


def test_python_threads_share_an_indexed_set_while_the_table_grows():
    """Threads bring words the fixed set never saw (the table is published anew while the
    others compute against the index): each gets the values of a fresh kernel."""
    kernel = CompositionalSmoothedPartialTreeKernel(vectors=VECTORS, lexical=True, shared_rows="diluted")
    rng = np.random.default_rng(13)
    older = [label for label in SMOOTHED_LABELS if "cat" not in label and "walk" not in label and "big" not in label]
    fixed = random_trees(rng, older, 30)
    prepared = kernel.prepare(fixed)
    batches = [random_trees(np.random.default_rng(seed), SMOOTHED_LABELS, 10) for seed in range(8)]
    results, errors = {}, []

    def work(k):
        try:
            results[k] = kernel.gram(batches[k], prepared, n_jobs=1 + k % 2)
        except Exception as error:  # reported below, in the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(batches))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    fresh = CompositionalSmoothedPartialTreeKernel(vectors=VECTORS, lexical=True, shared_rows="diluted")
    for k, batch in enumerate(batches):
        np.testing.assert_allclose(results[k], fresh.gram(batch, fresh.prepare(fixed, index=False)), atol=1e-12)
