"""Why two trees are similar: the node pairs that contribute most to a tree kernel's value.

A tree kernel is a sum over node pairs, K(a, b) = sum_{n1, n2} Delta(n1, n2), Delta
counting the common fragments rooted at n1 and n2 (the class docstrings of the kernels
define it). :func:`explain` reads every Delta from the engine, computed by the kernel's
own recursion and tables (:func:`~._driver.deltas`: label weights, SPTK's and CSPTK's
similarities sigma and threshold included), and returns the pairs with the largest ones,
each with the largest common fragment rooted at it. Normalized, each Delta is divided by
sqrt(K(a, a) K(b, b)), so the values of all pairs sum to the kernel's value either way.
The Delta table is quadratic in the nodes: the engine refuses pairs of trees whose table
would exceed ``_driver.DELTA_CELLS`` cells.

For ST and SST the largest common fragment of a pair is its production, extended through
every aligned pair of inner children of positive Delta (the whole common subtree for the
textbook ST). For PTK, SPTK and CSPTK it is the fragment with the most nodes: children
aligned in order, pairs of positive Delta only, chosen as a longest common subsequence
weighted by the fragments' sizes below them.
"""

from dataclasses import dataclass
from html import escape

import numpy as np

from ..errors import InvalidParameterError, StructureTypeError
from ..structures.tree import Tree
from ..utils.display import markup, visible
from ..utils.validation import COUNT, validate_params
from ._driver import deltas
from .base import Kernel, _engine_settings, inverse_roots
from .kinds import KIND_TRAITS


@dataclass(frozen=True)
class FragmentMatch:
    """A node pair and its part of the kernel value.

    Attributes
    ----------
    node_a, node_b : int
        The pair's nodes, preorder indices in ``a`` and ``b``.
    value : float
        Delta(node_a, node_b), divided by sqrt(K(a, a) K(b, b)) when normalized: the
        values of all pairs sum to the kernel value.
    share : float
        ``value`` / the kernel value (0 when that is 0).
    fragment, fragment_b : Tree
        The largest common fragment rooted at the pair, with ``a``'s and with ``b``'s
        labels (they differ where SPTK or CSPTK match similar words).
    nodes_a, nodes_b : tuple of int
        The fragment's nodes in ``a`` and in ``b``, in preorder (node k of one matches node k of the other).
    """

    node_a: int
    node_b: int
    value: float
    share: float
    fragment: Tree
    fragment_b: Tree
    nodes_a: tuple[int, ...]
    nodes_b: tuple[int, ...]


@dataclass(frozen=True)
class Explanation:
    """The kernel value and the pairs of largest contribution (``matches``, largest first);
    ``n_pairs`` node pairs contribute, and ``rest`` is the sum of those left out of ``matches``."""

    value: float
    matches: tuple[FragmentMatch, ...]
    n_pairs: int
    rest: float


class _Nodes:
    """A tree's labels, parents and children lists by preorder index."""

    def __init__(self, tree: Tree):
        self.labels = tree.labels
        self.parents = tree.parents
        self.children: list[list[int]] = [[] for _ in self.labels]
        for node, parent in enumerate(self.parents):
            if parent >= 0:
                self.children[parent].append(node)


@validate_params({"top": [COUNT, None]})
def explain(kernel, a: Tree, b: Tree, *, top: int | None = 10, normalize: bool = True) -> Explanation:
    """The ``top`` node pairs (None: every contributing pair) of largest Delta in K(a, b),
    for the kernels whose engine kind sums Delta over node pairs (ST, SST, PTK, SPTK,
    CSPTK; see the module)."""
    if not isinstance(kernel, Kernel):
        raise InvalidParameterError(f"explain supports the tree kernels, not {type(kernel).__name__}")
    for name, tree in (("a", a), ("b", b)):
        if not isinstance(tree, Tree):
            raise StructureTypeError(f"explain takes two Trees; {name} is {type(tree).__name__}")
    spec, tables = kernel._configuration()  # validates the parameters
    traits = KIND_TRAITS[spec.kind]
    if not traits.sums_of_deltas:
        raise InvalidParameterError(f"explain supports the tree kernels, not {type(kernel).__name__}")
    packed = kernel._pack([a, b], spec, tables)
    delta = deltas(_engine_settings(spec, tables), packed, packed, 0, 1)
    A, B = _Nodes(a), _Nodes(b)
    sizes = None if traits.aligned_by_position else _fragment_sizes(A, B, delta)
    values = delta
    if normalize:
        inverse_a, inverse_b = inverse_roots(kernel.diag([a, b]))
        values = delta * inverse_a * inverse_b
    value = float(values.sum())
    pairs = np.argwhere(values > 0)
    order = pairs[np.argsort(-values[pairs[:, 0], pairs[:, 1]], kind="stable")]
    chosen = order if top is None else order[:top]
    matches = []
    for i, j in chosen:
        nodes_a, nodes_b = _fragment(A, B, int(i), int(j), delta, sizes)
        v = float(values[i, j])
        matches.append(
            FragmentMatch(
                node_a=int(i),
                node_b=int(j),
                value=v,
                share=v / value if value else 0.0,
                fragment=_induced(A, nodes_a),
                fragment_b=_induced(B, nodes_b),
                nodes_a=tuple(nodes_a),
                nodes_b=tuple(nodes_b),
            )
        )
    return Explanation(
        value=value, matches=tuple(matches), n_pairs=len(order), rest=value - sum(m.value for m in matches)
    )


