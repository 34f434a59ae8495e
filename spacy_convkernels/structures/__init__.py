"""Discrete structures built from text: trees (and, later, paths, subgraphs, forests)."""
from .tree import CompiledTree, Tree

__all__ = ["Tree", "CompiledTree"]
