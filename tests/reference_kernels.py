"""Plain-Python reference implementations of the tree kernels, written from the definitions.

Slow and recursive on purpose: they are the yardstick the compiled engine is tested
against, not a second implementation of it. PTK here sums child subsequences length by
length (Moschitti 2006), where the engine folds all lengths into one pass.
"""

import itertools
import math
import sys

from spacy_convkernels.structures.paths import label_features

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
    return (
        x.label == y.label
        and len(x.children) == len(y.children)
        and all(same_shape(a, b) for a, b in zip(x.children, y.children))
    )


def content(label):
    """KeLP's label content: the text after the first ``##``."""
    head, sep, tail = label.partition("##")
    return tail if sep else label


def production(node):
    return (node.label, tuple(child.label for child in node.children))


def nodes(tree):
    """All nodes in preorder (a Tree's node numbering): parents before children."""
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.children))
    return found


def memoized(delta):
    """``delta(x, y, rec)`` with its recursion ``rec`` cached per (node, node)."""
    cache = {}

    def cached(x, y):
        key = (id(x), id(y))
        if key not in cache:
            cache[key] = delta(x, y, cached)
        return cache[key]

    return cached


def convolution(delta, a, b, match=None):
    """K(a, b) = sum over all node pairs of delta, with a cache per (node, node).

    ``match(node)``, when given, is a key that two nodes must share for their delta to be
    nonzero (the first test of that delta: equal productions, equal label contents); the
    sum then skips the pairs whose keys differ, which add 0. The recursion inside delta
    still reaches every pair of children it asks for."""
    a, b = nested(a), nested(b)
    cached = memoized(delta)
    nodes_b = nodes(b)
    if match is None:
        return sum(cached(x, y) for x in nodes(a) for y in nodes_b)
    by_key = {}
    for y in nodes_b:
        by_key.setdefault(match(y), []).append(y)
    return sum(cached(x, y) for x in nodes(a) for y in by_key.get(match(x), ()))


def delta_table(delta, a, b):
    """The terms of ``convolution``: Delta(x, y) of every node pair, a list of rows, x and
    y numbered in preorder."""
    cached = memoized(delta)
    nodes_b = nodes(nested(b))
    return [[cached(x, y) for y in nodes_b] for x in nodes(nested(a))]


def weighted(delta, label_weights):
    """Delta times w(x) w(y), the nonstationary weights by label (default 1)."""
    if not label_weights:
        return delta
    return lambda x, y, rec: label_weights.get(x.label, 1.0) * delta(x, y, rec) * label_weights.get(y.label, 1.0)


def production_delta(lam, offset, label_weights=None):
    """KeLP's ST (offset = 0) and SST (offset = 1): Delta = lam * prod (offset + Delta(children))
    over aligned children that are both internal with equal productions."""

    def delta(x, y, rec):
        if production(x) != production(y):
            return 0.0
        prod = 1.0
        for cx, cy in zip(x.children, y.children):
            if cx.children and cy.children and production(cx) == production(cy):
                prod *= offset + rec(cx, cy)
        return lam * prod

    return weighted(delta, label_weights)


def production_kernel(a, b, lam, offset, label_weights=None):
    return convolution(production_delta(lam, offset, label_weights), a, b, match=production)


def subtree_kelp(a, b, lam=0.4, label_weights=None):
    return production_kernel(a, b, lam, 0.0, label_weights)


def subtree_textbook_delta(lam, label_weights=None):
    """Textbook ST: Delta = lam * prod Delta(children) over aligned children, two leaves giving 1."""

    def delta(x, y, rec):
        if production(x) != production(y):
            return 0.0
        prod = 1.0
        for cx, cy in zip(x.children, y.children):
            if not (cx.children or cy.children):
                continue
            prod *= rec(cx, cy)
        return lam * prod

    return weighted(delta, label_weights)


def subtree_textbook(a, b, lam=0.4, label_weights=None):
    return convolution(subtree_textbook_delta(lam, label_weights), a, b, match=production)


def subtree_textbook_brute(a, b, lam=0.4):
    """Textbook ST by its meaning: pairs of identical complete subtrees, weight lam^max(1, internal nodes)."""
    total = 0.0
    for x in nodes(nested(a)):
        for y in nodes(nested(b)):
            if same_shape(x, y):
                internal = sum(1 for n in nodes(x) if n.children)
                total += lam ** max(1, internal)
    return total


def subset_tree(a, b, lam=0.4, label_weights=None):
    return production_kernel(a, b, lam, 1.0, label_weights)


def content_sigma(x, y):
    """PTK's node similarity: 1 between equal label contents, else 0."""
    return float(content(x) == content(y))


