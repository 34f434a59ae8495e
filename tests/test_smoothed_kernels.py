"""SPTK and CSPTK: against plain-Python references with random similarity tables, and PTK."""

import functools
import itertools

import numpy as np
import pytest
import reference_kernels as ref
from random_trees import ALPHABET, random_pairs

from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    InvalidParameterError,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    WordVectors,
)

# a small vocabulary: walk shares run's vector (one row), blue is red's opposite, zzz has none
RNG = np.random.default_rng(11)
# float32 values, as WordVectors stores them, so that the reference sees the same numbers
RAW = {
    word: RNG.normal(size=6).astype(np.float32).astype(float)
    for word in ("dog", "cat", "car", "run", "eat", "red", "big")
}
RAW["walk"] = RAW["run"].copy()
RAW["blue"] = -RAW["red"]
RAW["sit::v"] = RNG.normal(size=6).astype(np.float32).astype(float)  # a KeLP-style key with its POS
WORDS = [
    ("dog", "n"),
    ("cat", "n"),
    ("car", "n"),
    ("zzz", "n"),
    ("run", "v"),
    ("walk", "v"),
    ("eat", "v"),
    ("sit", "v"),
    ("run", "n"),
    ("red", "j"),
    ("blue", "j"),
    ("big", "j"),
]
LEX = [f"LEX##{w}::{p}" for w, p in WORDS]
RELATIONS = ["nsubj", "dobj", "amod"]
COMP = [
    f"COMP##{r}<{h}::{hp},{m}::{mp}>"
    for r, (h, hp), (m, mp) in itertools.islice(itertools.product(RELATIONS, WORDS[:8], WORDS), 0, None, 7)
]
COMP += ["COMP##root<*::*,run::v>", "COMP##root<*::*,walk::v>", "COMP##root<*::*,zzz::n>"]
OTHER = ["POS##NN", "POS##VB", "SYNT##nsubj", "SYNT##root"]
LABELS = LEX + COMP + OTHER
VECTORS = WordVectors.from_arrays(list(RAW), np.array(list(RAW.values())))


def _unit(word, pos):
    raw = RAW.get(f"{word}::{pos}", RAW.get(word))
    return None if raw is None else raw / np.linalg.norm(raw)


def _weight(word, pos, shared_rows, dilution=0.25):
    """Trust in a word's vector: the lemmas of the source that have the same vector."""
    unit = _unit(word, pos)
    lemmas = {key.split("::")[0] for key, raw in RAW.items() if np.array_equal(raw / np.linalg.norm(raw), unit)}
    if shared_rows == "kelp":
        return 1.0
    if shared_rows == "exclusive":
        return float(len(lemmas) == 1)
    return len(lemmas) ** -dilution


OWN_AXES = [f"{w}::{p}" for w, p in WORDS]


def _own_vector(word, pos, shared_rows, dilution):
    """A word's vector with one more axis per word: w * unit ++ sqrt(1 - w^2) * its own axis."""
    w = _weight(word, pos, shared_rows, dilution)
    own = np.zeros(len(OWN_AXES))
    own[OWN_AXES.index(f"{word}::{pos}")] = np.sqrt(1 - w * w)
    return np.concatenate([w * _unit(word, pos), own])


def _parse_comp(label):
    body = label[len("COMP##") :]
    relation, rest = body.split("<")
    head, modifier = rest.rstrip(">").split(",")
    return relation, tuple(head.split("::")), tuple(modifier.split("::"))


def reference_sigma(
    lexical=True, compositional=False, shared_rows="kelp", alpha=1.0, beta=1.0, syntactic=False, dilution=0.25
):
    """sigma from the definitions, with numpy on the raw vectors (rows = identical vectors)."""

    @functools.cache
    def sigma(a, b):
        if a == b:
            return 1.0
        if lexical and a.startswith("LEX##") and b.startswith("LEX##"):
            (wa, pa), (wb, pb) = a[5:].split("::"), b[5:].split("::")
            ua, ub = _unit(wa, pa), _unit(wb, pb)
            if pa != pb or ua is None or ub is None:
                return 0.0
            dot = 1.0 if np.array_equal(ua, ub) else float(ua @ ub)
            dot *= _weight(wa, pa, shared_rows, dilution) * _weight(wb, pb, shared_rows, dilution)
            return dot if dot > 0 else 0.0
        if compositional and a.startswith("COMP##") and b.startswith("COMP##"):
            (ra, ha, ma), (rb, hb, mb) = _parse_comp(a), _parse_comp(b)
            if (ha[1], ma[1]) != (hb[1], mb[1]) or (syntactic and ra != rb):
                return 0.0
            if shared_rows != "kelp":
                composed = []
                for h, m in ((ha, ma), (hb, mb)):
                    if _unit(*h) is None and _unit(*m) is None:
                        return 0.0
                    h, m = (m if _unit(*h) is None else h), (h if _unit(*m) is None else m)  # a missing one copies
                    composed.append(
                        alpha * _own_vector(*h, shared_rows, dilution) + beta * _own_vector(*m, shared_rows, dilution)
                    )
                c1, c2 = composed
                return float(c1 @ c2 / np.linalg.norm(c1) / np.linalg.norm(c2))
            composed = []
            for head, modifier in ((ha, ma), (hb, mb)):
                h, m = _unit(*head), _unit(*modifier)
                if h is None and m is None:
                    return 0.0
                h, m = (m if h is None else h), (h if m is None else m)
                composed.append((tuple(h), tuple(m), alpha * h + beta * m))
            (h1, m1, c1), (h2, m2, c2) = composed
            if (h1, m1) == (h2, m2):
                return 1.0
            return float(c1 @ c2 / np.linalg.norm(c1) / np.linalg.norm(c2))
        return 0.0

    return sigma


