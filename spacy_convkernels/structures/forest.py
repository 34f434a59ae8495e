"""Packed forests of parse trees (Zhang et al. 2009, §3.1), and how to build them.

A forest F = <V, E> holds labelled nodes with spans, ``label[start,end]``, and
hyper-edges: a head node, its tail (child) nodes in order, and a probability P(e). A
node with no hyper-edge is a terminal (a leaf of the trees). The forest's trees are its
derivations: from a root, one hyper-edge at each node reached; a tree's probability is
its root's weight times the product of its hyper-edges' probabilities. The inside
probability beta(v) sums the derivations below v (1 for a terminal), the outside
probability alpha(v) the rest of the trees around v; alpha(v) beta(v) / Z, with Z the
inside probability of the roots, is the probability that a tree of the forest contains
v (its fractional count, eq. 3).

Forests are built from a single tree, from (tree, probability) pairs and from the k-best
parses of a spaCy parser's beam. Several trees are packed by merging their nodes by
(label, span, terminal or not), the span of a parse's node being the tokens it covers
(non-projective parses can cover the same first and last token with different tokens in
between; those nodes stay apart, with equal spans), and each hyper-edge gets the probability of its head
choosing it: the probability of the trees that hold the hyper-edge divided by that of the
trees that hold its head. The inside probability of every node is then 1 and each node's
fractional count is the probability of the trees that hold it.
"""

import math
import re
from collections.abc import Iterable, Sequence
from typing import NoReturn

import numpy as np

from ..errors import ForestParseError, InvalidForestError, InvalidTreeError
from ._dependency import tour
from .dependency import ENTER, MIDDLE, REPRESENTATIONS, DependencyParse, parse_to_trees, span_to_parse
from .interning import LABELS, PRODUCTIONS
from .tree import Tree, check_label

_TOKEN = re.compile(r"\(|\)|[^\s()]+|\s+")
_ROOT = re.compile(r"(\d+):(\S+)")

# per representation: whether a token's POS(LEX) sits among its dependents, and how many leaves follow them
_SHAPES = {"grct": (True, 0), "cgrct": (True, 0), "lct": (False, 2), "loct": (False, 0), "clct": (False, 3)}


SMALLEST_TOTAL = 1e-150  # Z of two forests multiplied stays a normal float64


