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

The normalization, the walk and the trees are compiled (``_dependency.pyx``); from a
Doc they are built straight from its arrays (:func:`spans_to_trees`).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from ..errors import MissingAnnotationError, UnknownRepresentationError
from ._dependency import Event, annotated, array_trees, emit_trees, normalize, role
from .labels import LEX, POS, ROOT_KEY, SYNT, clean_label, compositional_label, lexical_key, node_label
from .tree import Tree

REPRESENTATIONS = ("grct", "lct", "loct", "cgrct", "clct")
VIRTUAL_ROOT = "ROOT##sentences"
ENTER, MIDDLE, EXIT = Event.ENTER, Event.MIDDLE, Event.EXIT  # the events of a tour


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
        heads = [-1 if h is None else h for h in heads]
        relations = [r.lower() for r in relations]
        lemmas = [lemma.lower() for lemma in lemmas] if lowercase else list(lemmas)
        roles = [role(r, t) for r, t in zip(relations, tags)]
        kept, heads, root, collapsed = normalize(heads, roles, collapse_prepositions)
        for obj, parts in collapsed:
            relations[obj] = "prep_" + "_".join(words[k].lower() for k in parts)
        relations = [relations[i] for i in kept]
        if root >= 0:
            relations[root] = "root"
        return cls(
            words=tuple(words[i] for i in kept),
            lemmas=tuple(lemmas[i] for i in kept),
            tags=tuple(tags[i] for i in kept),
            relations=tuple(relations),
            heads=tuple(heads),
            positions=tuple(kept),
        )


def span_to_parse(span, *, lowercase: bool = True, collapse_prepositions: bool = True) -> DependencyParse:
    """The normalized :class:`DependencyParse` of a spaCy sentence ``Span`` (or ``Doc``).

    Heads outside the span make a token a root. Raises :class:`MissingAnnotationError`
    when the Doc has no dependency parse, tags or lemmas.
    """
    _check_annotations(span.doc if hasattr(span, "doc") else span)
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
    return span_to_trees(span, [representation], **options)[representation]


def span_to_trees(span, representations: Iterable[str] = REPRESENTATIONS, **options) -> dict[str, Tree | None]:
    """The trees of a sentence in several representations, from one parse."""
    return spans_to_trees([span], representations, **options)[0]


def spans_to_trees(
    spans: Iterable, representations: Iterable[str] = REPRESENTATIONS, *, lowercase=True, collapse_prepositions=True
) -> list[dict[str, Tree | None]]:
    """The trees of each of some Spans of one Doc (its sentences, say), as
    :func:`span_to_trees` gives them, built from the Doc's arrays read once (compiled:
    ``_dependency.array_trees``). A Span costs the length of its Doc, as the check of the
    Doc's annotations does."""
    spans = list(spans)
    if not spans:
        _checked(representations)
        return []
    doc = spans[0].doc if hasattr(spans[0], "doc") else spans[0]
    names, attributes = _array_attributes()
    whole = doc.to_array(attributes)
    _check_annotations(doc, dict(zip(names, annotated(whole))).__getitem__)
    representations = _checked(representations)
    rows = [whole[span.start : span.end] if hasattr(span, "start") else whole for span in spans]
    options = (lowercase, collapse_prepositions)
    return [array_trees(r, doc.vocab.strings, representations, *options) for r in rows]


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
    representations = _checked(representations)
    if not parse.heads:
        return dict.fromkeys(representations)
    tags = [clean_label(t) for t in parse.tags]
    keys = [lexical_key(clean_label(lemma), tag) for lemma, tag in zip(parse.lemmas, tags)]
    relations = [clean_label(r) for r in parse.relations]
    lex = [node_label(LEX, k) for k in keys]
    pos = [node_label(POS, t) for t in tags]
    synt = [node_label(SYNT, r) for r in relations]
    comp = [compositional_label(r, keys[h] if h >= 0 else ROOT_KEY, k) for k, r, h in zip(keys, relations, parse.heads)]
    return emit_trees(parse.heads, representations, synt, pos, lex, comp)


@cache
def _array_attributes() -> tuple[list[str], list[int]]:
    """What trees are built from, per token: its lemma, word, tag, relation and relative
    head (names, and spaCy's attribute ids, imported when first needed)."""
    from spacy.attrs import DEP, HEAD, LEMMA, ORTH, TAG

    return ["LEMMA", "ORTH", "TAG", "DEP", "HEAD"], [LEMMA, ORTH, TAG, DEP, HEAD]


def _checked(representations: Iterable[str]) -> list[str]:
    """The representations asked for, each known."""
    representations = list(representations)
    for name in representations:
        if name not in REPRESENTATIONS:
            raise UnknownRepresentationError(
                f"unknown tree representation {name!r}; known: {', '.join(REPRESENTATIONS)}"
            )
    return representations


def _check_annotations(doc, has_annotation=None) -> None:
    """Refuse a Doc without a dependency parse, tags or lemmas (``has_annotation``: which
    it has, by attribute name; default ``doc.has_annotation``)."""
    has_annotation = has_annotation or doc.has_annotation
    for annotation, what in (
        ("DEP", "a dependency parse (token.dep_, token.head)"),
        ("TAG", "part-of-speech tags (token.tag_)"),
        ("LEMMA", "lemmas (token.lemma_)"),
    ):
        if len(doc) and not has_annotation(annotation):
            raise MissingAnnotationError(
                f"the Doc has no {what}: run a pipeline with a parser, tagger and lemmatizer first"
            )