PAIRS = random_pairs(seed=4242, n_pairs=200, labels=LABELS)

CASES = [
    (SmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=VECTORS), reference_sigma()),
    (
        SmoothedPartialTreeKernel(
            0.7, mu=0.5, terminal_factor=2.0, threshold=0.3, vectors=VECTORS, shared_rows="diluted"
        ),
        reference_sigma(shared_rows="diluted"),
    ),
    (
        SmoothedPartialTreeKernel(
            0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=VECTORS, shared_rows="exclusive"
        ),
        reference_sigma(shared_rows="exclusive"),
    ),
    (
        CompositionalSmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=VECTORS),
        reference_sigma(lexical=False, compositional=True),
    ),
    (
        CompositionalSmoothedPartialTreeKernel(
            0.6,
            mu=0.3,
            terminal_factor=1.5,
            threshold=0.05,
            vectors=VECTORS,
            alpha=0.7,
            beta=1.3,
            lexical=True,
            syntactic_restriction=True,
            shared_rows="diluted",
        ),
        reference_sigma(compositional=True, shared_rows="diluted", alpha=0.7, beta=1.3, syntactic=True),
    ),
    (
        CompositionalSmoothedPartialTreeKernel(
            0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=VECTORS, shared_rows="diluted", dilution=0.6
        ),
        reference_sigma(lexical=False, compositional=True, shared_rows="diluted", dilution=0.6),
    ),
    (
        CompositionalSmoothedPartialTreeKernel(
            0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=VECTORS, lexical=True, shared_rows="exclusive"
        ),
        reference_sigma(compositional=True, shared_rows="exclusive"),
    ),
]


@pytest.mark.parametrize(
    "kernel, sigma",
    CASES,
    ids=["sptk", "sptk-diluted", "sptk-exclusive", "csptk", "csptk-options", "csptk-dilution", "csptk-exclusive"],
)
def test_compiled_equals_reference(kernel, sigma):
    params = dict(lam=kernel.lam, mu=kernel.mu, terminal_factor=kernel.terminal_factor, threshold=kernel.threshold)
    X = [t for pair in PAIRS for t in pair]
    index = [(2 * k, 2 * k + 1) for k in range(len(PAIRS))]
    values = np.array(
        [[ref.smoothed_partial_tree(x, y, sigma, **params) for x, y in ((a, b), (a, a), (b, b))] for a, b in PAIRS]
    )
    assert np.count_nonzero(values[:, 0]) > 120
    np.testing.assert_allclose(kernel.pairs(X, index, normalize=False), values[:, 0], rtol=1e-9, atol=1e-12)
    normalized = np.array([ref.normalize(*row) for row in values])
    np.testing.assert_allclose(kernel.pairs(X, index), normalized, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(kernel.gram(X[:30], n_jobs=2), kernel.gram(X[:30], X[:30], n_jobs=1), rtol=1e-12)


def test_the_similarities_really_smooth():
    """Smoothing changes values where labels differ but are similar: the references are not trivial."""
    sigma = reference_sigma(compositional=True)
    assert 0 < sigma("LEX##dog::n", "LEX##cat::n") < 1
    assert sigma("LEX##run::v", "LEX##walk::v") == 1.0  # one row, KeLP's semantics
    assert reference_sigma(shared_rows="diluted")("LEX##run::v", "LEX##walk::v") == pytest.approx(2**-0.5)
    assert reference_sigma(shared_rows="exclusive")("LEX##run::v", "LEX##eat::v") == 0.0
    assert sigma("LEX##red::j", "LEX##blue::j") == 0.0  # negative cosine
    assert sigma("LEX##dog::n", "LEX##run::v") == 0.0  # different POS
    assert sigma("LEX##zzz::n", "LEX##dog::n") == 0.0  # no vector: exact match only
    assert sigma("COMP##root<*::*,run::v>", "COMP##root<*::*,walk::v>") == 1.0
    diluted = reference_sigma(compositional=True, shared_rows="diluted")
    assert 0 < diluted("COMP##root<*::*,run::v>", "COMP##root<*::*,walk::v>") < 1  # each keeps its own part
    assert (
        reference_sigma(compositional=True, shared_rows="exclusive")(
            "COMP##root<*::*,run::v>", "COMP##root<*::*,walk::v>"
        )
        == 0.0
    )  # "*" copies run / walk: nothing shared
    sptk, _ = CASES[0]
    ptk = PartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2)
    X = [t for pair in PAIRS[:40] for t in pair]
    assert np.abs(sptk.gram(X) - ptk.gram(X)).max() > 0.05