class Forest:
    """An immutable packed forest of labelled nodes with spans and weighted hyper-edges.

    Parameters
    ----------
    nodes : sequence of (str, int, int)
        Each node's label and span ``(label, start, end)``, 0 <= start <= end, in
        bottom-up order: every node after the tails of its hyper-edges.
    edges : sequence of (int, sequence of int, float)
        Each hyper-edge ``(head, tails, probability)``: node indices, every tail before
        its head, and a probability in (0, 1].
    roots : sequence of (int, float)
        The nodes the trees start from, each with a weight in (0, 1].

    Every node must be reachable from a root. ``str(forest)`` writes the text form
    ``(ROOTS node:weight ...) (label start end (probability tail ...) ...) ...``, one
    group per node in order, and :meth:`from_string` reads it back. Forests pickle, and
    compare and hash by nodes, hyper-edges and roots.

    Attributes
    ----------
    nodes, edges, roots : tuple
        As given, hyper-edges sorted by head (stably).
    inside, outside : numpy.ndarray
        beta(v) and alpha(v) of each node (read-only).
    total : float
        Z, the inside probability of the roots: sum of weight(r) beta(r).
    compiled : CompiledForest
        The form the engine reads, made on first use.
    """

    __slots__ = ("_nodes", "_edges", "_roots", "_inside", "_outside", "_total", "_text", "_hash", "_compiled")
    _nodes: tuple[tuple[str, int, int], ...]
    _edges: tuple[tuple[int, tuple[int, ...], float], ...]
    _roots: tuple[tuple[int, float], ...]
    _inside: np.ndarray
    _outside: np.ndarray
    _total: float
    _text: str | None
    _hash: int | None
    _compiled: "CompiledForest | None"

    def __init__(self, nodes: Sequence, edges: Sequence, roots: Sequence):
        nodes = tuple(_check_node(k, node) for k, node in enumerate(_sequence(nodes, "nodes")))
        if not nodes:
            raise InvalidForestError("a forest needs at least one node")
        edges = tuple(_check_edge(k, edge, len(nodes)) for k, edge in enumerate(_sequence(edges, "edges")))
        edges = tuple(sorted(edges, key=lambda e: e[0]))
        if len(set((h, t) for h, t, _ in edges)) != len(edges):
            raise InvalidForestError("a hyper-edge (head and tails) appears twice")
        roots = tuple(sorted(_check_root(k, root, len(nodes)) for k, root in enumerate(_sequence(roots, "roots"))))
        if not roots or len({r for r, _ in roots}) != len(roots):
            raise InvalidForestError("a forest needs at least one root, each node a root at most once")
        reachable = np.zeros(len(nodes), dtype=bool)
        reachable[[r for r, _ in roots]] = True
        for head, tails, _ in reversed(edges):
            if reachable[head]:
                reachable[list(tails)] = True
        if not reachable.all():
            lost = int(np.argmin(reachable))
            raise InvalidForestError(f"node {lost} ({_name(nodes[lost])}) is not reachable from a root")
        set_ = object.__setattr__
        set_(self, "_nodes", nodes)
        set_(self, "_edges", edges)
        set_(self, "_roots", roots)
        set_(self, "_text", None)
        set_(self, "_hash", None)
        set_(self, "_compiled", None)
        self._inside_outside()

    def _inside_outside(self):
        n = len(self._nodes)
        inside = np.ones(n)
        has_edges = np.zeros(n, dtype=bool)
        for head, tails, p in self._edges:
            if not has_edges[head]:
                has_edges[head] = True
                inside[head] = 0.0
            inside[head] += p * math.prod(inside[t] for t in tails)
        outside = np.zeros(n)
        for r, w in self._roots:
            outside[r] = w
        for head, tails, p in reversed(self._edges):
            for j, t in enumerate(tails):
                outside[t] += outside[head] * p * math.prod(inside[u] for i, u in enumerate(tails) if i != j)
        total = math.fsum(w * inside[r] for r, w in self._roots)
        if not total > 0 or not math.isfinite(total):
            raise InvalidForestError(f"the inside probability of the roots is {total!r}; it must be positive")
        if total < SMALLEST_TOTAL:
            raise InvalidForestError(
                f"the inside probability of the roots is {total:.3g}, below {SMALLEST_TOTAL:g}: the forest kernel "
                "divides by the product of two forests' Z, which would underflow; scale the root weights up "
                "(the fractional counts do not change when every root weight is multiplied by one factor)"
            )
        inside.flags.writeable = False
        outside.flags.writeable = False
        object.__setattr__(self, "_inside", inside)
        object.__setattr__(self, "_outside", outside)
        object.__setattr__(self, "_total", total)

    @classmethod
    def from_tree(cls, tree: Tree, spans: Sequence[tuple[int, int]] | None = None) -> "Forest":
        """The forest of one tree: a node per tree node, a hyper-edge of probability 1 per
        internal node. ``spans`` (per preorder node) default to the leaf positions covered."""
        if not isinstance(tree, Tree):
            raise InvalidForestError(f"Forest.from_tree expects a Tree, got {type(tree).__name__}")
        spans = _leaf_spans(tree) if spans is None else _check_spans(spans, tree, 0)
        n = tree.n_nodes
        nodes: list[tuple[str, int, int] | None] = [None] * n
        for i in range(n):  # reversed preorder: children before parents
            nodes[n - 1 - i] = (tree.labels[i], *spans[i])
        children: list[list[int]] = [[] for _ in range(n)]
        for i, p in enumerate(tree.parents[1:], start=1):
            children[p].append(n - 1 - i)
        edges = [(n - 1 - i, tuple(kids), 1.0) for i, kids in enumerate(children) if kids]
        return cls(nodes, edges, [(n - 1, 1.0)])

    @classmethod
    def from_trees(cls, pairs: Iterable[tuple[Tree, float]]) -> "Forest":
        """The packed forest of (tree, probability) pairs (probabilities > 0, normalized to
        sum 1), nodes merged by label and span (the leaf positions covered), see the module
        docstring."""
        items = []
        for tree, p in _pairs(pairs, Tree, "trees"):
            spans = _leaf_spans(tree)
            items.append((tree, p, spans, spans))
        return _merge(cls, items)

    @classmethod
    def from_parses(cls, pairs: Iterable[tuple[DependencyParse, float]], representation: str = "grct") -> "Forest":
        """The packed forest of (dependency parse, probability) pairs of one sentence, each
        converted to ``representation`` (GRCT, LCT, ...), nodes merged by label and token
        span (a token's node spans the tokens it governs, its POS and LEX nodes the token)."""
        if representation not in REPRESENTATIONS:
            raise InvalidForestError(f"unknown representation {representation!r}; known: {', '.join(REPRESENTATIONS)}")
        items = []
        for k, (parse, probability) in enumerate(_pairs(pairs, DependencyParse, "parses")):
            tree = parse_to_trees(parse, [representation])[representation]
            if tree is None:
                raise InvalidForestError(f"parse {k} has no tokens")
            items.append((tree, probability, *_token_spans(parse, representation, tree)))
        return _merge(cls, items)

    @classmethod
    def from_string(cls, text: str) -> "Forest":
        """Read the text form of ``str(forest)``; raises :class:`ForestParseError` with the
        offending position."""
        if not isinstance(text, str):
            raise InvalidForestError(f"Forest.from_string expects a str, got {type(text).__name__}")
        tokens = [(m.start(), m.group()) for m in _TOKEN.finditer(text) if not m.group().isspace()]
        k = 0

        def fail(message: str) -> NoReturn:
            raise ForestParseError(message, text, tokens[k][0] if k < len(tokens) else len(text))

        def take(expected=None):
            nonlocal k
            if k >= len(tokens):
                fail("unexpected end of the forest string")
            token = tokens[k][1]
            if expected is not None and token != expected:
                fail(f"expected {expected!r}")
            k += 1
            return token

        def number(kind):
            if k >= len(tokens):
                fail("unexpected end of the forest string")
            try:
                value = kind(tokens[k][1])
            except ValueError:
                value = None
            if value is None:
                fail(f"expected {'an integer' if kind is int else 'a number'}")
            take()
            return value

        take("(")
        take("ROOTS")
        roots = []
        while k < len(tokens) and tokens[k][1] != ")":
            match = _ROOT.fullmatch(tokens[k][1])
            if match is None:
                fail("expected node:weight")
            try:
                roots.append((int(match.group(1)), float(match.group(2))))
            except ValueError:
                fail("expected node:weight")
            take()
        take(")")
        nodes, edges = [], []
        while k < len(tokens):
            take("(")
            label = take()
            if label in "()":
                k -= 1
                fail("node without a label")
            start = number(int)
            end = number(int)
            nodes.append((label, start, end))
            while take() == "(":
                probability = number(float)
                tails = []
                while k < len(tokens) and tokens[k][1] != ")":
                    tails.append(number(int))
                take(")")
                edges.append((len(nodes) - 1, tails, probability))
            if tokens[k - 1][1] != ")":
                k -= 1
                fail("expected '(' or ')'")
        return cls(nodes, edges, roots)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("Forest is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("Forest is immutable")

    @property
    def nodes(self) -> tuple:
        return self._nodes

    @property
    def edges(self) -> tuple:
        return self._edges

    @property
    def roots(self) -> tuple:
        return self._roots

    @property
    def n_nodes(self) -> int:
        return len(self._nodes)

    @property
    def n_edges(self) -> int:
        return len(self._edges)

    @property
    def inside(self) -> np.ndarray:
        return self._inside

    @property
    def outside(self) -> np.ndarray:
        return self._outside

    @property
    def total(self) -> float:
        return self._total

    def fractional_counts(self) -> np.ndarray:
        """alpha(v) beta(v) / Z per node: the probability that a tree of the forest holds v."""
        return self._outside * self._inside / self._total

    def __str__(self) -> str:
        text = self._text
        if text is None:
            groups = [[f"({label} {start} {end}"] for label, start, end in self._nodes]
            for head, tails, p in self._edges:
                groups[head].append(f" ({p!r}{''.join(f' {t}' for t in tails)})")
            roots = " ".join(f"{r}:{w!r}" for r, w in self._roots)
            text = f"(ROOTS {roots}) " + " ".join("".join(group) + ")" for group in groups)
            object.__setattr__(self, "_text", text)
        return text

    def __repr__(self) -> str:
        return f"Forest({self.n_nodes} nodes, {self.n_edges} hyper-edges, {len(self._roots)} roots)"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Forest):
            return NotImplemented
        return self._nodes == other._nodes and self._edges == other._edges and self._roots == other._roots

    def __hash__(self) -> int:
        value = self._hash
        if value is None:
            value = hash((self._nodes, self._edges, self._roots))
            object.__setattr__(self, "_hash", value)
        return value

    def __reduce__(self):
        return (Forest, (self._nodes, self._edges, self._roots))

    @property
    def compiled(self) -> "CompiledForest":
        compiled = self._compiled
        if compiled is None:
            compiled = CompiledForest(self)
            object.__setattr__(self, "_compiled", compiled)
        return compiled


