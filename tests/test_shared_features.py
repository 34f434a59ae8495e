"""Feature positions (Bunescu & Mooney 2005): the path and Zelenko kernels credit two
positions that are sets of features with the number of features they share."""

import functools

import numpy as np
import pytest
import reference_kernels as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from random_trees import random_tree
from thread_checks import VECTORS as THREAD_VECTORS
from thread_checks import check_shared_by_threads

from spacy_convkernels import Tree
from spacy_convkernels.errors import InvalidParameterError, InvalidTreeError
from spacy_convkernels.kernels import SubsequencePathKernel, WordVectors, ZelenkoTreeKernel
from spacy_convkernels.kernels._tables import NodeSimilarity, SimilarityKind
from spacy_convkernels.kernels.node_similarity import SharedFeatures, SimilarityTable
from spacy_convkernels.structures.interning import LABELS
from spacy_convkernels.structures.paths import PathTuples, feature_label, label_features

LAM = 0.5
# feature strings as the candidates make them, plus the separator, the escape and "/" inside features
FEATURES = ["word=RAS", "lemma=ras", "tag=NNP", "pos=PROPN", "role=catalyst", "edge=nsubj>", "edge=dobj<"]
FEATURES += ["word=a|b", "word=c\\", "word=and/or", "lemma=a|b"]
EDGES = ["", "arg0", "arg1"]
PLAIN = ["bind", "protein", "word=RAS", "FEAT##b|a"]  # the last is not canonical: a plain label
RNG = np.random.default_rng(3)
RAW = {
    word: RNG.normal(size=4).astype(np.float32).astype(float)
    for word in ["bind", "protein", feature_label(["word=RAS"])]
}
VECTORS = WordVectors.from_arrays(list(RAW), np.array(list(RAW.values())))
WEIGHTS = {"arg1": 0.5}


def F(*features):
    """A feature position."""
    return ("", feature_label(features))


def exponential(gamma):
    @functools.cache
    def similarity(a, b):
        if a not in RAW or b not in RAW:
            return 0.0
        c = float(RAW[a] @ RAW[b] / np.linalg.norm(RAW[a]) / np.linalg.norm(RAW[b]))
        return float(np.exp(c - 1) * (c - gamma) / (1 - gamma)) if c > gamma else 0.0

    return similarity


# the vector of a feature label's own string is never used: the feature rule comes first
CONFIGS = [
    (dict(lam=LAM), ref.tuple_kernel()),
    (dict(lam=0.7, vectors=VECTORS, gamma=-0.5, edge_weights=WEIGHTS), ref.tuple_kernel(exponential(-0.5), WEIGHTS)),
]
PATH_KERNELS = [(SubsequencePathKernel(**params), k, params["lam"]) for params, k in CONFIGS]

feature_sets = st.frozensets(st.sampled_from(FEATURES), min_size=1, max_size=6)
nodes = st.one_of(feature_sets.map(feature_label), st.sampled_from(PLAIN))
paths = st.lists(st.tuples(st.sampled_from(EDGES), nodes), min_size=1, max_size=8).map(PathTuples)


def compiled_and_reference(kernel, reference, a, b):
    index = [(0, 1), (0, 0), (1, 1)]
    values = [reference(x, y) for x, y in ((a, b), (a, a), (b, b))]
    raw = kernel.pairs([a, b], index, normalize=False)
    np.testing.assert_allclose(raw, values, rtol=1e-9, atol=1e-12)
    normalized = kernel.pairs([a, b], [(0, 1)])
    np.testing.assert_allclose(normalized, [ref.normalize(*values)], rtol=1e-9, atol=1e-12)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(a=paths, b=paths, config=st.sampled_from(range(len(CONFIGS))))
def test_path_kernel_on_feature_paths_equals_reference(a, b, config):
    kernel, k, lam = PATH_KERNELS[config]
    compiled_and_reference(kernel, lambda x, y: ref.subsequence_path(x.labels, y.labels, k, lam), a, b)


def feature_trees(seed, n):
    """Random trees of feature and plain tuples, their roots feature positions sharing a feature."""
    rng = np.random.default_rng(seed)
    labels = [f"{e}/{feature_label(rng.choice(FEATURES, size=int(rng.integers(1, 5))))}" for e in EDGES * 4]
    labels += [f"{e}/{node}" for e in EDGES for node in PLAIN]

    def tree():
        t = random_tree(rng, int(rng.integers(1, 25)), labels)
        root = "/" + feature_label(["role=trigger", *rng.choice(FEATURES, size=int(rng.integers(0, 3)))])
        return Tree.from_flat((root,) + t.labels[1:], t.parents)

    return [(tree(), tree()) for _ in range(n)]