def test_identity_similarity_is_ptk():
    pairs = random_pairs(seed=5, n_pairs=150, labels=ALPHABET)
    X = [t for pair in pairs for t in pair]
    for lam, mu, tf in ((0.4, 0.4, 1.0), (0.9, 0.6, 5.0)):
        sptk = SmoothedPartialTreeKernel(lam, mu=mu, terminal_factor=tf)
        ptk = PartialTreeKernel(lam, mu=mu, terminal_factor=tf)
        np.testing.assert_allclose(sptk.gram(X, normalize=False), ptk.gram(X, normalize=False), rtol=1e-12)


def test_parameters_are_checked():
    tree = PAIRS[0][0]
    for kernel in (
        SmoothedPartialTreeKernel(threshold=-1, vectors=VECTORS),
        SmoothedPartialTreeKernel(vectors=VECTORS, shared_rows="sometimes"),
        SmoothedPartialTreeKernel(vectors=VECTORS, shared_rows="diluted", dilution=-0.5),
        CompositionalSmoothedPartialTreeKernel(vectors=VECTORS, alpha=float("nan")),
        SmoothedPartialTreeKernel(lam=0),
    ):
        with pytest.raises(InvalidParameterError):
            kernel.gram([tree])


def test_changing_parameters_rebuilds_the_table():
    kernel = SmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=VECTORS)
    X = [t for pair in PAIRS[:20] for t in pair]
    before = kernel.gram(X)
    kernel.set_params(shared_rows="diluted")
    after = kernel.gram(X)
    fresh = SmoothedPartialTreeKernel(
        0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=VECTORS, shared_rows="diluted"
    ).gram(X)
    np.testing.assert_allclose(after, fresh, rtol=1e-12)
    assert np.abs(before - after).max() > 0


def test_shared_row_rules_keep_the_kernel_positive_semidefinite():
    X = [t for pair in PAIRS[:60] for t in pair if t.n_nodes < 60]
    for shared_rows in ("kelp", "diluted", "exclusive"):
        for kernel in (
            SmoothedPartialTreeKernel(
                0.4, mu=0.4, terminal_factor=1.0, threshold=0.0, vectors=VECTORS, shared_rows=shared_rows
            ),
            CompositionalSmoothedPartialTreeKernel(
                0.4, mu=0.4, terminal_factor=1.0, threshold=0.0, vectors=VECTORS, lexical=True, shared_rows=shared_rows
            ),
        ):
            assert np.linalg.eigvalsh(kernel.gram(X)).min() > -1e-8, (kernel, shared_rows)


def test_nonstationary_label_weights_equal_reference():
    weights = {"LEX##dog::n": 0.0, "POS##NN": 0.5, "COMP##root<*::*,run::v>": 2.0, "SYNT##nsubj": 0.0}
    sigma = reference_sigma(compositional=True)
    kernel = CompositionalSmoothedPartialTreeKernel(
        0.5, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=VECTORS, lexical=True, label_weights=weights
    )
    pairs_ = PAIRS[:80]
    X = [t for pair in pairs_ for t in pair]
    index = [(2 * k, 2 * k + 1) for k in range(len(pairs_))]
    expected = [ref.smoothed_partial_tree(a, b, sigma, 0.5, 0.4, 1.0, 0.01, label_weights=weights) for a, b in pairs_]
    np.testing.assert_allclose(kernel.pairs(X, index, normalize=False), expected, rtol=1e-9, atol=1e-12)
    plain = CompositionalSmoothedPartialTreeKernel(
        0.5, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=VECTORS, lexical=True
    )
    assert np.abs(plain.pairs(X, index, normalize=False) - expected).max() > 1e-3
