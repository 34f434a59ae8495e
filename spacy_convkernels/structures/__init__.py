"""Discrete structures built from text: trees from dependency parses (and, later, paths,
subgraphs and forests)."""
from .dependency import (
    REPRESENTATIONS,
    DependencyParse,
    MissingAnnotationError,
    UnknownRepresentationError,
    parse_to_trees,
    span_to_parse,
    span_to_tree,
    span_to_trees,
)
from .tree import CompiledTree, Tree

__all__ = [
    "Tree",
    "CompiledTree",
    "REPRESENTATIONS",
    "DependencyParse",
    "span_to_parse",
    "span_to_tree",
    "span_to_trees",
    "parse_to_trees",
    "MissingAnnotationError",
    "UnknownRepresentationError",
]