class CompiledForest:
    """A forest as flat arrays, the form the compiled engine consumes.

    - ``labels``: interned node labels; ``terminal``: 1 for a node without hyper-edges;
      ``by_label``/``rank_by_label``: nodes sorted by label id and the inverse;
    - ``inside``, ``outside``, ``total``: beta, alpha and Z;
    - ``edge_head``, ``edge_prob``: each hyper-edge's head and probability, sorted by head;
      ``tail_ptr``/``tail_idx``: its tails in CSR form;
    - ``productions``: interned (head label, tail labels), the same ids as tree productions;
      ``by_production``: hyper-edges sorted by production id;
    - ``self_kernels``: K(forest, forest) by kernel configuration, filled by the kernels.
    """

    __slots__ = (
        "n_nodes",
        "n_edges",
        "labels",
        "terminal",
        "by_label",
        "rank_by_label",
        "inside",
        "outside",
        "total",
        "edge_head",
        "edge_prob",
        "tail_ptr",
        "tail_idx",
        "productions",
        "by_production",
        "self_kernels",
        "_leases",
    )

    def __init__(self, forest: Forest):
        label_lease = LABELS.lease(label for label, _, _ in forest.nodes)
        label_ids = label_lease.ids.tolist()
        self.n_nodes = forest.n_nodes
        self.n_edges = forest.n_edges
        self.labels = label_lease.ids
        self.terminal = np.ones(self.n_nodes, dtype=np.int32)
        self.terminal[[h for h, _, _ in forest.edges]] = 0
        self.by_label = np.argsort(self.labels, kind="stable").astype(np.int32)
        self.rank_by_label = np.empty_like(self.by_label)
        self.rank_by_label[self.by_label] = np.arange(self.n_nodes, dtype=np.int32)
        self.inside = np.asarray(forest.inside, dtype=np.float64)
        self.outside = np.asarray(forest.outside, dtype=np.float64)
        self.total = float(forest.total)
        self.edge_head = np.asarray([h for h, _, _ in forest.edges], dtype=np.int32)
        self.edge_prob = np.asarray([p for _, _, p in forest.edges], dtype=np.float64)
        self.tail_ptr = np.zeros(self.n_edges + 1, dtype=np.int64)
        np.cumsum([len(t) for _, t, _ in forest.edges], out=self.tail_ptr[1:])
        self.tail_idx = np.asarray([t for _, tails, _ in forest.edges for t in tails], dtype=np.int32)
        production_lease = PRODUCTIONS.lease(
            (label_ids[h], *(label_ids[t] for t in tails)) for h, tails, _ in forest.edges
        )
        self.productions = production_lease.ids
        self._leases = (label_lease, production_lease)  # the ids stay ours while this lives
        self.by_production = np.argsort(self.productions, kind="stable").astype(np.int32)
        self.self_kernels: dict = {}


