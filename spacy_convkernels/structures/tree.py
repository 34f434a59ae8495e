"""An immutable labelled ordered tree, its bracket notation and its compiled form."""
import re
from typing import Iterator, Sequence

import numpy as np

from ..errors import InvalidTreeError, TreeParseError
from .interning import CONTENTS, LABELS, PRODUCTIONS, label_content

_TOKEN = re.compile(r"\(|\)|[^\s()]+|\s+")
_FORBIDDEN = re.compile(r"[\s()]")


class Tree:
    """An immutable labelled ordered tree.

    ``Tree(label, children)`` builds a node; ``Tree.from_string`` reads the bracket
    notation ``(LABEL child child ...)`` and ``str(tree)`` writes it back in KeLP's
    compact form ``(LABEL(child)(child))``. Every operation is iterative, so trees of
    any depth are safe. Equality and hashing follow the bracket string. A tree is
    compiled once, on first use by a kernel, into flat integer arrays
    (:class:`CompiledTree`).
    """

    __slots__ = ("label", "children", "_text", "_compiled")

    def __init__(self, label: str, children: Sequence["Tree"] = ()):
        if not isinstance(label, str) or not label or _FORBIDDEN.search(label):
            raise InvalidTreeError(
                f"a tree label must be a non-empty string without spaces or parentheses, got {label!r}"
            )
        children = tuple(children)
        for child in children:
            if not isinstance(child, Tree):
                raise InvalidTreeError(f"children of {label!r} must be Tree objects, got {type(child).__name__}")
        set_ = object.__setattr__
        set_(self, "label", label)
        set_(self, "children", children)
        set_(self, "_text", None)
        set_(self, "_compiled", None)

    def __setattr__(self, name, value):
        raise AttributeError("Tree is immutable")

    __delattr__ = __setattr__

    @classmethod
    def from_string(cls, text: str) -> "Tree":
        """Parse ``(LABEL child ...)``; a bare word after a label is a leaf, as in ``(DT the)``.

        Raises :class:`TreeParseError` with the offending position.
        """
        if not isinstance(text, str):
            raise TypeError(f"Tree.from_string expects str, got {type(text).__name__}")
        stack = []  # [label, children, start] of the open nodes
        root = None
        for match in _TOKEN.finditer(text):
            token = match.group()
            position = match.start()
            if token.isspace():
                continue
            if root is not None:
                raise TreeParseError("text after the end of the tree", text, position)
            if token == "(":
                stack.append([None, [], position])
            elif token == ")":
                if not stack:
                    raise TreeParseError("unbalanced ')'", text, position)
                label, children, start = stack.pop()
                if label is None:
                    raise TreeParseError("node without a label", text, start)
                node = cls(label, children)
                if stack:
                    stack[-1][1].append(node)
                else:
                    root = node
            elif not stack:
                raise TreeParseError("expected '('", text, position)
            elif stack[-1][0] is None:
                stack[-1][0] = token
            else:
                stack[-1][1].append(cls(token))
        if stack:
            raise TreeParseError("unclosed '('", text, stack[-1][2])
        if root is None:
            raise TreeParseError("empty tree string", text, 0)
        return root

    def __str__(self) -> str:
        if self._text is None:
            parts = []
            stack = [self]
            while stack:
                node = stack.pop()
                if node is None:
                    parts.append(")")
                    continue
                parts.append("(" + node.label)
                stack.append(None)
                stack.extend(reversed(node.children))
            object.__setattr__(self, "_text", "".join(parts))
        return self._text

    def __repr__(self) -> str:
        text = str(self)
        if len(text) > 80:
            text = text[:77] + "..."
        return f"Tree({text!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Tree) and (self is other or str(self) == str(other))

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self):
        return (Tree.from_string, (str(self),))

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def nodes(self) -> Iterator["Tree"]:
        """All nodes in preorder (parents before children, children left to right)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def leaves(self) -> Iterator["Tree"]:
        return (node for node in self.nodes() if not node.children)

    @property
    def n_nodes(self) -> int:
        return self.compiled.n_nodes

    @property
    def compiled(self) -> "CompiledTree":
        if self._compiled is None:
            object.__setattr__(self, "_compiled", CompiledTree(self))
        return self._compiled


class CompiledTree:
    """A tree as flat int32 arrays, the form the compiled engine consumes.

    Nodes are numbered in preorder, so every child has a larger index than its parent.

    - ``labels``: interned full labels (``SYNT##nsubj``);
    - ``contents``: interned label contents, the text after ``##`` (KeLP's PTK match key);
    - ``productions``: interned productions, a label followed by its children's labels
      (KeLP's ST/SST match key);
    - ``child_ptr``/``child_idx``: children in CSR form, children of node ``i`` are
      ``child_idx[child_ptr[i]:child_ptr[i+1]]``, left to right;
    - ``by_production``/``by_content``: node indices sorted by id, so matching node pairs
      of two trees are enumerated by a merge; ``rank_by_*`` are their inverses.
    """

    __slots__ = (
        "n_nodes", "labels", "contents", "productions", "child_ptr", "child_idx",
        "by_production", "rank_by_production", "by_content", "rank_by_content",
    )

    def __init__(self, tree: Tree):
        names = []
        parents = []
        stack = [(tree, -1)]
        while stack:
            node, parent = stack.pop()
            index = len(names)
            names.append(node.label)
            parents.append(parent)
            stack.extend((child, index) for child in reversed(node.children))
        n = len(names)
        parent = np.asarray(parents[1:], dtype=np.int64)
        self.n_nodes = n
        self.labels = np.asarray(LABELS.ids(names), dtype=np.int32)
        self.contents = np.asarray(CONTENTS.ids(map(label_content, names)), dtype=np.int32)
        self.child_ptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(parent, minlength=n), out=self.child_ptr[1:])
        self.child_idx = (np.argsort(parent, kind="stable") + 1).astype(np.int32)
        label_list = self.labels.tolist()
        ptr = self.child_ptr.tolist()
        kids = self.child_idx.tolist()
        self.productions = np.asarray(
            PRODUCTIONS.ids(
                (label_list[i], *[label_list[c] for c in kids[ptr[i] : ptr[i + 1]]]) for i in range(n)
            ),
            dtype=np.int32,
        )
        self.by_production, self.rank_by_production = _sorted_order(self.productions)
        self.by_content, self.rank_by_content = _sorted_order(self.contents)


def _sorted_order(keys: np.ndarray):
    order = np.argsort(keys, kind="stable").astype(np.int32)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return order, rank
