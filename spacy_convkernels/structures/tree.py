"""An immutable labelled ordered tree, its bracket notation and its compiled form."""

import re
from collections.abc import Iterable, Sequence
from typing import NoReturn

import numpy as np

from ..errors import InvalidTreeError
from ._trees import bracket_string, compile_key, compile_tree, read_brackets

#: The most nodes a bracket string may give a tree: a one-line corpus of 8 MB (under the
#: readers' 10 MiB line cap) held 4 million, whose parsing and compiling took 10 s and
#: 820 MB before the kernels' work bound could refuse it. Parse trees have hundreds; the
#: tests compare chains of 200,000.
MAX_TREE_NODES = 1_000_000
_FORBIDDEN = re.compile(r"[\s()]")


class Tree:
    """An immutable labelled ordered tree.

    Stored flat, in preorder: ``labels[i]`` is the label of node i and ``parents[i]`` the
    index of its parent (-1 for the root); the children of a node are in order, and a
    subtree is a contiguous run of nodes. No operation is recursive, so trees of any
    depth are safe, and a corpus of trees is a few tuples per tree.

    ``Tree(label, children)`` builds a tree from subtrees; ``Tree.from_string`` reads the
    bracket notation ``(LABEL child child ...)`` and ``str(tree)`` writes KeLP's compact
    form ``(LABEL(child)(child))``. Equality and hashing follow labels and shape. A tree
    is compiled once, on first use by a kernel, into flat integer arrays
    (:class:`CompiledTree`).

    Parameters
    ----------
    label : str
        The root's label: non-empty, without whitespace or parentheses.
    children : sequence of Tree, default=()
        The subtrees under the root, in order.

    Attributes
    ----------
    label : str
        The root's label.
    labels : tuple of str
        The labels of the nodes, in preorder.
    parents : tuple of int
        The parent of each node, -1 for the root.
    n_nodes : int
        The number of nodes.
    children : tuple of Tree
        The subtrees under the root.
    compiled : CompiledTree
        The form the engine reads, made on first use.
    """

    __slots__ = ("_labels", "_parents", "_text", "_hash", "_compiled", "_sizes")
    _labels: tuple[str, ...]
    _parents: tuple[int, ...]
    _text: str | None
    _hash: int | None
    _compiled: "CompiledTree | None"
    _sizes: list[int] | None

    def __init__(self, label: str, children: Sequence["Tree"] = ()):
        """A node over ``children``; it copies them, so build deep trees with ``from_flat``."""
        check_label(label)
        if isinstance(children, (Tree, str, bytes)) or not hasattr(children, "__iter__"):
            raise InvalidTreeError(f"children of {label!r} must be a sequence of Trees, got {type(children).__name__}")
        labels, parents = [label], [-1]
        for child in children:
            if not isinstance(child, Tree):
                raise InvalidTreeError(f"children of {label!r} must be Tree objects, got {type(child).__name__}")
            offset = len(labels)
            labels.extend(child._labels)
            parents.append(0)
            parents.extend(p + offset for p in child._parents[1:])
        _init(self, tuple(labels), tuple(parents))

    @classmethod
    def from_flat(cls, labels: Iterable[str], parents: Iterable[int]) -> "Tree":
        """A tree from preorder labels and parent indices (-1 for the root), checked."""
        if isinstance(labels, (str, bytes)) or isinstance(parents, (str, bytes)):
            raise InvalidTreeError("labels and parents must be sequences, not strings")
        labels, parents = tuple(labels), tuple(parents)
        if not all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in parents):
            raise InvalidTreeError("parents must be integers")
        parents = tuple(int(p) for p in parents)
        if not labels or len(labels) != len(parents):
            raise InvalidTreeError("labels and parents must be non-empty and of equal length")
        for label in labels:
            check_label(label)
        if parents[0] != -1:
            raise InvalidTreeError("node 0 must be the root (parent -1)")
        open_nodes = [0]  # the path from the root to the last node: where a preorder node may hang
        for i in range(1, len(parents)):
            while open_nodes and open_nodes[-1] != parents[i]:
                open_nodes.pop()
            if not open_nodes:
                raise InvalidTreeError(f"parents are not a preorder tree: node {i} hangs under {parents[i]}")
            open_nodes.append(i)
        return cls._trusted(labels, parents)

    @classmethod
    def from_string(cls, text: str) -> "Tree":
        """Parse ``(LABEL child ...)``; a bare word after a label is a leaf, as in ``(DT the)``.

        Raises :class:`TreeParseError` with the offending position, and
        :class:`StructureSizeError` past :data:`MAX_TREE_NODES` nodes, before building.
        """
        if not isinstance(text, str):
            raise InvalidTreeError(f"Tree.from_string expects a str, got {type(text).__name__}")
        return cls._trusted(*read_brackets(text, MAX_TREE_NODES))

    @classmethod
    def _trusted(cls, labels: tuple[str, ...], parents: tuple[int, ...], text: str | None = None) -> "Tree":
        """A tree from flat tuples already known to be valid (no checks), and its
        bracket string when the caller has it."""
        tree = object.__new__(cls)
        _init(tree, labels, parents)
        if text is not None:
            object.__setattr__(tree, "_text", text)
        return tree

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("Tree is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("Tree is immutable")

    @property
    def label(self) -> str:
        return self._labels[0]

    @property
    def labels(self) -> tuple[str, ...]:
        """Every node's label, in preorder."""
        return self._labels

    @property
    def parents(self) -> tuple[int, ...]:
        """Every node's parent index in preorder (-1 for the root)."""
        return self._parents

    @property
    def n_nodes(self) -> int:
        return len(self._labels)

    @property
    def is_leaf(self) -> bool:
        return len(self._labels) == 1

    @property
    def children(self) -> tuple["Tree", ...]:
        """The subtrees under the root, left to right."""
        sizes = self._subtree_sizes()
        return tuple(self._subtree(i, sizes) for i, p in enumerate(self._parents) if p == 0)

    def subtree(self, node: int) -> "Tree":
        """The subtree rooted at preorder node ``node``."""
        if not 0 <= node < len(self._labels):
            raise IndexError(f"node {node} is not in a tree of {len(self._labels)} nodes")
        return self._subtree(node, self._subtree_sizes())

    def _subtree_sizes(self) -> list[int]:
        """Nodes in the subtree of each node (kept: the tree is immutable)."""
        sizes = self._sizes
        if sizes is None:
            sizes = [1] * len(self._labels)
            parents = self._parents
            for i in range(len(sizes) - 1, 0, -1):
                sizes[parents[i]] += sizes[i]
            object.__setattr__(self, "_sizes", sizes)
        return sizes

    def _subtree(self, node: int, sizes: Sequence[int]) -> "Tree":
        end = node + sizes[node]
        return Tree._trusted(self._labels[node:end], (-1, *[p - node for p in self._parents[node + 1 : end]]))

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = bracket_string(self._labels, self._parents)
            object.__setattr__(self, "_text", text)
        return text

    def __repr__(self) -> str:
        text = str(self)
        if len(text) > 80:
            text = text[:77] + "..."
        return f"Tree({text!r})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        return self._labels == other._labels and self._parents == other._parents

    def __hash__(self) -> int:
        value = self._hash
        if value is None:
            value = hash((self._labels, self._parents))
            object.__setattr__(self, "_hash", value)
        return value

    def __reduce__(self):
        return (Tree._trusted, (self._labels, self._parents))

    @property
    def compiled(self) -> "CompiledTree":
        compiled = self._compiled
        if compiled is None:
            compiled = CompiledTree(self._labels, self._parents)
            object.__setattr__(self, "_compiled", compiled)
        return compiled


def check_label(label):
    """Refuse a label that is not a non-empty string without spaces or parentheses."""
    if not isinstance(label, str) or not label or _FORBIDDEN.search(label):
        raise InvalidTreeError(f"a tree label must be a non-empty string without spaces or parentheses, got {label!r}")


def _init(tree: Tree, labels: tuple, parents: tuple):
    set_ = object.__setattr__
    set_(tree, "_labels", labels)
    set_(tree, "_parents", parents)
    set_(tree, "_text", None)
    set_(tree, "_hash", None)
    set_(tree, "_compiled", None)
    set_(tree, "_sizes", None)


class CompiledTree:
    """A tree as flat int32 arrays, the form the compiled engine consumes.

    Nodes are numbered in preorder, so every child has a larger index than its parent.

    - ``labels``: interned full labels (``SYNT##nsubj``);
    - ``contents``: interned label contents, the text after ``##`` (KeLP's PTK match key);
    - ``productions``: interned productions, a label followed by its children's labels
      (KeLP's ST/SST match key);
    - ``child_ptr``/``child_idx``: children in CSR form, children of node ``i`` are
      ``child_idx[child_ptr[i]:child_ptr[i+1]]``, left to right;
    - ``by_production``/``by_content``/``by_label``: node indices sorted by id, so matching
      node pairs of two trees are enumerated by a merge; ``rank_by_*`` are their inverses;
    - ``self_kernels``: K(tree, tree) by kernel configuration, filled by the kernels.

    The contents and the productions, with their orders, are made when first read (a
    kernel reads one match key). Compiled in ``_trees.pyx``.

    Parameters
    ----------
    labels : tuple of str
        The labels of the nodes, in preorder.
    parents : tuple of int
        The parent of each node, -1 for the root.
    """

    __slots__ = (
        "n_nodes",
        "labels",
        "child_ptr",
        "child_idx",
        "by_label",
        "rank_by_label",
        "self_kernels",
        "_source",
        "_keys",
        "_leases",
    )

    def __init__(self, labels: tuple[str, ...], parents: tuple[int, ...]):
        lease, self.child_ptr, self.child_idx, self.by_label, self.rank_by_label = compile_tree(labels, parents)
        self.n_nodes = len(labels)
        self.labels = lease.ids
        self.self_kernels: dict = {}
        self._source = labels
        self._keys: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # ids, order, ranks
        self._leases = [lease]  # the ids stay ours while this lives

    def _match_key(self, key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, order, ranks) of the match key ``key``, made on first use (by any thread: the first kept)."""
        found = self._keys.get(key)
        if found is None:
            lease, order, ranks = compile_key(key, self._source, self.labels, self.child_ptr, self.child_idx)
            self._leases.append(lease)
            found = self._keys.setdefault(key, (lease.ids, order, ranks))
        return found

    contents = property(lambda self: self._match_key("content")[0])
    by_content = property(lambda self: self._match_key("content")[1])
    rank_by_content = property(lambda self: self._match_key("content")[2])
    productions = property(lambda self: self._match_key("production")[0])
    by_production = property(lambda self: self._match_key("production")[1])
    rank_by_production = property(lambda self: self._match_key("production")[2])