def partial_tree(a, b, lam=0.4, mu=0.4, terminal_factor=1.0, subsequences=None, label_weights=None):
    """PTK; ``subsequences`` computes the child-subsequence sum (default: length by length)."""
    return smoothed_partial_tree(
        a,
        b,
        content_sigma,
        lam,
        mu,
        terminal_factor,
        threshold=1.0,
        subsequences=subsequences,
        label_weights=label_weights,
        match=lambda node: content(node.label),  # sigma is 0 between different contents
    )


def smoothed_partial_delta(
    sigma, lam=0.4, mu=0.4, terminal_factor=1.0, threshold=0.01, subsequences=None, label_weights=None
):
    """SPTK's Delta (PTK's for ``content_sigma`` and threshold 1): see ``smoothed_partial_tree``."""
    subsequences = subsequences or subsequence_sum_by_length
    weights = label_weights or {}

    def delta(x, y, rec):
        s = sigma(x.label, y.label)
        if s < threshold or s <= 0:
            return 0.0
        s *= weights.get(x.label, 1.0) * weights.get(y.label, 1.0)
        if s == 0:
            return 0.0
        if not x.children or not y.children:
            return mu * lam * lam * terminal_factor * s
        return mu * s * (lam * lam + subsequences(x.children, y.children, rec, lam))

    return delta


def smoothed_partial_tree(
    a,
    b,
    sigma,
    lam=0.4,
    mu=0.4,
    terminal_factor=1.0,
    threshold=0.01,
    subsequences=None,
    label_weights=None,
    match=None,
):
    """SPTK (KeLP's SmoothedPartialTreeKernel) for a label similarity ``sigma(label, label)``;
    ``label_weights`` (label -> w, default 1) make it w(x) sigma(x, y) w(y) past the threshold;
    ``match`` as in ``convolution``, a key of the nodes that sigma is 0 across."""
    delta = smoothed_partial_delta(sigma, lam, mu, terminal_factor, threshold, subsequences, label_weights)
    return convolution(delta, a, b, match)


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
                reach[i][j] = (
                    ending[i - 1][j - 1]
                    + lam * reach[i - 1][j]
                    + lam * reach[i][j - 1]
                    - lam * lam * reach[i - 1][j - 1]
                )
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


# --- kernels over (edge, node) tuples (Garg et al. 2018) ---------------------------------


def tuple_kernel(node_similarity=None, edge_weights=None):
    """k((e, n), (e', n')) = sigma(e) [e = e'] sigma(e') k_n(n, n') on ``edge/node`` labels;
    k_n of two feature nodes (``FEAT##``) is the number of features they share, 0 between
    a feature node and another node."""
    weights = edge_weights or {}
    node_similarity = node_similarity or (lambda a, b: float(a == b))

    def k_n(na, nb):
        fa, fb = label_features(na), label_features(nb)
        if fa is not None and fb is not None:
            return float(len(fa & fb))
        if fa is not None or fb is not None:
            return 0.0
        return 1.0 if na == nb else node_similarity(na, nb)

    def k(a, b):
        (ea, na), (eb, nb) = a.split("/", 1), b.split("/", 1)
        if ea != eb:
            return 0.0
        return weights.get(ea, 1.0) ** 2 * k_n(na, nb)

    return k


def _reach(ending, lam):
    """reach[i][j] = sum over p <= i, q <= j of ending[p][q] * lam^((i - p) + (j - q)), 1-based."""
    n, m = len(ending), len(ending[0]) if ending else 0
    reach = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            reach[i][j] = (
                ending[i - 1][j - 1] + lam * reach[i - 1][j] + lam * reach[i][j - 1] - lam * lam * reach[i - 1][j - 1]
            )
    return reach


def subsequence_path(a, b, k, lam=0.5):
    """Path kernel length by length: ``ending[i][j]`` sums the sequences of the current
    length ending at (i, j), each weighted by prod k * lam^(spans)."""
    n, m = len(a), len(b)
    K = [[k(x, y) for y in b] for x in a]
    ending = [[K[i][j] * lam**2 for j in range(m)] for i in range(n)]
    total = sum(map(sum, ending))
    for _ in range(1, min(n, m)):
        reach = _reach(ending, lam)
        ending = [[K[i][j] * lam**2 * reach[i][j] for j in range(m)] for i in range(n)]
        total += sum(map(sum, ending))
    return total


