"""Packed forests and the forest kernel (Zhang et al. 2009): the structure, its inside and
outside probabilities, the compiled kernel against the SST kernel, the plain-Python
reference and brute-force enumeration of the forests' trees (eq. 2)."""

import itertools
import math
import pickle
import types

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from random_trees import random_pairs, small_tree
from reference_kernels import Node
from reference_kernels import forest_kernel as reference_forest_kernel

from spacy_convkernels import (
    ForestParseError,
    InvalidForestError,
    InvalidParameterError,
    MissingAnnotationError,
    StructureTypeError,
    Tree,
)
from spacy_convkernels.kernels import ForestKernel, SubsetTreeKernel
from spacy_convkernels.kernels._packing import PackedForests
from spacy_convkernels.structures import DependencyParse, Forest, beam_forests, parse_to_trees

T1 = Tree.from_string("(S (NP (D a) (N b)) (VP (V c) (NP (N d))))")
T2 = Tree.from_string("(S (NP (D a)) (VP (N b) (VP (V c) (NP (N d)))))")
T3 = Tree.from_string("(S (NP (D a) (N b)) (VP (V c) (PP (N d))))")


# --- brute force: every tree of a forest, every fragment of a tree (eq. 2) -------------


def derivations(forest: Forest) -> list:
    """(P(t | f), tree as a Node) for every tree t of the forest (derivations unfolded)."""
    at = {v: [] for v in range(forest.n_nodes)}
    for head, tails, p in forest.edges:
        at[head].append((tails, p))
    memo = {}

    def trees(v):
        if v not in memo:
            label = forest.nodes[v][0]
            if not at[v]:
                memo[v] = [(1.0, Node(label, []))]
            else:
                memo[v] = [
                    (p * math.prod(c[0] for c in combo), Node(label, [c[1] for c in combo]))
                    for tails, p in at[v]
                    for combo in itertools.product(*(trees(t) for t in tails))
                ]
        return memo[v]

    return [(w * p / forest.total, tree) for r, w in forest.roots for p, tree in trees(r)]


def fragments(node) -> list:
    """(fragment, number of productions) of every SST fragment rooted at an internal node;
    a child is cut (its label alone) or, when internal, any fragment rooted at it."""
    if not node.children:
        return []
    options = [[(child.label, 0)] + fragments(child) for child in node.children]
    return [
        ((node.label, tuple(f for f, _ in combo)), 1 + sum(size for _, size in combo))
        for combo in itertools.product(*options)
    ]


def fractional_counts(forest: Forest) -> dict:
    """Feature -> (fractional count, weight exponent): eq. (2), summed over occurrences."""
    counts = {}
    for p, tree in derivations(forest):
        stack = [tree]
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            found = fragments(node) if node.children else [(("leaf", node.label), None)]
            for fragment, size in found:
                count, _ = counts.get(fragment, (0.0, size))
                counts[fragment] = (count + p, size)
    return counts


def brute_force_kernel(f1: Forest, f2: Forest, lam: float, terminal_factor: float = 1.0) -> float:
    """eq. (5): sum over fragments of lam^size * count in f1 * count in f2 (leaves: terminal_factor * lam)."""
    c1, c2 = fractional_counts(f1), fractional_counts(f2)
    total = 0.0
    for fragment, (count, size) in c1.items():
        if fragment in c2:
            weight = terminal_factor * lam if size is None else lam**size
            total += weight * count * c2[fragment][0]
    return total


# --- random forests --------------------------------------------------------------------


