"""Random trees for the reference tests, including the awkward shapes."""

import math

import numpy as np
from hypothesis import strategies as st

from spacy_convkernels import Tree

# parameter values a kernel must take or refuse with a package error (the fuzzers' odd draws)
ODD_PARAMETERS = [
    0.0,
    -0.5,
    1.0,
    1.5,
    1e308,
    5e-324,
    math.nan,
    math.inf,
    -math.inf,
    True,
    None,
    "0.4",
    [0.4],
    np.float32(0.3),
    np.int64(1),
    1e-200,
]


def bad_index_pairs(n):
    """Index pairs that are out of range, of the wrong shape or of the wrong type for ``n`` structures."""
    return [
        [(0, n)],
        [(-1, 0)],
        [(2**40, 0)],
        [(0, 1, 2)],
        [0, 1],
        [[0], [1, 2]],
        [(0.0, 1.0)],
        [(True, False)],
        np.zeros((1, 2, 1), dtype=int),
        [("0", "0")],
        None,
        7,
        [(0, 2**63)],
        np.array([[0, -1]]),
    ]


# index pairs of an odd type or shape that a kernel must still take
ODD_BUT_VALID_PAIRS = [np.array([[0, 0]], dtype=np.uint64), np.array([[0, 0]], dtype=np.int8), [], np.zeros((0, 2))]

# typed labels whose contents collide across types (A##x and B##x share the content x)
ALPHABET = ["A##x", "B##x", "A##y", "B##z", "w", "A##w", "C##y"]


def random_tree(rng: np.random.Generator, n_nodes: int, labels=ALPHABET, max_children: int = 4) -> Tree:
    """A random tree of ``n_nodes`` nodes: each new node hangs under a random earlier node."""
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n_nodes)]
    children = [[] for _ in range(n_nodes)]
    for node in range(1, n_nodes):
        p = parent[node]
        while len(children[p]) >= max_children:  # respect the fan-out by descending
            p = children[p][int(rng.integers(0, len(children[p])))]
        children[p].append(node)
    built = [None] * n_nodes
    for node in reversed(range(n_nodes)):  # children have larger numbers than parents
        label = labels[int(rng.integers(0, len(labels)))]
        built[node] = Tree(label, [built[c] for c in children[node]])
    return built[0]


def wide_tree(rng, n_children: int, labels=ALPHABET) -> Tree:
    """A root with ``n_children`` children, some with a child of their own."""
    kids = []
    for _ in range(n_children):
        label = labels[int(rng.integers(0, len(labels)))]
        grandkids = [Tree(labels[int(rng.integers(0, len(labels)))])] if rng.random() < 0.5 else []
        kids.append(Tree(label, grandkids))
    return Tree(labels[int(rng.integers(0, 2))], kids)


def chain(rng, depth: int, labels=ALPHABET) -> Tree:
    """A path of ``depth`` nodes, sometimes with an extra leaf on the way (built bottom-up,
    each node over the one below and its extra leaf, then laid out in preorder at once)."""
    path = [labels[int(rng.integers(0, len(labels)))]]  # bottom-up
    extras: list[tuple[int, str]] = []  # (level on the path, label): a leaf after the path below it
    for level in range(1, depth):
        if rng.random() < 0.1:
            extras.append((level, labels[int(rng.integers(0, len(labels)))]))
        path.append(labels[int(rng.integers(0, len(labels)))])
    node_labels = path[::-1] + [label for _, label in extras]
    parents = list(range(-1, depth - 1)) + [depth - 1 - level for level, _ in extras]
    return Tree.from_flat(node_labels, parents)


def random_pairs(seed: int, n_pairs: int, labels=ALPHABET):
    """``n_pairs`` tree pairs mixing ordinary, wide (30+ children), deep (200+) and single-node trees."""
    rng = np.random.default_rng(seed)
    makers = [
        lambda: random_tree(rng, int(rng.integers(1, 40)), labels),
        lambda: random_tree(rng, int(rng.integers(20, 60)), labels=labels[:2], max_children=3),
        lambda: wide_tree(rng, int(rng.integers(30, 36)), labels),
        lambda: chain(rng, int(rng.integers(200, 230)), labels),
        lambda: Tree(labels[int(rng.integers(0, len(labels)))]),
    ]
    weights = np.array([0.55, 0.2, 0.1, 0.1, 0.05])

    def pick():
        return makers[int(rng.choice(len(makers), p=weights))]()

    return [(pick(), pick()) for _ in range(n_pairs)]


def small_tree(rng, n_leaves: int) -> Tree:
    """A random tree over leaves w0..w(n-1) in order, internal labels A or B; over the same
    leaves, B only above A, so packed trees never put a node twice on a path (a forest
    merges nodes by label and span)."""
    level = [(Tree(f"w{i}"), set()) for i in range(n_leaves)]  # (subtree, labels over the same leaves)
    while len(level) > 1 or level[0][0].n_nodes == 1 or rng.random() < 0.3:
        i = int(rng.integers(0, len(level)))
        j = min(len(level), i + int(rng.integers(1, 3)))
        used = level[i][1] if j == i + 1 else set()
        free = [label for label in "AB" if not used or label > max(used)]
        if not free:
            continue
        label = free[int(rng.integers(0, len(free)))]
        level[i:j] = [(Tree(label, [tree for tree, _ in level[i:j]]), used | {label})]
    return level[0][0]


def trees(labels, max_leaves=8):
    """A hypothesis strategy of trees over ``labels``: up to ``max_leaves`` leaves, 1-4 children per node."""
    label = st.sampled_from(labels)
    return st.recursive(
        st.builds(Tree, label),
        lambda children: st.builds(Tree, label, st.lists(children, min_size=1, max_size=4)),
        max_leaves=max_leaves,
    )