@pytest.mark.slow
@pytest.mark.parametrize("config", range(len(CONFIGS)))
def test_zelenko_on_feature_trees_equals_reference(config):
    params, k = CONFIGS[config]
    kernel = ZelenkoTreeKernel(**params)
    pairs = feature_trees(config, 80)
    for a, b in pairs:
        compiled_and_reference(kernel, lambda x, y: ref.zelenko(x, y, k, params["lam"]), a, b)
    assert all(kernel(a, b, normalize=False) > 0 for a, b in pairs)


def test_one_position_sharing_three_of_five_features():
    a = PathTuples([F("word=RAS", "lemma=ras", "tag=NNP", "pos=PROPN", "role=catalyst")])
    b = PathTuples([F("word=RAF", "lemma=raf", "tag=NNP", "pos=PROPN", "role=catalyst")])
    kernel = SubsequencePathKernel(lam=LAM)
    assert kernel(a, b, normalize=False) == pytest.approx(LAM**2 * 3)
    np.testing.assert_allclose(kernel.diag([a, b]), [LAM**2 * 5, LAM**2 * 5])  # |F| with itself, not 1
    assert kernel(a, b) == pytest.approx(3 / 5)  # K(a, b) / sqrt(K(a, a) K(b, b))


def test_two_positions_by_hand():
    # k(p0, q0) = 2, k(p0, q1) = 0, k(p1, q0) = 1, k(p1, q1) = 1; one pair of length 2, spans 2 + 2
    p = PathTuples([F("a", "b"), F("c")])
    q = PathTuples([F("a", "b", "c"), F("c", "d")])
    value = SubsequencePathKernel(lam=LAM)(p, q, normalize=False)
    assert value == pytest.approx(LAM**2 * (2 + 0 + 1 + 1) + LAM**4 * 2 * 1)


def test_bunescu_mooney_layout_by_hand():
    """Words and edges as separate positions; the whole-path term is B&M's product 2 * 1 * 2."""
    p = PathTuples(
        [F("word=RAS", "tag=NNP", "pos=PROPN"), F("edge=nsubj>"), F("lemma=activate", "tag=VBZ", "pos=VERB")]
    )
    q = PathTuples(
        [F("word=RAF", "tag=NNP", "pos=PROPN"), F("edge=nsubj>"), F("lemma=activate", "tag=VBD", "pos=VERB")]
    )
    expected = LAM**2 * (2 + 1 + 2) + LAM**4 * (2 * 1 + 1 * 2) + LAM**6 * (2 * 2) + LAM**6 * (2 * 1 * 2)
    assert SubsequencePathKernel(lam=LAM)(p, q, normalize=False) == pytest.approx(expected)


def test_zelenko_by_hand():
    a = Tree(f"/{feature_label(['a', 'b', 'c'])}", [Tree(f"arg0/{feature_label(['x', 'y'])}")])
    b = Tree(f"/{feature_label(['a', 'b'])}", [Tree(f"arg0/{feature_label(['y'])}")])
    # K(child) = 1 * (1 + 0); K(root) = 2 * (2 + lam^2 * K(child) * k(child))
    assert ZelenkoTreeKernel(lam=LAM)(a, b, normalize=False) == pytest.approx(2 * (2 + LAM**2))
    # the same features under another edge: no match
    c = Tree(f"/{feature_label(['a', 'b'])}", [Tree(f"arg1/{feature_label(['y'])}")])
    assert ZelenkoTreeKernel(lam=LAM)(a, c, normalize=False) == pytest.approx(2 * 2)


