"""Plain-Python reference implementations of the tree kernels, written from the definitions.

Slow and recursive on purpose: they are the yardstick the compiled engine is tested
against, not a second implementation of it. PTK here sums child subsequences length by
length (Moschitti 2006), where the engine folds all lengths into one pass.
"""
import itertools
import math
import sys

sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))


class Node:
    """A plain nested node, so the references rely on nothing but ``label`` and ``children``."""

    def __init__(self, label, children):
        self.label = label
        self.children = children


def nested(tree):
    """The Node copy of a Tree (recursive: fine for the depths of the tests)."""
    return Node(tree.label, [nested(child) for child in tree.children])


def same_shape(x, y):
    """Whether two Nodes are the same labelled ordered tree."""
    return x.label == y.label and len(x.children) == len(y.children) and all(
        same_shape(a, b) for a, b in zip(x.children, y.children)
    )


def content(label):
    """KeLP's label content: the text after the first ``##``."""
    head, sep, tail = label.partition("##")
    return tail if sep else label


def production(node):
    return (node.label, tuple(child.label for child in node.children))


def nodes(tree):
    """All nodes, parents before children."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children)
    return found


def convolution(delta, a, b):
    """K(a, b) = sum over all node pairs of delta, with a cache per (node, node)."""
    a, b = nested(a), nested(b)
    cache = {}

    def cached(x, y):
        key = (id(x), id(y))
        if key not in cache:
            cache[key] = delta(x, y, cached)
        return cache[key]

    nodes_b = nodes(b)
    return sum(cached(x, y) for x in nodes(a) for y in nodes_b)


def production_kernel(a, b, lam, sigma):
    """KeLP's ST (sigma = 0) and SST (sigma = 1): Delta = lam * prod (sigma + Delta(children))
    over aligned children that are both internal with equal productions."""

    def delta(x, y, rec):
        if production(x) != production(y):
            return 0.0
        prod = 1.0
        for cx, cy in zip(x.children, y.children):
            if cx.children and cy.children and production(cx) == production(cy):
                prod *= sigma + rec(cx, cy)
        return lam * prod

    return convolution(delta, a, b)


def subtree_kelp(a, b, lam=0.4):
    return production_kernel(a, b, lam, sigma=0.0)


def subtree_textbook(a, b, lam=0.4):
    def delta(x, y, rec):
        if production(x) != production(y):
            return 0.0
        prod = 1.0
        for cx, cy in zip(x.children, y.children):
            if not (cx.children or cy.children):
                continue
            prod *= rec(cx, cy)
        return lam * prod

    return convolution(delta, a, b)


def subtree_textbook_brute(a, b, lam=0.4):
    """Textbook ST by its meaning: pairs of identical complete subtrees, weight lam^max(1, internal nodes)."""
    total = 0.0
    for x in nodes(nested(a)):
        for y in nodes(nested(b)):
            if same_shape(x, y):
                internal = sum(1 for n in nodes(x) if n.children)
                total += lam ** max(1, internal)
    return total


def subset_tree(a, b, lam=0.4):
    return production_kernel(a, b, lam, sigma=1.0)


def partial_tree(a, b, lam=0.4, mu=0.4, terminal_factor=1.0, subsequences=None):
    """PTK; ``subsequences`` computes the child-subsequence sum (default: length by length)."""
    return smoothed_partial_tree(a, b, lambda x, y: float(content(x) == content(y)), lam, mu, terminal_factor,
                                 threshold=1.0, subsequences=subsequences)


def smoothed_partial_tree(a, b, sigma, lam=0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, subsequences=None):
    """SPTK (KeLP's SmoothedPartialTreeKernel) for a label similarity ``sigma(label, label)``."""
    subsequences = subsequences or subsequence_sum_by_length

    def delta(x, y, rec):
        s = sigma(x.label, y.label)
        if s < threshold or s <= 0:
            return 0.0
        if not x.children or not y.children:
            return mu * lam * lam * terminal_factor * s
        return mu * s * (lam * lam + subsequences(x.children, y.children, rec, lam))

    return convolution(delta, a, b)


def subsequence_sum_by_length(xs, ys, rec, lam):
    """Sum over equal-length index sequences J1 < ..., J2 < ... of lam^(gaps) * prod Delta.

    ending[i][j] holds the sum for the sequences of the current length ending at (i, j);
    reach[i][j] the lam-discounted sum of ``ending`` over i' <= i, j' <= j.
    """
    n, m = len(xs), len(ys)
    d = [[rec(x, y) for y in ys] for x in xs]
    ending = [row[:] for row in d]
    total = sum(map(sum, ending))
    for _ in range(1, min(n, m)):
        reach = [[0.0] * (m + 1) for _ in range(n + 1)]
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                reach[i][j] = (ending[i - 1][j - 1] + lam * reach[i - 1][j] + lam * reach[i][j - 1]
                               - lam * lam * reach[i - 1][j - 1])
        ending = [[d[i][j] * reach[i][j] for j in range(m)] for i in range(n)]
        total += sum(map(sum, ending))
    return total


def subsequence_sum_brute(xs, ys, rec, lam):
    """The same sum by enumerating every pair of index subsequences (small inputs only)."""
    total = 0.0
    for length in range(1, min(len(xs), len(ys)) + 1):
        for J1 in itertools.combinations(range(len(xs)), length):
            for J2 in itertools.combinations(range(len(ys)), length):
                gaps = (J1[-1] - J1[0] + 1 - length) + (J2[-1] - J2[0] + 1 - length)
                prod = math.prod(rec(xs[i], ys[j]) for i, j in zip(J1, J2))
                total += lam**gaps * prod
    return total


def normalized(kernel, a, b, **params):
    return normalize(kernel(a, b, **params), kernel(a, a, **params), kernel(b, b, **params))


def normalize(k_ab, k_aa, k_bb):
    return 0.0 if k_aa == 0 or k_bb == 0 else k_ab / math.sqrt(k_aa * k_bb)
