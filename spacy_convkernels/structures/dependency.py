"""Dependency parses as trees: GRCT, LCT, LOCT and the compositional CGRCT and CLCT.

The representations of Croce, Moschitti & Basili (2011) and Annesi, Croce & Basili
(2014), with KeLP's label conventions (see any tree of ``trec-qc-kelp``), for a sentence
with tokens t (children in word order):

- GRCT: ``SYNT##rel(t)`` over [GRCT of the dependents before t] ``POS##tag(LEX##lemma::p)``
  [GRCT of the dependents after t];
- LCT: ``LEX##lemma::p`` over [LCT of every dependent] ``POS##tag`` ``SYNT##rel``;
- LOCT: ``LEX##lemma::p`` over [LOCT of every dependent];
- CGRCT: the GRCT with ``SYNT##rel`` replaced by ``COMP##rel<head::p,lemma::p>``
  (the root: ``COMP##root<*::*,lemma::p>``);
- CLCT: ``COMP##rel<head::p,lemma::p>`` over [CLCT of every dependent] ``POS##tag``
  ``SYNT##rel`` ``LEX##lemma::p``.

``p`` is the lower-cased first character of the tag (KeLP's POS initial: NNS -> n,
WRB -> w, -LRB- -> -). The root's relation is ``root``. Before building, a parse is
normalized as KeLP's data was: punctuation (relation ``punct``) is dropped, a
preposition (``prep``) with an object (``pobj``) is collapsed into the relation
``prep_<word>`` from its head to the object, multi-word parts (``mwe``) joining the word
(``prep_out_of``); as in KeLP's data, a preposition stays when its object is an adverb
(tag ``RB*``: "from here", "by much") or a clause (``pcomp``); a sentence with several roots keeps
the first as root and hangs the others under it. Parentheses in labels are written
``-LRB-`` and ``-RRB-``, and every whitespace character (``str.isspace``: no-break
space, ``\\r``, U+3000, ...), control character (category Cc) and lone surrogate ``_``,
so the bracket string of every tree reads back as the same tree.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import MissingAnnotationError, UnknownRepresentationError
from .labels import LEX, POS, ROOT_KEY, SYNT, clean_label, compositional_label, lexical_key, node_label
from .tree import Tree

REPRESENTATIONS = ("grct", "lct", "loct", "cgrct", "clct")
VIRTUAL_ROOT = "ROOT##sentences"


@dataclass(frozen=True)
class DependencyParse:
    """One sentence, normalized: per token its word, lemma, tag, relation and head (-1: root).

    Parameters
    ----------
    words, lemmas, tags, relations : tuple of str
        Per token, in order (the root's relation is ``root``).
    heads : tuple of int
        Per token, the index of its head, -1 for the root.
    positions : tuple of int
        Per token, its index in the raw parse before normalization (empty when unknown);
        not compared.
    """

    words: tuple[str, ...]
    lemmas: tuple[str, ...]
    tags: tuple[str, ...]
    relations: tuple[str, ...]
    heads: tuple[int, ...]
    positions: tuple[int, ...] = field(default=(), compare=False)

    @classmethod
    def normalized(
        cls, words, lemmas, tags, relations, heads, *, lowercase=True, collapse_prepositions=True
    ) -> "DependencyParse":
        """Apply KeLP's normalization (module docstring) to a raw parse whose ``heads``
        index the tokens (-1 or the token itself for a root)."""
        n = len(words)
        heads = [-1 if h == i or h is None or h < 0 else h for i, h in enumerate(heads)]
        relations = [r.lower() for r in relations]
        lemmas = [lemma.lower() for lemma in lemmas] if lowercase else list(lemmas)
        keep = [True] * n
        children: list[list[int]] = [[] for _ in range(n)]
        for i, h in enumerate(heads):
            if h >= 0:
                children[h].append(i)

        def remove(i):
            """Drop token i; its dependents move up to its head."""
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
                children[p].insert(0, obj)  # the object takes the preposition's place
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
        return cls(
            words=tuple(words[i] for i in kept),
            lemmas=tuple(lemmas[i] for i in kept),
            tags=tuple(tags[i] for i in kept),
            relations=tuple(relations[i] for i in kept),
            heads=tuple(index[heads[i]] if heads[i] >= 0 else -1 for i in kept),
            positions=tuple(kept),
        )


def span_to_parse(span, *, lowercase: bool = True, collapse_prepositions: bool = True) -> DependencyParse:
    """The normalized :class:`DependencyParse` of a spaCy sentence ``Span`` (or ``Doc``).

    Heads outside the span make a token a root. Raises :class:`MissingAnnotationError`
    when the Doc has no dependency parse, tags or lemmas.
    """
    doc = span.doc if hasattr(span, "doc") else span
    for annotation, what in (
        ("DEP", "a dependency parse (token.dep_, token.head)"),
        ("TAG", "part-of-speech tags (token.tag_)"),
        ("LEMMA", "lemmas (token.lemma_)"),
    ):
        if len(doc) and not doc.has_annotation(annotation):
            raise MissingAnnotationError(
                f"the Doc has no {what}: run a pipeline with a parser, tagger and lemmatizer first"
            )
    start = span.start if hasattr(span, "start") else 0
    end = start + len(span)
    tokens = list(span)
    return DependencyParse.normalized(
        [t.text for t in tokens],
        [t.lemma_ or t.text for t in tokens],
        [t.tag_ for t in tokens],
        [t.dep_ for t in tokens],
        [t.head.i - start if start <= t.head.i < end else -1 for t in tokens],
        lowercase=lowercase,
        collapse_prepositions=collapse_prepositions,
    )


def span_to_tree(span, representation: str, **options) -> Tree | None:
    """The tree of a spaCy sentence ``Span`` in one representation (``grct``, ``lct``,
    ``loct``, ``cgrct`` or ``clct``; None for an empty one); options as :func:`span_to_parse`."""
    return parse_to_trees(span_to_parse(span, **options), [representation])[representation]


def span_to_trees(span, representations: Iterable[str] = REPRESENTATIONS, **options) -> dict[str, Tree | None]:
    """The trees of a sentence in several representations, from one parse."""
    return parse_to_trees(span_to_parse(span, **options), representations)


def join_sentences(trees: Iterable[Tree | None]) -> Tree | None:
    """One tree for a text of several sentences: the sentence trees (those not None) in order
    under a virtual root labelled ``VIRTUAL_ROOT``; a lone sentence tree is returned as it
    is, and None when no sentence has a tree. The virtual root matches only another
    virtual root, so two texts of several sentences share it (and their fragments that
    span sentences), and a text of one sentence compares with another one's sentences."""
    present = [tree for tree in trees if tree is not None]
    if len(present) > 1:
        return Tree(VIRTUAL_ROOT, present)
    return present[0] if present else None


def parse_to_trees(parse: DependencyParse, representations: Iterable[str] = REPRESENTATIONS) -> dict[str, Tree | None]:
    """Build the requested representations of a normalized parse (None for an empty one)."""
    representations = list(representations)
    for name in representations:
        if name not in REPRESENTATIONS:
            raise UnknownRepresentationError(
                f"unknown tree representation {name!r}; known: {', '.join(REPRESENTATIONS)}"
            )
    n = len(parse.heads)
    if n == 0:
        return {name: None for name in representations}
    tags = [clean_label(t) for t in parse.tags]
    keys = [lexical_key(clean_label(lemma), tag) for lemma, tag in zip(parse.lemmas, tags)]
    relations = [clean_label(r) for r in parse.relations]
    lex = [node_label(LEX, k) for k in keys]
    pos = [node_label(POS, t) for t in tags]
    synt = [node_label(SYNT, r) for r in relations]
    comp = [compositional_label(r, keys[h] if h >= 0 else ROOT_KEY, k) for k, r, h in zip(keys, relations, parse.heads)]
    layouts = {  # the node a token becomes; whether POS(LEX) sits among its dependents; leaves after them
        "grct": (synt, True, ()),
        "lct": (lex, False, (pos, synt)),
        "loct": (lex, False, ()),
        "cgrct": (comp, True, ()),
        "clct": (comp, False, (pos, synt, lex)),
    }
    walk = tour(parse.heads)
    return {name: _emit(walk, *layouts[name], pos, lex) for name in representations}


ENTER, MIDDLE, EXIT = 0, 1, 2  # the events of a tour


def tour(heads: Sequence[int]) -> list[tuple[int, int]]:
    """(event, token) in the order a word-ordered walk of the dependency tree meets them:
    entering a token, passing it (its dependents before it are done, those after it to
    come) and leaving it. Iterative, so any depth."""
    dependents: list[list[int]] = [[] for _ in heads]
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


def _emit(walk, own, pos_lex_inside, tail, pos, lex) -> Tree:
    """One representation: preorder labels and parents, and the bracket string alongside."""
    labels: list[str] = []
    parents: list[int] = []
    text: list[str] = []
    open_nodes = [-1]
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
    return Tree._trusted(tuple(labels), tuple(parents), "".join(text))