def beam_forests(
    parser,
    docs: Sequence,
    *,
    k: int,
    beam_width: int,
    representation: str = "grct",
    temperature: float = 1.0,
    lowercase: bool = True,
    collapse_prepositions: bool = True,
) -> list[list[Forest | None]]:
    """Per Doc, per sentence (``doc.sents``), the forest of the ``k`` most probable parses
    in the beam of width ``beam_width`` of a spaCy dependency parser, each converted to
    ``representation`` (options as :func:`~spacy_convkernels.structures.span_to_parse`).

    A parse weighs its beam probability p to the power 1 / ``temperature``, renormalized
    over the k: 1 keeps the beam's probabilities (often close to 1 for the best parse and
    1e-15 for the others), ``math.inf`` weighs the k parses equally; a parse of weight 0
    (underflow) is left out, and so is a parse that leaves nothing of a sentence
    (punctuation only); a sentence left with no parse gets None.

    The Docs must have been through the pipeline up to the parser (the parser reads the
    shared tok2vec's ``doc.tensor``), with tags and lemmas. Beam parses are applied to
    copies of the Docs and post-processed as the parser does (pseudo-projective labels
    resolved)."""
    from spacy.attrs import DEP, HEAD

    for name, value, low in (("k", k, 1), ("beam_width", beam_width, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise InvalidForestError(f"{name} must be an integer >= {low}, got {value!r}")
    if k > beam_width:
        raise InvalidForestError(f"k ({k}) cannot exceed beam_width ({beam_width})")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature > 0:
        raise InvalidForestError(f"temperature must be a number > 0 (math.inf allowed), got {temperature!r}")
    docs = list(docs)
    options = {"lowercase": lowercase, "collapse_prepositions": collapse_prepositions}
    beams = parser.beam_parse(docs, beam_width=beam_width)
    out = []
    for doc, beam in zip(docs, beams):
        scored = sorted(parser.moves.get_beam_parses(beam), key=lambda item: -item[0])[:k]
        top = scored[0][0] if scored else 0.0
        weighted = (
            [(math.exp((math.log(p) - math.log(top)) / temperature) if p > 0 else 0.0, arcs) for p, arcs in scored]
            if top > 0
            else []
        )
        copies = []
        for probability, arcs in weighted:
            if probability == 0:
                continue
            heads = np.zeros(len(doc), dtype=np.uint64)
            deps = np.full(len(doc), doc.vocab.strings.add("ROOT"), dtype=np.uint64)
            for head, child, label in arcs:
                heads[child] = np.array(head - child).astype(np.uint64)
                deps[child] = doc.vocab.strings.add(label)
            copy = doc.copy()
            copy.from_array([HEAD, DEP], np.stack([heads, deps], axis=1))
            for hook in parser.postprocesses:
                hook(copy)
            copies.append((copy, probability))
        if not copies:
            raise InvalidForestError(f"the parser's beam holds no finished parse for the Doc {doc.text[:40]!r}")
        forests = []
        for sentence in doc.sents:
            parses = [
                (span_to_parse(copy[sentence.start : sentence.end], **options), probability)
                for copy, probability in copies
            ]
            parses = [(parse, p) for parse, p in parses if parse.heads]  # punctuation only: nothing left
            forests.append(Forest.from_parses(parses, representation) if parses else None)
        out.append(forests)
    return out


def _merge(cls, items: list) -> Forest:
    """Pack (tree, probability, spans, covered) items, nodes merged by label, what they cover
    and whether they are terminals: the module docstring's construction."""
    norm = math.fsum(item[1] for item in items)
    if not items or not norm > 0 or not math.isfinite(norm):
        raise InvalidForestError("a forest needs at least one tree, with probabilities summing to a positive number")
    node_mass: dict[tuple, float] = {}
    edge_mass: dict[tuple, float] = {}
    root_mass: dict[tuple, float] = {}
    # key -> (label, start, end); insertion order: first appearance
    order: dict[tuple, tuple[str, int, int]] = {}
    structure: dict[tuple, list[tuple]] = {}  # key -> list of tail-key tuples, in first-appearance order
    first_root: list[tuple] = []
    for k, (tree, probability, spans, covered) in enumerate(items):
        p = probability / norm
        keys = []
        children: list[list[int]] = [[] for _ in range(tree.n_nodes)]
        for i, parent in enumerate(tree.parents[1:], start=1):
            children[parent].append(i)
        seen: dict[tuple, int] = {}
        for i, label in enumerate(tree.labels):
            key = (label, covered[i], not children[i])
            if key in seen:
                raise InvalidForestError(
                    f"tree {k}: nodes {seen[key]} and {i} are both {_name((label, *spans[i]))}; "
                    "a forest merges nodes by label and span, so a tree holds each at most once"
                )
            seen[key] = i
            keys.append(key)
            order.setdefault(key, (label, *spans[i]))
            node_mass[key] = node_mass.get(key, 0.0) + p
        for i, kids in enumerate(children):
            if kids:
                edge = (keys[i], tuple(keys[c] for c in kids))
                if edge not in edge_mass:
                    structure.setdefault(keys[i], []).append(edge[1])
                edge_mass[edge] = edge_mass.get(edge, 0.0) + p
        if keys[0] not in root_mass:
            first_root.append(keys[0])
        root_mass[keys[0]] = root_mass.get(keys[0], 0.0) + p
    index = _bottom_up(first_root, structure)
    nodes: list[tuple[str, int, int] | None] = [None] * len(index)
    for key, i in index.items():
        nodes[i] = order[key]
    edges = [
        (index[head], tuple(index[t] for t in tails), min(1.0, edge_mass[(head, tails)] / node_mass[head]))
        for head, all_tails in structure.items()
        for tails in all_tails
    ]
    roots = [(index[key], min(1.0, root_mass[key])) for key in first_root]
    return cls(nodes, edges, roots)


def _bottom_up(roots: list, structure: dict) -> dict:
    """Node key -> index, tails before heads (depth-first post-order from the roots, in
    first-appearance order); raises :class:`InvalidForestError` on a cycle."""
    index: dict[tuple, int] = {}
    on_path: set[tuple] = set()
    for root in roots:
        if root in index:
            continue
        stack = [(root, iter([t for tails in structure.get(root, ()) for t in tails]))]
        on_path.add(root)
        while stack:
            key, pending = stack[-1]
            for child in pending:
                if child in on_path:
                    raise InvalidForestError(
                        f"the trees make a cycle through {child[0]} over {child[1]}: merged by label "
                        "and span, a node would lie below itself"
                    )
                if child not in index:
                    on_path.add(child)
                    stack.append((child, iter([t for tails in structure.get(child, ()) for t in tails])))
                    break
            else:
                stack.pop()
                on_path.discard(key)
                index[key] = len(index)
    return index


def _leaf_spans(tree: Tree) -> list[tuple[int, int]]:
    """Per preorder node, the first and last leaf position it covers."""
    n = tree.n_nodes
    is_leaf = [True] * n
    for p in tree.parents[1:]:
        is_leaf[p] = False
    before = np.concatenate([[0], np.cumsum(is_leaf)])  # leaves before each preorder index
    sizes = tree._subtree_sizes()
    return [(int(before[i]), int(before[i + sizes[i]]) - 1) for i in range(n)]


def _token_spans(parse: DependencyParse, representation: str, tree: Tree) -> tuple[list, list]:
    """Per preorder node of ``tree`` (``parse`` in ``representation``): its span, the first
    and last raw token positions it covers, and the positions themselves (a token's node
    covers its own and its dependents' tokens, a leaf of a token that token). Nodes merge
    by the positions, so that the nodes of a non-projective parse stay apart even where
    their spans coincide."""
    pos_lex_inside, n_tail = _SHAPES[representation]
    tokens = []
    for event, t in tour(parse.heads):  # the walk the trees are emitted along, node by node
        if event == ENTER:
            tokens.append(t)
        elif event == MIDDLE:
            tokens.extend([t, t] if pos_lex_inside else [])
        else:
            tokens.extend([t] * n_tail)
    positions = parse.positions or tuple(range(len(parse.heads)))
    covered = [{positions[t]} for t in tokens]
    for i in range(len(covered) - 1, 0, -1):
        covered[tree.parents[i]] |= covered[i]
    return [(min(c), max(c)) for c in covered], [tuple(sorted(c)) for c in covered]


def _check_spans(spans, tree: Tree, k: int) -> list[tuple[int, int]]:
    spans = list(_sequence(spans, "spans"))
    if len(spans) != tree.n_nodes:
        raise InvalidForestError(f"tree {k}: {len(spans)} spans for {tree.n_nodes} nodes")
    return [_check_node(i, ("x", *span))[1:] for i, span in enumerate(spans)]


def _pairs(pairs, kind: type, what: str):
    for k, pair in enumerate(_sequence(pairs, what)):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not isinstance(pair[0], kind):
            raise InvalidForestError(f"item {k} of the {what} must be a ({kind.__name__}, probability) pair")
        yield pair[0], _probability(pair[1], f"item {k} of the {what}", upper=math.inf)


def _sequence(value, what: str):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InvalidForestError(f"{what} must be a sequence, got {type(value).__name__}")
    return value


def _probability(value, where: str, upper: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidForestError(f"{where}: the probability must be a number, got {value!r}")
    value = float(value)
    if not (0 < value <= upper and math.isfinite(value)):
        raise InvalidForestError(f"{where}: the probability must be in (0, {upper:g}], got {value!r}")
    return value


def _index(value, where: str, n: int, below: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
        raise InvalidForestError(f"{where}: {value!r} is not a node index in 0..{n - 1}")
    if below is not None and value >= below:
        raise InvalidForestError(f"{where}: tail {value} must come before its head {below} (bottom-up order)")
    return int(value)


def _check_node(k: int, node) -> tuple[str, int, int]:
    if not isinstance(node, (tuple, list)) or len(node) != 3:
        raise InvalidForestError(f"node {k} must be (label, start, end), got {node!r}")
    label, start, end = node
    try:
        check_label(label)
    except InvalidTreeError as error:
        raise InvalidForestError(f"node {k}: {error}") from None
    for value in (start, end):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise InvalidForestError(f"node {k}: span bounds must be integers >= 0, got {node!r}")
    if start > end:
        raise InvalidForestError(f"node {k}: span start {start} after its end {end}")
    return label, int(start), int(end)


def _check_edge(k: int, edge, n: int) -> tuple[int, tuple[int, ...], float]:
    if not isinstance(edge, (tuple, list)) or len(edge) != 3:
        raise InvalidForestError(f"hyper-edge {k} must be (head, tails, probability), got {edge!r}")
    head, tails, probability = edge
    head = _index(head, f"hyper-edge {k}: head", n)
    tails = tuple(_index(t, f"hyper-edge {k}", n, below=head) for t in _sequence(tails, f"hyper-edge {k}: tails"))
    if not tails:
        raise InvalidForestError(f"hyper-edge {k} has no tails")
    return head, tails, _probability(probability, f"hyper-edge {k}")


def _check_root(k: int, root, n: int) -> tuple[int, float]:
    if not isinstance(root, (tuple, list)) or len(root) != 2:
        raise InvalidForestError(f"root {k} must be (node, weight), got {root!r}")
    return _index(root[0], f"root {k}", n), _probability(root[1], f"root {k}")


def _name(key) -> str:
    return f"{key[0]}[{key[1]},{key[2]}]"