def subsequence_path_brute(a, b, k, lam=0.5):
    """The same by enumerating all pairs of index sequences (short paths only)."""
    total = 0.0
    for length in range(1, min(len(a), len(b)) + 1):
        for chosen_a in itertools.combinations(range(len(a)), length):
            for chosen_b in itertools.combinations(range(len(b)), length):
                spans = (chosen_a[-1] - chosen_a[0] + 1) + (chosen_b[-1] - chosen_b[0] + 1)
                total += math.prod(k(a[i], b[j]) for i, j in zip(chosen_a, chosen_b)) * lam**spans
    return total


def zelenko(a, b, k, lam=0.5, enumerate_children=False):
    """Zelenko's sparse subtree kernel between the roots of two trees of tuple labels;
    child subsequences by enumeration (small trees) or length by length."""
    x, y = nested(a), nested(b)
    cache = {}

    def K(u, v):
        key = (id(u), id(v))
        if key not in cache:
            s = k(u.label, v.label)
            cache[key] = 0.0 if s == 0 else s * (s + children(u.children, v.children))
        return cache[key]

    def children(us, vs):
        if enumerate_children:
            total = 0.0
            for length in range(1, min(len(us), len(vs)) + 1):
                for chosen_a in itertools.combinations(range(len(us)), length):
                    for chosen_b in itertools.combinations(range(len(vs)), length):
                        spans = (chosen_a[-1] - chosen_a[0] + 1) + (chosen_b[-1] - chosen_b[0] + 1)
                        pairs = [(us[i], vs[j]) for i, j in zip(chosen_a, chosen_b)]
                        total += (
                            lam**spans
                            * sum(K(p, q) for p, q in pairs)
                            * math.prod(k(p.label, q.label) for p, q in pairs)
                        )
            return total
        n, m = len(us), len(vs)
        s = [[k(u.label, v.label) for v in vs] for u in us]
        Kc = [[K(us[i], vs[j]) if s[i][j] else 0.0 for j in range(m)] for i in range(n)]
        # per length: sums over sequences ending at (i, j) of w * prod k, and of w * prod k * sum K
        prod_end = [[s[i][j] * lam**2 for j in range(m)] for i in range(n)]
        sum_end = [[s[i][j] * lam**2 * Kc[i][j] for j in range(m)] for i in range(n)]
        total = sum(map(sum, sum_end))
        for _ in range(1, min(n, m)):
            reach_prod, reach_sum = _reach(prod_end, lam), _reach(sum_end, lam)
            prod_end = [[s[i][j] * lam**2 * reach_prod[i][j] for j in range(m)] for i in range(n)]
            sum_end = [
                [s[i][j] * lam**2 * (reach_sum[i][j] + Kc[i][j] * reach_prod[i][j]) for j in range(m)] for i in range(n)
            ]
            total += sum(map(sum, sum_end))
        return total

    return K(x, y)


def forest_kernel(f1, f2, lam, terminal_factor=1.0):
    """Unnormalized forest kernel of two Forests, eqs. (8)-(10) of Zhang et al. (2009) as
    Algorithm 1 walks them: recursively from node pairs, Delta' kept divided by the two
    outside probabilities. Pairs of equal terminals count ``terminal_factor * lam``
    times their outside probabilities (KeLP's leaves; 0 is the paper)."""
    edges = []
    for forest in (f1, f2):
        at = {v: [] for v in range(forest.n_nodes)}
        for head, tails, p in forest.edges:
            at[head].append((tails, p))
        edges.append(at)
    label1 = [label for label, _, _ in f1.nodes]
    label2 = [label for label, _, _ in f2.nodes]
    cache = {}

    def delta(v1, v2):
        """Delta'(v1, v2) / (alpha(v1) alpha(v2)): eq. (8) with eq. (9) inside."""
        if (v1, v2) not in cache:
            total = 0.0
            for tails1, p1 in edges[0][v1]:
                for tails2, p2 in edges[1][v2]:
                    if label1[v1] != label2[v2] or [label1[t] for t in tails1] != [label2[t] for t in tails2]:
                        continue
                    product = 1.0
                    for c1, c2 in zip(tails1, tails2):
                        factor = f1.inside[c1] * f2.inside[c2]
                        if edges[0][c1] and edges[1][c2]:
                            factor += delta(c1, c2)
                        product *= factor
                    total += p1 * p2 * product
            cache[v1, v2] = lam * total
        return cache[v1, v2]

    k = 0.0
    for v1 in range(f1.n_nodes):
        for v2 in range(f2.n_nodes):
            if label1[v1] != label2[v2]:
                continue
            weight = f1.outside[v1] * f2.outside[v2]
            if not edges[0][v1] and not edges[1][v2]:
                k += terminal_factor * lam * weight
            elif edges[0][v1] and edges[1][v2]:
                k += weight * delta(v1, v2)
    return k / (f1.total * f2.total)
