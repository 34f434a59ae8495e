"""Discrete structures built from text: trees from dependency parses, paths of (edge, node)
tuples, and semantic graphs with their candidate interactions (a path and a subgraph each);
the graphs, paths and subgraphs as ``networkx.DiGraph`` and back (the ``networkx`` extra)."""

from ..errors import MissingAnnotationError, UnknownRepresentationError
from .dependency import (
    REPRESENTATIONS,
    VIRTUAL_ROOT,
    DependencyParse,
    join_sentences,
    parse_to_trees,
    span_to_parse,
    span_to_tree,
    span_to_trees,
    spans_to_trees,
)
from .forest import CompiledForest, Forest, beam_forests
from .interactions import (
    INTERACTIONS,
    PARTICIPANTS,
    ROLES,
    InteractionCandidate,
    amr_candidates,
    dependency_candidates,
    find_candidates,
)
from .networkx_graphs import (
    graph_from_networkx,
    graph_to_networkx,
    path_from_networkx,
    path_to_networkx,
    tree_from_networkx,
    tree_to_networkx,
)
from .paths import CompiledPath, PathTuples, tuple_label
from .semantic_graph import SemanticGraph
from .tree import CompiledTree, Tree

__all__ = [
    "Tree",
    "CompiledTree",
    "Forest",
    "CompiledForest",
    "beam_forests",
    "REPRESENTATIONS",
    "VIRTUAL_ROOT",
    "DependencyParse",
    "join_sentences",
    "span_to_parse",
    "span_to_tree",
    "span_to_trees",
    "spans_to_trees",
    "parse_to_trees",
    "PathTuples",
    "CompiledPath",
    "tuple_label",
    "SemanticGraph",
    "InteractionCandidate",
    "INTERACTIONS",
    "PARTICIPANTS",
    "ROLES",
    "find_candidates",
    "amr_candidates",
    "dependency_candidates",
    "graph_to_networkx",
    "graph_from_networkx",
    "path_to_networkx",
    "path_from_networkx",
    "tree_to_networkx",
    "tree_from_networkx",
    "MissingAnnotationError",
    "UnknownRepresentationError",
]