@pytest.mark.parametrize("params", [dict(lam=LAM), dict(lam=LAM, vectors=VECTORS, gamma=-0.9)])
def test_feature_positions_and_plain_tuples_never_match(params):
    kernel = SubsequencePathKernel(**params)
    features = PathTuples([F("word=RAS")])
    for plain in ("word=RAS", "FEAT##word=RAS|x|", "bind"):
        assert kernel(features, PathTuples([("", plain)]), normalize=False) == 0.0
    assert kernel(features, features, normalize=False) == pytest.approx(LAM**2)
    # a plain label that only looks like a feature label matches itself only
    assert label_features("FEAT##b|a") is None
    odd = PathTuples([("", "FEAT##b|a")])
    assert kernel(odd, PathTuples([F("a", "b")]), normalize=False) == 0.0
    assert kernel(odd, odd, normalize=False) == pytest.approx(LAM**2)


@given(st.frozensets(st.text(min_size=1), min_size=1, max_size=5))
def test_feature_labels_round_trip(features):
    label = feature_label(features)
    assert label_features(label) == features
    assert feature_label(sorted(features, reverse=True) + list(features)) == label


@pytest.mark.parametrize("features", [[], [""], ["a", ""], "word=RAS", ["a", 1], None, [None]])
def test_bad_features_are_refused(features):
    with pytest.raises(InvalidTreeError):
        feature_label(features)


def test_node_similarity_checks_its_features():
    def table(kinds, features):
        n = len(kinds)
        return NodeSimilarity(
            kinds,
            groups=[0] * n,
            rows=[-1] * n,
            weights=[1.0] * n,
            vectors=np.zeros((0, 1)),
            threshold=0.0,
            features=features,
        )

    shared = SimilarityKind.SHARED_FEATURES
    with pytest.raises(InvalidParameterError, match="need a features table"):
        table([0, shared], None)
    for bad, message in [
        (np.zeros((1, 2)), "2 rows"),
        (np.zeros((2, 0)), "at least one column"),
        (np.zeros(2), "2 rows"),
        ([[0, 1], [2, 1]], "increasing"),
        ([[0, 0], [1, -1]], "increasing"),
        ([[-1, 0], [1, -1]], "increasing"),
        ([[0, -2], [1, -1]], "increasing"),
    ]:
        with pytest.raises(InvalidParameterError, match=message):
            table([0, shared], bad)
    assert table([0, shared], [[-1, -1], [0, 3]]).features.tolist() == [[-1, -1], [0, 3]]
    assert table([0, 0], None).features is None


def test_the_table_widens_and_keeps_what_it_published():
    narrow, wide = feature_label(["x"]), feature_label(["x", "y", "z", "t"])
    lease = LABELS.lease([narrow, wide, "plain"])  # held to the end: the ids stay these labels'
    narrow_id, wide_id, plain_id = lease.ids.tolist()
    table = SimilarityTable([SharedFeatures()], threshold=0.0)
    first = table.cover([narrow_id, plain_id], [narrow, "plain"])
    second = table.cover([wide_id], [wide])
    assert first.features.shape[1] == 1 and second.features.shape[1] == 4
    assert first.kinds[plain_id] == SimilarityKind.EXACT and first.kinds[narrow_id] == SimilarityKind.SHARED_FEATURES
    for label_id in (narrow_id, plain_id):  # what the first table covers, unchanged and copied
        assert first.features[label_id].tolist() == second.features[label_id, :1].tolist()
    assert (first.features[plain_id] == -1).all() and (second.features[plain_id] == -1).all()
    x = first.features[narrow_id, 0]
    assert second.features[narrow_id].tolist() == [x, -1, -1, -1]
    assert x in second.features[wide_id] and second.features[wide_id].tolist() == sorted(second.features[wide_id])


def feature_path(rng, vocabulary):
    """A path whose positions hold a word of the call and up to 4 more features (rows widen)."""
    return PathTuples(
        [
            F(f"word={rng.choice(vocabulary)}", "pos=NN", *[f"x={k}" for k in range(int(rng.integers(0, 5)))])
            for _ in range(5)
        ]
    )


def feature_tree(rng, vocabulary):
    """A trigger and three arguments, each a feature position."""
    children = [Tree(f"arg{k}/{node}") for k, (_, node) in enumerate(feature_path(rng, vocabulary).tuples[:3])]
    return Tree(f"/{feature_label(['trigger', str(rng.choice(vocabulary))])}", children)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kernel, make",
    [(SubsequencePathKernel(), feature_path), (ZelenkoTreeKernel(vectors=THREAD_VECTORS), feature_tree)],
    ids=["path", "zelenko"],
)
def test_a_kernel_of_feature_structures_shared_by_threads(kernel, make):
    check_shared_by_threads(kernel, make)
