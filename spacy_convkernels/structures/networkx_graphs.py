"""The package's graphs as ``networkx.DiGraph`` and back (the ``networkx`` extra).

networkx stays off the kernels' hot path: these functions convert at the boundary, so
that networkx's algorithms and drawing apply to what the package reads, and graphs made
with networkx go into the path and Zelenko kernels. Every node has a ``label`` attribute
(the node's label), every edge a ``label`` attribute (its role or relation):

- :class:`~.semantic_graph.SemanticGraph` (an AMR graph, or a dependency parse through
  ``SemanticGraph.from_span``): nodes by their ids, in order, with ``name`` where the graph
  has a surface name; edges from source to target, with ``order``, their position among
  the graph's edges (the order in which walks meet them);
- :class:`~.paths.PathTuples` (a candidate's path): nodes 0..n-1 along the path, edges
  i -> i+1 labelled with the edge of tuple i+1, and each node's ``edge``, the edge of its
  tuple (the first tuple's has no networkx edge). From networkx, a path graph without
  ``edge`` node attributes reads each node's tuple edge from the edge into it ("" for
  the first node);
- a subgraph :class:`~.tree.Tree` of ``edge/node`` labels (a candidate's subgraph, what
  the Zelenko kernel compares): nodes 0..n-1 in preorder, edges parent -> child labelled
  with the child's edge, children in order, and each node's ``edge`` as for paths.
"""

import math
import sys

from ..errors import InvalidGraphError, MissingDependencyError
from .paths import SEPARATOR, PathTuples, split_tuple_label, tuple_label
from .semantic_graph import SemanticGraph
from .tree import Tree


def is_networkx_graph(value) -> bool:
    """Whether ``value`` is a networkx graph (False when networkx was never imported)."""
    networkx = sys.modules.get("networkx")
    return networkx is not None and isinstance(value, networkx.Graph)


def graph_to_networkx(graph: SemanticGraph):
    """The ``networkx.DiGraph`` of a semantic graph (see the module); a graph with two
    edges between the same two nodes, in the same direction, gives a ``MultiDiGraph``."""
    networkx = _networkx()
    pairs = [(source, target) for source, _, target in graph.edges]
    G = networkx.DiGraph() if len(set(pairs)) == len(pairs) else networkx.MultiDiGraph()
    for node, label in graph.labels.items():
        G.add_node(node, label=label)
        if node in graph.names:
            G.nodes[node]["name"] = graph.names[node]
    for order, (source, role, target) in enumerate(graph.edges):
        G.add_edge(source, target, label=role, order=order)
    return G


def graph_from_networkx(G) -> SemanticGraph:
    """The semantic graph of a ``networkx.DiGraph`` (or ``MultiDiGraph``) whose nodes and
    edges have ``label`` attributes; node ids become strings, edges keep ``order`` when
    given (the others follow, in networkx's order)."""
    _check_directed(G)
    ids = {node: str(node) for node in G.nodes}
    if len(set(ids.values())) != len(ids):
        raise InvalidGraphError("two nodes of the networkx graph have the same id as strings")
    labels, names = {}, {}
    for node, data in G.nodes(data=True):
        labels[ids[node]] = _label(data, f"node {node!r}")
        if "name" in data:
            names[ids[node]] = str(data["name"])
    ordered = sorted(G.edges(data=True), key=lambda edge: edge[2].get("order", math.inf))  # stable: the rest in order
    edges = tuple(
        (ids[source], _label(data, f"edge {source!r} -> {target!r}"), ids[target]) for source, target, data in ordered
    )
    return SemanticGraph(labels, edges, names)


def path_to_networkx(path: PathTuples):
    """The ``networkx.DiGraph`` of a path of (edge, node) tuples (see the module)."""
    G = _networkx().DiGraph()
    for i, (edge, node) in enumerate(path.tuples):
        G.add_node(i, label=node, edge=edge)
        if i:
            G.add_edge(i - 1, i, label=edge)
    return G


def path_from_networkx(G) -> PathTuples:
    """The path of a ``networkx.DiGraph`` that is a directed path (see the module)."""
    _check_directed(G)
    if len(G) == 0:
        raise InvalidGraphError("an empty networkx graph is not a path")
    starts = [node for node in G.nodes if G.in_degree(node) == 0]
    if len(starts) != 1 or any(G.out_degree(node) > 1 or G.in_degree(node) > 1 for node in G.nodes):
        raise InvalidGraphError("a path's networkx graph is one directed path (one start, every node in and out once)")
    nodes, edges = [starts[0]], [""]
    while G.out_degree(nodes[-1]):
        [(_, nxt, data)] = G.out_edges(nodes[-1], data=True)
        nodes.append(nxt)
        edges.append(_label(data, f"edge {nodes[-2]!r} -> {nxt!r}"))
    if len(nodes) != len(G):
        raise InvalidGraphError("a path's networkx graph is one directed path, not a path and cycles")
    return PathTuples(
        (str(G.nodes[node].get("edge", edge)), _label(G.nodes[node], f"node {node!r}"))
        for node, edge in zip(nodes, edges)
    )


def tree_to_networkx(tree: Tree):
    """The ``networkx.DiGraph`` of a subgraph tree of ``edge/node`` labels (see the module)."""
    G = _networkx().DiGraph()
    for i, (label, parent) in enumerate(zip(tree.labels, tree.parents)):
        edge, node = split_tuple_label(label)
        G.add_node(i, label=node, edge=edge)
        if parent >= 0:
            G.add_edge(parent, i, label=edge)
    return G


def tree_from_networkx(G) -> Tree:
    """The subgraph tree of a ``networkx.DiGraph`` that is a rooted tree, edges from parent
    to child (see the module); children in networkx's order."""
    _check_directed(G)
    networkx = _networkx()
    if len(G) == 0 or not networkx.is_arborescence(G):
        raise InvalidGraphError("a tree's networkx graph is a rooted tree: one root, edges from parent to child")
    (root,) = (node for node in G.nodes if G.in_degree(node) == 0)
    labels, parents = [], []
    stack = [(root, -1, "")]
    while stack:
        node, parent, edge = stack.pop()
        data = G.nodes[node]
        edge = str(data.get("edge", edge))
        if SEPARATOR in edge:
            raise InvalidGraphError(f"node {node!r}: an edge label cannot hold {SEPARATOR!r}, got {edge!r}")
        labels.append(tuple_label(edge, _label(data, f"node {node!r}")))
        parents.append(parent)
        index = len(labels) - 1
        children = [(child, _label(d, f"edge {node!r} -> {child!r}")) for _, child, d in G.out_edges(node, data=True)]
        stack.extend((child, index, label) for child, label in reversed(children))
    return Tree.from_flat(labels, parents)


def _networkx():
    try:
        import networkx
    except ImportError as error:
        raise MissingDependencyError(
            'networkx is not installed; install it with: pip install "spacy-convkernels[networkx]"'
        ) from error
    return networkx


def _check_directed(G) -> None:
    if not is_networkx_graph(G) or not G.is_directed():
        raise InvalidGraphError(f"expected a networkx DiGraph, got {type(G).__name__}")


def _label(data: dict, what: str) -> str:
    """The ``label`` attribute of a node or edge, as a string."""
    if "label" not in data:
        raise InvalidGraphError(f"{what} of the networkx graph has no 'label' attribute")
    return str(data["label"])