def _fragment_sizes(A: _Nodes, B: _Nodes, delta: np.ndarray) -> np.ndarray:
    """PTK, SPTK: the node count of the largest common fragment of each pair of positive
    Delta (children before parents: decreasing preorder indices)."""
    sizes = np.zeros(delta.shape, dtype=np.int64)
    for i, j in np.argwhere(delta > 0)[::-1]:
        kids_a, kids_b = A.children[i], B.children[j]
        below = _alignment(delta[np.ix_(kids_a, kids_b)], sizes[np.ix_(kids_a, kids_b)])[0] if kids_a and kids_b else 0
        sizes[i, j] = 1 + below
    return sizes


def _alignment(d: np.ndarray, sizes: np.ndarray) -> tuple[int, list[tuple[int, int]]]:
    """The order-preserving matching of children pairs of positive Delta with the largest
    total fragment size (a weighted longest common subsequence): (that size, the pairs)."""
    n, m = d.shape
    best = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(n):
        for j in range(m):
            take = best[i, j] + sizes[i, j] if d[i, j] > 0 else -1
            best[i + 1, j + 1] = max(best[i, j + 1], best[i + 1, j], take)
    pairs, i, j = [], n, m
    while i and j:
        if d[i - 1, j - 1] > 0 and best[i, j] == best[i - 1, j - 1] + sizes[i - 1, j - 1]:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif best[i, j] == best[i - 1, j]:
            i -= 1
        else:
            j -= 1
    return int(best[n, m]), pairs[::-1]


def _fragment(A: _Nodes, B: _Nodes, i: int, j: int, delta: np.ndarray, sizes) -> tuple[list, list]:
    """The nodes of the largest common fragment rooted at (i, j), in a and in b (preorder);
    ``sizes`` None: children aligned by position (ST, SST)."""
    nodes_a, nodes_b, stack = [], [], [(i, j)]
    while stack:
        x, y = stack.pop()
        nodes_a.append(x)
        nodes_b.append(y)
        kids_a, kids_b = A.children[x], B.children[y]
        if sizes is not None:  # PTK: the best alignment of the children
            if kids_a and kids_b:
                d = delta[np.ix_(kids_a, kids_b)]
                stack.extend((kids_a[p], kids_b[q]) for p, q in _alignment(d, sizes[np.ix_(kids_a, kids_b)])[1])
            continue
        for cx, cy in zip(kids_a, kids_b):  # ST, SST: the production's children, expanded where they match
            if A.children[cx] and B.children[cy] and delta[cx, cy] > 0:
                stack.append((cx, cy))
            else:
                nodes_a.append(cx)
                nodes_b.append(cy)
    return sorted(nodes_a), sorted(nodes_b)


def _induced(A: _Nodes, nodes: list[int]) -> Tree:
    """The tree of ``nodes`` of a (a connected set, parents before children in preorder)."""
    position = {node: k for k, node in enumerate(nodes)}
    parents = [-1] + [position[A.parents[node]] for node in nodes[1:]]
    return Tree.from_flat([A.labels[node] for node in nodes], parents)


COLORS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324", "#469990", "#808000")
CHAR, SLOT, LEVEL, MARGIN = 7.5, 24.0, 56.0, 20.0  # pixels: per label character, between leaves, per depth


