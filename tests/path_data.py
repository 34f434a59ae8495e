"""Labels, vectors and random structures of tuple labels (edge/node), for the path and
Zelenko kernels' tests."""

import functools

import numpy as np
from random_trees import random_pairs

from spacy_convkernels import Tree
from spacy_convkernels.kernels import WordVectors
from spacy_convkernels.structures.paths import PathTuples

EDGES = ["", "arg0", "arg1", "arg1-of", "op1"]
NODES = ["bind", "protein", "enzyme", "and", "site", "cell", "gtp"]
LABELS = [f"{e}/{n}" for e in EDGES for n in NODES]
RNG = np.random.default_rng(19)
RAW = {node: RNG.normal(size=5).astype(np.float32).astype(float) for node in NODES[:-1]}  # gtp has no vector
VECTORS = WordVectors.from_arrays(list(RAW), np.array(list(RAW.values())))
WEIGHTS = {"arg0": 0.0, "op1": 0.5, "arg1-of": 2.0}


def exponential(gamma):
    @functools.cache
    def similarity(a, b):
        if a not in RAW or b not in RAW:
            return 0.0
        u, v = RAW[a] / np.linalg.norm(RAW[a]), RAW[b] / np.linalg.norm(RAW[b])
        c = float(u @ v)
        return float(np.exp(c - 1) * (c - gamma) / (1 - gamma)) if c > gamma else 0.0

    return similarity


def random_path(rng, length):
    return PathTuples([(EDGES[rng.integers(len(EDGES))], NODES[rng.integers(len(NODES))]) for _ in range(length)])


def path_pairs(seed, n, long=False):
    rng = np.random.default_rng(seed)

    def lengths():
        return int(rng.integers(30, 40)) if long and rng.random() < 0.3 else int(rng.integers(1, 16))

    return [(random_path(rng, lengths()), random_path(rng, lengths())) for _ in range(n)]


def rooted_pairs(seed, n, labels=LABELS):
    """Random tree pairs whose roots share the trigger, as candidate subgraphs do."""

    def reroot(t):
        return Tree.from_flat(("/bind",) + t.labels[1:], t.parents)

    return [(reroot(a), reroot(b)) for a, b in random_pairs(seed=seed, n_pairs=n, labels=labels)]
