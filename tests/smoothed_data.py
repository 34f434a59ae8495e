"""A small vocabulary of vectors, random trees over its labels, the label similarity from
the definitions and the SPTK/CSPTK cases the smoothed kernels' tests check against it."""

import functools
import itertools

import numpy as np
from random_trees import random_pairs

from spacy_convkernels.kernels import CompositionalSmoothedPartialTreeKernel, SmoothedPartialTreeKernel, WordVectors

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


def sigma_key(node):
    """A key that two nodes share whenever reference_sigma can be nonzero between their labels
    (LEX## with LEX##, COMP## with COMP##, any other label with itself only): the ``match``
    of reference_kernels.smoothed_partial_tree."""
    label = node.label
    return next((kind for kind in ("LEX##", "COMP##") if label.startswith(kind)), label)


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