def to_svg(explanation: Explanation, a: Tree, b: Tree) -> str:
    """Both trees, ``a`` above ``b``, the nodes of each match's fragment in the match's
    colour (the largest match first, ten colours) and each match's root marked by its
    rank in that colour. A node of several fragments (a match nested in another) takes the
    colour of the smallest of them (the better ranked of equal ones), an edge that of the
    smallest fragment holding both its nodes: the enclosing match keeps its colour where
    no nested one covers it."""
    parts, height, width = [], MARGIN, 0.0
    shown = explanation.matches[: len(COLORS)]
    for side, tree in (("a", a), ("b", b)):
        fragments = [match.nodes_a if side == "a" else match.nodes_b for match in shown]
        colours: dict[int, str] = {}  # by node
        edges: dict[int, str] = {}  # by child: the edge to its parent
        for k in sorted(range(len(fragments)), key=lambda k: (len(fragments[k]), k), reverse=True):
            inside = set(fragments[k])  # painted from the largest fragment to the smallest
            for node in inside:
                colours[node] = COLORS[k]
                if tree.parents[node] in inside:
                    edges[node] = COLORS[k]
        ranks: dict[int, list[int]] = {}
        for rank, nodes in enumerate(fragments, start=1):
            ranks.setdefault(nodes[0], []).append(rank)
        drawn, size = _draw(tree, colours, edges, ranks, top=height + 24)
        parts.append(f'<text x="{MARGIN}" y="{height + 12}" font-weight="bold">{side}</text>')
        parts.extend(drawn)
        height += size[1] + 24 + MARGIN
        width = max(width, size[0])
    header = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 2 * MARGIN:.0f}" height="{height:.0f}" '
        'font-family="Arial, sans-serif" font-size="12" class="spacy-convkernels-explain">'
    )
    return "\n".join([header, *parts, "</svg>"])


def to_html(explanation: Explanation, a: Tree, b: Tree, *, title: str = "Kernel explanation") -> str:
    """A page with :func:`to_svg` and a table of the matches (rank, value, share, fragment)."""
    rows = "\n".join(
        f'<tr><td style="color:{COLORS[k] if k < len(COLORS) else "#000"}">&#9632; {k + 1}</td>'
        f"<td>{m.value:.6g}</td><td>{100 * m.share:.1f} %</td><td><code>{markup(str(m.fragment))}</code>"
        + ("" if m.fragment == m.fragment_b else f"<br><code>{markup(str(m.fragment_b))}</code>")
        + "</td></tr>"
        for k, m in enumerate(explanation.matches)
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{markup(title)}</title>
<style>body {{font-family: Arial, sans-serif; margin: 2em}} td, th {{padding: 2px 10px; text-align: left}}
code {{font-size: 11px}}</style></head>
<body><h2>{markup(title)}</h2>
<p>K(a, b) = {explanation.value:.6g}: {explanation.n_pairs} node pairs contribute; the {len(explanation.matches)}
largest below ({explanation.rest:.6g} from the others).</p>
<figure style="overflow-x: auto">{to_svg(explanation, a, b)}</figure>
<table><tr><th>match</th><th>value</th><th>share</th><th>largest common fragment</th></tr>
{rows}
</table></body></html>
"""


def _draw(tree: Tree, colours: dict, edges: dict, ranks: dict, *, top: float) -> tuple[list[str], tuple[float, float]]:
    """SVG elements of one tree (leaves side by side in order, a parent centred over its
    children, one level per depth) and its (width, height): ``colours`` by node, ``edges``
    by child node, ``ranks`` the matches rooted at a node."""
    nodes = _Nodes(tree)
    n = len(nodes.labels)
    depth = [0] * n
    for node in range(1, n):
        depth[node] = depth[nodes.parents[node]] + 1
    x = [0.0] * n
    cursor = MARGIN
    shown = [visible(label) for label in nodes.labels]  # control characters as \x1b: XML cannot hold them
    for node in range(n):  # leaves in preorder are the leaves left to right
        if not nodes.children[node]:
            half = len(shown[node]) * CHAR / 2
            x[node] = cursor + half
            cursor += 2 * half + SLOT
    for node in reversed(range(n)):
        if nodes.children[node]:
            kids = nodes.children[node]
            x[node] = (x[kids[0]] + x[kids[-1]]) / 2
    y = [top + d * LEVEL for d in depth]
    elements = []
    for node in range(1, n):
        parent = nodes.parents[node]
        colour = edges.get(node)
        stroke = f'stroke="{colour}" stroke-width="2.5"' if colour else 'stroke="#bbb"'
        elements.append(
            f'<line x1="{x[parent]:.1f}" y1="{y[parent] + 6:.1f}" x2="{x[node]:.1f}" y2="{y[node] - 12:.1f}" {stroke}/>'
        )
    for node in range(n):
        label = escape(shown[node])
        colour = colours.get(node)
        fill = f'fill="{colour}" font-weight="bold"' if colour else 'fill="#555"'
        elements.append(f'<text x="{x[node]:.1f}" y="{y[node]:.1f}" text-anchor="middle" {fill}>{label}</text>')
        if node in ranks:
            marks = " ".join(f'<tspan fill="{COLORS[rank - 1]}">{rank}</tspan>' for rank in ranks[node])
            left = x[node] + len(shown[node]) * CHAR / 2 + 4
            elements.append(f'<text x="{left:.1f}" y="{y[node] - 8:.1f}" font-size="10">{marks}</text>')
    return elements, (cursor, max(depth) * LEVEL + 12)
