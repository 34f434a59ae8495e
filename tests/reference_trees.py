"""The tree code as it was written in Python before it was compiled (issue 64): the
yardstick the compiled reader, writer and compiler are tested against. Slow on purpose;
kept as it was, so that a difference is the compiled side's.
"""

import re

import numpy as np

from spacy_convkernels.errors import StructureSizeError, TreeParseError
from spacy_convkernels.structures.interning import CONTENTS, LABELS, PRODUCTIONS
from spacy_convkernels.structures.labels import label_content

_TOKEN = re.compile(r"\(|\)|[^\s()]+|\s+")

COMPILED_ARRAYS = (
    "labels",
    "contents",
    "productions",
    "child_ptr",
    "child_idx",
    "by_production",
    "rank_by_production",
    "by_content",
    "rank_by_content",
    "by_label",
    "rank_by_label",
)


def read_brackets(text, max_nodes):
    """(labels, parents) of a bracket string, or the error it raises."""

    def fail(message, position):
        raise TreeParseError(message, text, position)

    labels, parents, open_nodes, pending = [], [], [], None
    for match in _TOKEN.finditer(text):
        token, at = match.group(), match.start()
        if len(labels) > max_nodes:
            raise StructureSizeError(
                f"a tree of more than {max_nodes:,} nodes (structures.tree.MAX_TREE_NODES), at position "
                f"{at} of a {len(text):,}-character string: refused before it is built"
            )
        if pending is not None:
            if token.isspace():
                continue
            if token in "()":
                fail("node without a label", pending)
            parents.append(open_nodes[-1][0] if open_nodes else -1)
            open_nodes.append((len(labels), pending))
            labels.append(token)
            pending = None
        elif token == "(":
            if labels and not open_nodes:
                fail("text after the end of the tree", at)
            pending = at
        elif token == ")":
            if not open_nodes:
                fail("unbalanced ')'", at)
            open_nodes.pop()
        elif token.isspace():
            continue
        elif open_nodes:
            parents.append(open_nodes[-1][0])
            labels.append(token)
        else:
            fail("text after the end of the tree" if labels else "expected '('", at)
    if pending is not None:
        fail("unclosed '('", pending)
    if open_nodes:
        fail("unclosed '('", open_nodes[-1][1])
    if not labels:
        fail("empty tree string", 0)
    return tuple(labels), tuple(parents)


def bracket_string(labels, parents):
    parts, open_nodes = [], []
    for i, (label, parent) in enumerate(zip(labels, parents)):
        while open_nodes and open_nodes[-1] != parent:
            open_nodes.pop()
            parts.append(")")
        parts.append("(")
        parts.append(label)
        open_nodes.append(i)
    parts.append(")" * len(open_nodes))
    return "".join(parts)


def compiled_arrays(labels, parents):
    """{name: array} of CompiledTree, and the leases that hold its ids."""
    n = len(labels)
    parent = np.asarray(parents[1:], dtype=np.int64)
    label_lease, content_lease = LABELS.lease(labels), CONTENTS.lease(map(label_content, labels))
    label_ids = label_lease.ids.tolist()
    arrays = {"labels": label_lease.ids, "contents": content_lease.ids}
    arrays["child_ptr"] = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(parent, minlength=n), out=arrays["child_ptr"][1:])
    arrays["child_idx"] = (np.argsort(parent, kind="stable") + 1).astype(np.int32)
    children = [[] for _ in range(n)]
    for i, p in enumerate(parents[1:], start=1):
        children[p].append(label_ids[i])
    production_lease = PRODUCTIONS.lease((label_ids[i], *kids) for i, kids in enumerate(children))
    arrays["productions"] = production_lease.ids
    for key in ("production", "content", "label"):
        order = np.argsort(arrays[key + "s"], kind="stable").astype(np.int32)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order), dtype=np.int32)
        arrays["by_" + key], arrays["rank_by_" + key] = order, rank
    return arrays, (label_lease, content_lease, production_lease)
