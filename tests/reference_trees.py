"""The tree builder as it was written in Python before it was compiled (issue 64): the
yardstick the compiled reader, writer, compiler and dependency builder are tested
against. Slow on purpose; kept as it was, so that a difference is the compiled side's.
"""

import re

import numpy as np

from spacy_convkernels.errors import StructureSizeError, TreeParseError
from spacy_convkernels.structures.interning import CONTENTS, LABELS, PRODUCTIONS
from spacy_convkernels.structures.labels import (
    LEX,
    POS,
    ROOT_KEY,
    SYNT,
    clean_label,
    compositional_label,
    label_content,
    lexical_key,
    node_label,
)

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


def normalized(words, lemmas, tags, relations, heads, *, lowercase=True, collapse_prepositions=True):
    """(words, lemmas, tags, relations, heads, positions) of KeLP's normalization."""
    n = len(words)
    heads = [-1 if h == i or h is None or h < 0 else h for i, h in enumerate(heads)]
    relations = [r.lower() for r in relations]
    lemmas = [lemma.lower() for lemma in lemmas] if lowercase else list(lemmas)
    keep = [True] * n
    children = [[] for _ in range(n)]
    for i, h in enumerate(heads):
        if h >= 0:
            children[h].append(i)

    def remove(i):
        keep[i] = False
        for c in children[i]:
            heads[c] = heads[i]
            if heads[i] >= 0:
                children[heads[i]].append(c)
        if heads[i] >= 0:
            children[heads[i]].remove(i)
        children[i] = []

    if collapse_prepositions:
        for p in range(n):
            if relations[p] != "prep" or not keep[p]:
                continue
            objects = [c for c in children[p] if relations[c] == "pobj" and not tags[c].startswith("RB")]
            if not objects:
                continue
            obj = objects[0]
            parts = [p] + sorted(c for c in children[p] if relations[c] == "mwe")
            name = "_".join(words[k].lower() for k in parts)
            relations[obj] = "prep_" + name
            for k in parts[1:]:
                remove(k)
            children[p].remove(obj)
            children[p].insert(0, obj)
            remove(p)
    for i in range(n):
        if keep[i] and relations[i] == "punct":
            remove(i)
    roots = [i for i in range(n) if keep[i] and heads[i] < 0]
    for extra in roots[1:]:
        heads[extra] = roots[0]
    if roots:
        relations[roots[0]] = "root"
    index = {old: new for new, old in enumerate(i for i in range(n) if keep[i])}
    kept = [i for i in range(n) if keep[i]]
    return (
        tuple(words[i] for i in kept),
        tuple(lemmas[i] for i in kept),
        tuple(tags[i] for i in kept),
        tuple(relations[i] for i in kept),
        tuple(index[heads[i]] if heads[i] >= 0 else -1 for i in kept),
        tuple(kept),
    )


def span_parse(span, **options):
    start = span.start if hasattr(span, "start") else 0
    end = start + len(span)
    tokens = list(span)
    return normalized(
        [t.text for t in tokens],
        [t.lemma_ or t.text for t in tokens],
        [t.tag_ for t in tokens],
        [t.dep_ for t in tokens],
        [t.head.i - start if start <= t.head.i < end else -1 for t in tokens],
        **options,
    )


ENTER, MIDDLE, EXIT = 0, 1, 2


def tour(heads):
    dependents = [[] for _ in heads]
    root = 0
    for i, h in enumerate(heads):
        if h < 0:
            root = i
        else:
            dependents[h].append(i)
    events = []
    stack = [(ENTER, root)]
    while stack:
        event, t = stack.pop()
        events.append((event, t))
        if event == ENTER:
            deps = dependents[t]
            stack.append((EXIT, t))
            stack.extend((ENTER, d) for d in reversed(deps) if d > t)
            stack.append((MIDDLE, t))
            stack.extend((ENTER, d) for d in reversed(deps) if d < t)
    return events


def parse_trees(parse, representations):
    """{name: (labels, parents, bracket string) or None} of a normalized parse."""
    _, lemmas, tags, relations, heads, _ = parse
    if not heads:
        return {name: None for name in representations}
    tags = [clean_label(t) for t in tags]
    keys = [lexical_key(clean_label(lemma), tag) for lemma, tag in zip(lemmas, tags)]
    relations = [clean_label(r) for r in relations]
    lex = [node_label(LEX, k) for k in keys]
    pos = [node_label(POS, t) for t in tags]
    synt = [node_label(SYNT, r) for r in relations]
    comp = [compositional_label(r, keys[h] if h >= 0 else ROOT_KEY, k) for k, r, h in zip(keys, relations, heads)]
    layouts = {
        "grct": (synt, True, ()),
        "lct": (lex, False, (pos, synt)),
        "loct": (lex, False, ()),
        "cgrct": (comp, True, ()),
        "clct": (comp, False, (pos, synt, lex)),
    }
    walk = tour(heads)
    return {name: _emit(walk, *layouts[name], pos, lex) for name in representations}


def _emit(walk, own, pos_lex_inside, tail, pos, lex):
    labels, parents, text, open_nodes = [], [], [], [-1]
    for event, t in walk:
        if event == ENTER:
            parents.append(open_nodes[-1])
            open_nodes.append(len(labels))
            labels.append(own[t])
            text.append("(" + own[t])
        elif event == MIDDLE:
            if pos_lex_inside:
                parents.append(open_nodes[-1])
                parents.append(len(labels))
                labels.append(pos[t])
                labels.append(lex[t])
                text.append(f"({pos[t]}({lex[t]}))")
        else:
            for leaves in tail:
                parents.append(open_nodes[-1])
                labels.append(leaves[t])
                text.append(f"({leaves[t]})")
            open_nodes.pop()
            text.append(")")
    return tuple(labels), tuple(parents), "".join(text)