@st.composite
def raw_forests(draw):
    """A small forest from the constructor: terminals, then internal nodes with one or two
    hyper-edges over earlier nodes, one or two weighted roots; labels repeat on purpose."""
    n_terminals = draw(st.integers(1, 3))
    n_internal = draw(st.integers(1, 4))
    nodes = [(draw(st.sampled_from("xy")), 0, 0) for _ in range(n_terminals)]
    edges = []
    for head in range(n_terminals, n_terminals + n_internal):
        nodes.append((draw(st.sampled_from("AB")), head, head))
        tails_seen = set()
        for _ in range(draw(st.integers(1, 2))):
            tails = tuple(draw(st.lists(st.integers(0, head - 1), min_size=1, max_size=2)))
            if tails not in tails_seen:
                tails_seen.add(tails)
                edges.append((head, tails, draw(st.floats(0.05, 1.0))))
    internal = list(range(n_terminals, len(nodes)))
    roots = {len(nodes) - 1: draw(st.floats(0.05, 1.0))}
    if draw(st.booleans()):
        roots[draw(st.sampled_from(internal))] = draw(st.floats(0.05, 1.0))
    reachable = set(roots)
    for head, tails, _ in sorted(edges, reverse=True):
        if head in reachable:
            reachable.update(tails)
    keep = sorted(reachable)
    new = {old: i for i, old in enumerate(keep)}
    forest = Forest(
        [nodes[v] for v in keep],
        [(new[h], tuple(new[t] for t in tails), p) for h, tails, p in edges if h in reachable],
        [(new[r], w) for r, w in roots.items()],
    )
    assume(len(derivations(forest)) <= 200)
    return forest


@st.composite
def packed_forests(draw):
    """The forest of 1 to 4 random trees over the same leaves, with random probabilities."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_leaves = draw(st.integers(1, 4))
    pairs = [(small_tree(rng, n_leaves), draw(st.floats(0.05, 1.0))) for _ in range(draw(st.integers(1, 4)))]
    forest = Forest.from_trees(pairs)
    assume(len(derivations(forest)) <= 200)
    return forest, pairs


# --- the structure ----------------------------------------------------------------------


def test_forest_of_two_trees_merges_by_label_and_span():
    forest = Forest.from_trees([(T1, 0.7), (T2, 0.3)])
    shared = {("VP", 2, 3), ("NP", 3, 3), ("N", 3, 3)}
    assert shared <= set(forest.nodes)
    root = forest.nodes.index(("S", 0, 3))
    assert sorted(p for h, _, p in forest.edges if h == root) == [0.3, 0.7]
    assert forest.roots == ((root, 1.0),)
    assert forest.n_edges == 8 + 9 - 6  # the trees' internal nodes, less the 6 hyper-edges they share


def test_nodes_of_a_non_projective_parse_with_equal_spans_stay_apart():
    """ccomp(1) covers tokens 0, 1, 4 and its dependent ccomp(4) tokens 0 and 4 (the arc
    4 -> 0 crosses 1 -> 4): the same label and span [0, 4], two nodes."""
    parse = DependencyParse(
        words=("a", "b", "c", "d", "e"),
        lemmas=("a", "b", "c", "d", "e"),
        tags=("NN", "VB", "VB", "NN", "VB"),
        relations=("nsubj", "ccomp", "root", "dobj", "ccomp"),
        heads=(4, 2, -1, 2, 1),
    )
    forest = Forest.from_parses([(parse, 0.5), (parse, 0.5)])
    assert [node for node in forest.nodes if node[0] == "SYNT##ccomp"] == [("SYNT##ccomp", 0, 4)] * 2
    tree = parse_to_trees(parse, ["grct"])["grct"]
    sst = SubsetTreeKernel()(tree, tree, normalize=False)
    assert ForestKernel()(forest, forest, normalize=False) == pytest.approx(sst, rel=1e-12)
    assert Forest.from_string(str(forest)) == forest


def test_text_form_reads_back_and_forests_pickle():
    forest = Forest.from_trees([(T1, 0.2), (T2, 0.5), (T3, 0.3)])
    again = Forest.from_string(str(forest))
    assert again == forest and hash(again) == hash(forest) and str(again) == str(forest)
    assert pickle.loads(pickle.dumps(forest)) == forest
    assert np.array_equal(again.outside, forest.outside)


def test_forests_are_immutable():
    forest = Forest.from_tree(T1)
    with pytest.raises(AttributeError):
        forest.nodes = ()
    with pytest.raises(ValueError):
        forest.inside[0] = 2.0


@settings(max_examples=60, deadline=None)
@given(raw_forests())
def test_inside_outside_give_the_probability_that_a_tree_holds_a_node(forest):
    trees = derivations(forest)
    assert math.isclose(sum(p for p, _ in trees), 1.0, rel_tol=1e-9)
    # expected occurrences of each node over the (unfolded) trees, by brute force
    expected = np.zeros(forest.n_nodes)
    at = {v: [] for v in range(forest.n_nodes)}
    for head, tails, p in forest.edges:
        at[head].append((tails, p))

    def occurrences(v, weight):  # weight: the probability mass that reaches v
        expected[v] += weight
        for tails, p in at[v]:
            share = weight * p * math.prod(forest.inside[t] for t in tails) / forest.inside[v]
            for t in tails:
                occurrences(t, share)

    for r, w in forest.roots:
        occurrences(r, w * forest.inside[r] / forest.total)
    assert np.allclose(forest.fractional_counts(), expected, rtol=1e-9, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(packed_forests())
def test_packed_trees_give_each_node_the_probability_of_the_trees_holding_it(packed):
    forest, pairs = packed
    total = sum(p for _, p in pairs)
    counts = forest.fractional_counts()
    for v, (label, start, end) in enumerate(forest.nodes):
        terminal = all(h != v for h, _, _ in forest.edges)
        mass = 0.0
        for tree, p in pairs:
            single = Forest.from_tree(tree)
            holds = any(
                node == (label, start, end) and all(h != u for h, _, _ in single.edges) == terminal
                for u, node in enumerate(single.nodes)
            )
            mass += p / total if holds else 0.0
        assert math.isclose(counts[v], mass, rel_tol=1e-9, abs_tol=1e-12)
    assert np.allclose(forest.inside, 1.0)
    for r, weight in forest.roots:  # the probability of the trees rooted there
        rooted = sum(p for tree, p in pairs if Forest.from_tree(tree).nodes[-1] == forest.nodes[r])
        assert math.isclose(weight, rooted / total, rel_tol=1e-9)
    assert math.isclose(sum(w for _, w in forest.roots), 1.0)


# --- the kernel ---------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [0.1, 0.4, 1.0])
def test_forest_of_a_single_tree_gives_the_sst_kernel(lam):
    trees = [tree for pair in random_pairs(7, 25) for tree in pair]
    forests = [Forest.from_tree(tree) for tree in trees]
    sst, forest_kernel = SubsetTreeKernel(lam=lam), ForestKernel(lam=lam)
    np.testing.assert_allclose(forest_kernel.diag(forests), sst.diag(trees), rtol=1e-9)
    np.testing.assert_allclose(forest_kernel.gram(forests, n_jobs=2), sst.gram(trees, n_jobs=2), rtol=1e-9, atol=1e-12)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(raw_forests(), raw_forests(), st.sampled_from([0.3, 1.0]), st.sampled_from([0.0, 1.0]))
def test_dynamic_programme_equals_brute_force_enumeration(f1, f2, lam, terminal_factor):
    expected = brute_force_kernel(f1, f2, lam, terminal_factor)
    reference = reference_forest_kernel(f1, f2, lam, terminal_factor)
    kernel = ForestKernel(lam=lam, terminal_factor=terminal_factor)
    compiled = kernel.pairs([f1, f2], [(0, 1), (1, 0), (0, 0)], normalize=False, n_jobs=1)
    assert math.isclose(reference, expected, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(compiled[0], expected, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(compiled[1], expected, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(compiled[2], brute_force_kernel(f1, f1, lam, terminal_factor), rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(packed_forests(), packed_forests())
def test_packed_forests_equal_brute_force_enumeration(a, b):
    (f1, _), (f2, _) = a, b
    value = ForestKernel(lam=0.5)(f1, f2, normalize=False)
    assert math.isclose(value, brute_force_kernel(f1, f2, 0.5), rel_tol=1e-9, abs_tol=1e-12)


def test_compiled_gram_and_pairs_equal_the_reference_threaded():
    rng = np.random.default_rng(3)
    forests = []
    for _ in range(12):
        n_leaves = int(rng.integers(1, 7))
        pairs = [(small_tree(rng, n_leaves), float(rng.uniform(0.1, 1))) for _ in range(int(rng.integers(1, 6)))]
        forests.append(Forest.from_trees(pairs))
    forests += [Forest.from_tree(tree) for pair in random_pairs(11, 3) for tree in pair]
    kernel = ForestKernel(lam=0.4)
    expected = np.array([[reference_forest_kernel(a, b, 0.4) for b in forests] for a in forests])
    np.testing.assert_allclose(kernel.gram(forests, normalize=False, n_jobs=2), expected, rtol=1e-9)
    np.testing.assert_allclose(kernel.gram(forests[:5], forests, normalize=False, n_jobs=2), expected[:5], rtol=1e-9)
    index = rng.integers(0, len(forests), size=(40, 2))
    np.testing.assert_allclose(
        kernel.pairs(forests, index, normalize=False, n_jobs=2), expected[index[:, 0], index[:, 1]], rtol=1e-9
    )
    norms = np.sqrt(np.diag(expected))
    np.testing.assert_allclose(kernel.gram(forests, n_jobs=2), expected / np.outer(norms, norms), rtol=1e-9)


def test_forest_of_two_parses_is_closer_to_each_than_they_are_to_each_other():
    kernel = ForestKernel(lam=0.4)
    both = Forest.from_trees([(T1, 0.5), (T2, 0.5)])
    one, two = Forest.from_tree(T1), Forest.from_tree(T2)
    assert kernel(both, one) > kernel(one, two) and kernel(both, two) > kernel(one, two)


# --- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "nodes, edges, roots, message",
    [
        ([], [], [(0, 1.0)], "at least one node"),
        ([("a b", 0, 0)], [], [(0, 1.0)], "node 0"),
        ([("a", 2, 1)], [], [(0, 1.0)], "start 2 after its end 1"),
        ([("a", -1, 0)], [], [(0, 1.0)], "span bounds"),
        ([("a", 0, 0), ("B", 0, 0)], [(0, (1,), 1.0)], [(1, 1.0)], "must come before its head"),
        ([("a", 0, 0), ("B", 0, 0)], [(1, (0,), 0.0)], [(1, 1.0)], r"in \(0, 1\]"),
        ([("a", 0, 0), ("B", 0, 0)], [(1, (0,), 1.5)], [(1, 1.0)], r"in \(0, 1\]"),
        ([("a", 0, 0), ("B", 0, 0)], [(1, (0,), float("nan"))], [(1, 1.0)], r"in \(0, 1\]"),
        ([("a", 0, 0), ("B", 0, 0)], [(1, (0,), "x")], [(1, 1.0)], "must be a number"),
        ([("a", 0, 0), ("B", 0, 0)], [(1, (0,), 0.5), (1, (0,), 0.5)], [(1, 1.0)], "appears twice"),
        ([("a", 0, 0), ("B", 0, 0)], [(1, (), 1.0)], [(1, 1.0)], "no tails"),
        ([("a", 0, 0), ("B", 0, 0)], [(1, (0,), 1.0)], [], "at least one root"),
        ([("a", 0, 0), ("B", 0, 0)], [(1, (0,), 1.0)], [(1, 1.0), (1, 0.5)], "at least one root"),
        ([("a", 0, 0), ("B", 0, 0)], [(1, (0,), 1.0)], [(2, 1.0)], "not a node index"),
        ([("a", 0, 0), ("c", 0, 0), ("B", 0, 0)], [(2, (0,), 1.0)], [(2, 1.0)], r"node 1 \(c\[0,0\]\) is not reach"),
        ([("a", 0, 0)], "edges", [(0, 1.0)], "edges must be a sequence"),
    ],
)
def test_bad_forests_raise_invalid_forest_error(nodes, edges, roots, message):
    with pytest.raises(InvalidForestError, match=message):
        Forest(nodes, edges, roots)


def test_bad_tree_lists_raise_invalid_forest_error():
    with pytest.raises(InvalidForestError, match="at least one tree"):
        Forest.from_trees([])
    with pytest.raises(InvalidForestError, match="item 1 of the trees"):
        Forest.from_trees([(T1, 0.5), (T2, -1.0)])
    with pytest.raises(InvalidForestError, match=r"\(Tree, probability\) pair"):
        Forest.from_trees([("(S (a))", 1.0)])
    with pytest.raises(InvalidForestError, match="tree 0: nodes 0 and 1 are both X"):
        Forest.from_trees([(Tree.from_string("(X (X a))"), 1.0)])
    with pytest.raises(InvalidForestError, match="cycle"):
        Forest.from_trees([(Tree.from_string("(X (Y a))"), 0.5), (Tree.from_string("(Y (X a))"), 0.5)])
    with pytest.raises(InvalidForestError, match="expects a Tree"):
        Forest.from_tree("(S (a))")
    with pytest.raises(InvalidForestError, match="3 spans for 2 nodes"):
        Forest.from_tree(Tree.from_string("(S a)"), spans=[(0, 0)] * 3)
    with pytest.raises(InvalidForestError, match="parse 0 has no tokens"):
        Forest.from_parses([(DependencyParse((), (), (), (), ()), 1.0)])
    with pytest.raises(InvalidForestError, match="unknown representation"):
        Forest.from_parses([], representation="xyz")


@pytest.mark.parametrize(
    "text, message, position",
    [
        ("(ROOTS 0:1.0) (a 0", "unexpected end", 18),
        ("(ROOTS x) (a 0 0)", "expected node:weight", 7),
        ("(ROOTS 0:1.0) (a 0 z)", "expected an integer", 19),
        ("(ROOTS 0:1.0) (a 0 0) junk", "expected '\\('", 22),
        ("(ROOTS 0:1.0) (a 0 0) (B 0 0 (w 0))", "expected a number", 30),
        ("(ROOTS 0:1.0) (a 0 0 x)", "expected '\\(' or '\\)'", 21),
        ("ROOTS", "expected '\\('", 0),
    ],
)
def test_bad_forest_strings_raise_forest_parse_error_with_the_position(text, message, position):
    with pytest.raises(ForestParseError, match=message) as caught:
        Forest.from_string(text)
    assert caught.value.position == position


def test_forest_strings_of_bad_forests_raise_invalid_forest_error():
    with pytest.raises(InvalidForestError, match="must come before its head"):
        Forest.from_string("(ROOTS 0:1.0) (B 0 0 (1.0 1)) (a 0 0)")


def test_forest_kernel_refuses_trees_and_bad_parameters():
    with pytest.raises(StructureTypeError, match="ForestKernel compares Forest objects; item 0 is Tree"):
        ForestKernel().gram([T1])
    with pytest.raises(InvalidParameterError, match="lam"):
        ForestKernel(lam=0).gram([Forest.from_tree(T1)])
    with pytest.raises(InvalidParameterError, match="terminal_factor"):
        ForestKernel(terminal_factor=-1).gram([Forest.from_tree(T1)])


def test_packing_refuses_inconsistent_compiled_forests():
    good = Forest.from_trees([(T1, 0.5), (T2, 0.5)]).compiled

    def broken(**changes):
        fake = types.SimpleNamespace(**{name: getattr(good, name) for name in good.__slots__})
        for name, value in changes.items():
            setattr(fake, name, value)
        return fake

    tails = good.tail_idx.copy()
    tails[0] = good.n_nodes - 1
    cases = {
        "every tail must come before its head": broken(tail_idx=tails),
        "sorted by head": broken(edge_head=good.edge_head[::-1].copy()),
        "Z must be finite and positive": broken(total=0.0),
        "node order must be a permutation": broken(by_label=np.zeros(good.n_nodes, dtype=np.int32)),
        "hyper-edge probabilities": broken(edge_prob=-good.edge_prob),
        "terminal exactly when": broken(terminal=np.zeros(good.n_nodes, dtype=np.int32)),
        "entries, not": broken(inside=good.inside[:-1]),
    }
    for message, fake in cases.items():
        with pytest.raises(InvalidParameterError, match=message):
            PackedForests([good, fake])


# --- the md parser's beam -------------------------------------------------------------------


@pytest.fixture(scope="module")
def md(md_model):
    import spacy

    return spacy.load(md_model)


SENTENCES = [
    "What is the fastest car in the world? ...",
    "Who wrote the book about the man with the telescope?",
    "How many people live in the capital of France? Name the river.",
]


def test_beam_forests_are_deterministic_for_a_beam_width(md):
    parser = md.get_pipe("parser")
    docs = list(md.pipe(SENTENCES))
    first = beam_forests(parser, docs, k=4, beam_width=8)
    again = beam_forests(parser, list(md.pipe(SENTENCES)), k=4, beam_width=8)
    assert [[str(f) for f in doc] for doc in first] == [[str(f) for f in doc] for doc in again]
    assert [len(doc) for doc in first] == [len(list(doc.sents)) for doc in docs]
    single = beam_forests(parser, docs, k=1, beam_width=8)
    assert [[f is None for f in doc] for doc in first] == [
        [not any(t.dep_ != "punct" for t in s) for s in doc.sents] for doc in docs
    ]  # a sentence of punctuation alone has no forest
    for one_best, packed in zip(*(filter(None, itertools.chain(*f)) for f in (single, first))):
        assert np.allclose(one_best.fractional_counts(), 1.0)  # one tree: every node in it
        assert packed.n_edges >= one_best.n_edges
        (root, _), *more = packed.roots
        assert not more and math.isclose(packed.fractional_counts()[root], 1.0)
        assert packed.nodes[root][0] == "SYNT##root"
    assert any(f.n_edges > g.n_edges for f, g in zip(*(filter(None, itertools.chain(*f)) for f in (first, single))))
    with pytest.raises(InvalidForestError, match="cannot exceed beam_width"):
        beam_forests(parser, docs, k=9, beam_width=8)
    with pytest.raises(InvalidForestError, match="temperature must be a number > 0"):
        beam_forests(parser, docs, k=2, beam_width=8, temperature=0)


def test_beam_temperature_flattens_the_parse_weights(md):
    parser = md.get_pipe("parser")
    docs = list(md.pipe(SENTENCES))
    beam = beam_forests(parser, docs, k=4, beam_width=8)
    uniform = beam_forests(parser, docs, k=4, beam_width=8, temperature=math.inf)
    for sharp, flat in zip(*(filter(None, itertools.chain(*f)) for f in (beam, uniform))):
        assert sharp.nodes == flat.nodes  # the same parses, weighed differently
        # weighed alike, a node's fractional count is the share of the m <= k parses that hold it
        counts = flat.fractional_counts()
        assert any(np.allclose(counts * m, np.round(counts * m), atol=1e-9) for m in range(1, 5))
    assert any(
        not np.allclose(f.fractional_counts(), g.fractional_counts())
        for f, g in zip(*map(itertools.chain.from_iterable, (beam, uniform)))
    )


# --- everywhere a tree kernel goes ------------------------------------------------------------


def test_nystroem_and_klsh_take_the_forest_kernel():
    from spacy_convkernels.approx import KLSH, Nystroem

    rng = np.random.default_rng(5)
    forests = [
        Forest.from_trees([(small_tree(rng, 4), float(rng.uniform(0.1, 1))) for _ in range(int(rng.integers(1, 4)))])
        for _ in range(30)
    ]
    kernel = ForestKernel(lam=0.4)
    nystroem = Nystroem(kernel, n_components=30, random_state=0).fit(forests)
    vectors = nystroem.transform(forests)
    np.testing.assert_allclose(vectors @ vectors.T, kernel.gram(forests), atol=1e-6)  # all landmarks: exact
    codes = KLSH(kernel, n_references=20, n_bits=16, subset_size=5, random_state=0).fit(forests).transform(forests)
    assert codes.shape[0] == 30


def test_the_forest_kernel_is_registered_for_configs():
    from confection import Config
    from spacy.util import registry

    import spacy_convkernels.components.registered_kernels  # noqa: F401  (as the entry points do once installed)

    config = Config().from_str('[kernel]\n@misc = "spacy_convkernels.ForestKernel.v1"\nlam = 0.3\n')
    kernel = registry.resolve(config)["kernel"]
    assert isinstance(kernel, ForestKernel)
    assert kernel.get_params() == {"lam": 0.3, "terminal_factor": 1.0, "max_work": 10**8}


@pytest.fixture(scope="module")
def md_forests(md):
    md.add_pipe("kernel_forests", config={"k": 2, "beam_width": 4})
    yield md
    md.remove_pipe("kernel_forests")


def test_kernel_forests_component_writes_each_sentence_forest(md_forests):
    from spacy.tokens import DocBin

    docs = list(md_forests.pipe(SENTENCES))
    parser = md_forests.get_pipe("parser")
    expected = beam_forests(parser, docs, k=2, beam_width=4)
    for doc, forests in zip(docs, expected):
        sentences = list(doc.sents)
        assert [s._.kernel_forest for s in sentences] == [str(f) if f else "" for f in forests]
        assert all(not f or Forest.from_string(s._.kernel_forest) == f for s, f in zip(sentences, forests))
    stored = DocBin(store_user_data=True, docs=docs).to_bytes()
    back = list(DocBin().from_bytes(stored).get_docs(md_forests.vocab))
    assert [[s._.kernel_forest for s in d.sents] for d in back] == [[s._.kernel_forest for s in d.sents] for d in docs]


def test_kernel_forests_gives_a_failing_doc_to_the_error_handler(md_forests):
    from spacy.util import raise_error

    component = md_forests.get_pipe("kernel_forests")
    with md_forests.select_pipes(disable=["kernel_forests"]):
        first, second = md_forests.pipe(SENTENCES[:2])
    unparsed = md_forests.make_doc("No parse here")
    failures = []
    component.set_error_handler(lambda *given: failures.append(given))
    try:
        out = list(component.pipe([first, unparsed, second], batch_size=3))
    finally:
        component.set_error_handler(raise_error)
    assert [id(doc) for doc in out] == [id(first), id(second)]
    assert [[id(doc) for doc in failed] for _, _, failed, _ in failures] == [[id(unparsed)]]
    assert all(sentence._.kernel_forest is not None for doc in out for sentence in doc.sents)


def test_kernel_forests_settings_are_checked(md):
    import spacy_convkernels.components.kernel_forests  # noqa: F401

    with pytest.raises(InvalidParameterError, match=r"bad: k must be an integer in \[1, beam_width=4\], got 5"):
        md.add_pipe("kernel_forests", name="bad", config={"k": 5, "beam_width": 4})
    md.add_pipe("kernel_forests", name="lost", config={"parser": "nope"})
    try:
        with pytest.raises(MissingAnnotationError, match="no component 'nope'"):
            md("A question?")
    finally:
        md.remove_pipe("lost")


def test_kernel_vectors_with_the_forest_kernel(md_forests):
    from spacy.training import Example

    md_forests.add_pipe(
        "kernel_vectors",
        config={"n_components": 4, "kernel": {"@misc": "spacy_convkernels.ForestKernel.v1", "lam": 0.4}},
    )
    try:
        component = md_forests.get_pipe("kernel_vectors")
        examples = [Example(md_forests.make_doc(t), md_forests.make_doc(t)) for t in SENTENCES]
        component.initialize(lambda: examples, nlp=md_forests)
        assert all(isinstance(x, Forest) for x in component.model.components_)
        doc = md_forests("What is the longest river in Europe?")
        assert doc._.kernel_vector.shape == (4,)
        (sentence,) = doc.sents
        forest = Forest.from_string(sentence._.kernel_forest)
        np.testing.assert_allclose(sentence._.kernel_vector, component.model.transform([forest])[0], rtol=1e-6)
        restored = component.from_bytes(component.to_bytes())
        assert restored.model.components_ == component.model.components_
    finally:
        md_forests.remove_pipe("kernel_vectors")
