"""Similarity of Docs and Spans through tree kernels, in spaCy's terms.

    text_similarity(doc1, doc2, kernel=PartialTreeKernel(), representation="loct")

is the exact normalized kernel K(a, b) / sqrt(K(a, a) K(b, b)) between the trees of two
parsed texts. A text's tree (:func:`text_tree`) is one tree per sentence, joined under a
virtual root when there are several (:func:`~spacy_convkernels.structures.join_sentences`);
a Span that starts or ends inside a sentence contributes the tree of its part of it.

:class:`KernelVectorHooks` are the spaCy user hooks that ``kernel_vectors`` installs
with ``similarity_hook = true``: ``doc.vector`` and ``span.vector`` give the kernel vector,
``doc.similarity`` and ``span.similarity`` the cosine of two kernel vectors.
"""

import warnings

import numpy as np
from spacy.tokens import Doc, Span

from ..errors import ConvKernelsWarning, StructureTypeError
from ..ml.doc_structures import TREE_KERNEL
from ..structures.dependency import join_sentences, span_to_tree
from ..structures.tree import Tree
from ..utils.validation import validate_params


def text_tree(text: Doc | Span, representation: str = "loct") -> Tree | None:
    """The tree of a Doc or Span: its sentences' trees (read from ``Span._.kernel_trees``
    when a ``kernel_trees`` component made them) joined under a virtual root when there are
    several; None when no sentence has a tree (an empty text, punctuation only)."""
    if isinstance(text, Doc):
        return join_sentences(_sentence_trees(text, representation))
    if not isinstance(text, Span):
        raise StructureTypeError(f"a kernel compares Docs and Spans, got a {type(text).__name__}")
    if not len(text):
        return None
    parts = []
    for sentence in text.sents:  # type: ignore[attr-defined]  # Span.sents: spaCy >= 3.2, not in its stubs
        start, end = max(sentence.start, text.start), min(sentence.end, text.end)
        if (start, end) == (sentence.start, sentence.end):
            parts.append(_stored_tree(sentence, representation))
        else:
            parts.append(span_to_tree(text.doc[start:end], representation))
    return join_sentences(parts)


def _sentence_trees(doc: Doc, representation: str) -> list[Tree | None]:
    """The tree of each sentence of ``doc`` (None for one with nothing left, e.g. punctuation)."""
    return [_stored_tree(sentence, representation) for sentence in doc.sents] if len(doc) else []


def _stored_tree(sentence: Span, representation: str) -> Tree | None:
    """The sentence's tree, from ``Span._.kernel_trees`` when there, else from its parse."""
    made = sentence._.kernel_trees if Span.has_extension("kernel_trees") else None
    if made is not None and representation in made:
        return Tree.from_string(made[representation]) if made[representation] else None
    return span_to_tree(sentence, representation)


@validate_params({"kernel": [TREE_KERNEL]})
def text_similarity(a: Doc | Span, b: Doc | Span, *, kernel, representation: str = "loct") -> float:
    """The exact normalized tree kernel between two parsed Docs or Spans (see the module
    docstring); 0.0 when either has no tree (nothing to share)."""
    tree_a, tree_b = text_tree(a, representation), text_tree(b, representation)
    if tree_a is None or tree_b is None:
        return 0.0
    return kernel(tree_a, tree_b)


class KernelVectorHooks:
    """spaCy user hooks over the Nyström vectors of a fitted ``kernel_vectors`` component.

    Parameters
    ----------
    model : Nystroem
        The component's model (fitted by the time a hook is called).
    representation : str
        The component's tree representation.
    """

    def __init__(self, model, representation: str):
        self.model = model
        self.representation = representation

    def install(self, doc: Doc) -> Doc:
        """Set the ``vector`` and ``similarity`` hooks of ``doc`` and of its spans."""
        for hooks in (doc.user_hooks, doc.user_span_hooks):
            hooks["vector"] = self.vector
            hooks["similarity"] = self.similarity
        return doc

    def vector(self, text: Doc | Span) -> np.ndarray:
        """``Doc._.kernel_vector`` or ``Span._.kernel_vector`` when set; otherwise, for a Span,
        the vector of its tree (:func:`text_tree`), and for a Doc the mean of its sentences'
        vectors; zeros when the text has no tree."""
        if not isinstance(text, (Doc, Span)):
            raise StructureTypeError(f"kernel vectors are made for Docs and Spans, got a {type(text).__name__}")
        stored = text._.get("kernel_vector")
        if stored is not None:
            return stored
        if isinstance(text, Doc):
            trees = [tree for tree in _sentence_trees(text, self.representation) if tree is not None]
            found = self.model.transform(trees).mean(axis=0).astype(np.float32) if trees else None
        else:
            tree = text_tree(text, self.representation)
            found = self.model.transform([tree])[0] if tree is not None else None
        return found if found is not None else np.zeros(len(self.model.components_), dtype=np.float32)

    def similarity(self, a: Doc | Span, b) -> float:
        """The cosine of the kernel vectors of ``a`` and ``b`` (0.0, with a warning, when one
        of them has no tree)."""
        va = self.vector(a).astype(np.float64)
        vb = self.vector(b).astype(np.float64)
        norms = np.linalg.norm(va) * np.linalg.norm(vb)
        if norms == 0:
            empty = a if not va.any() else b
            warnings.warn(
                f"kernel similarity: {empty.text[:40]!r} has no tree (no kernel vector); similarity 0.0",
                ConvKernelsWarning,
                stacklevel=2,
            )
            return 0.0
        return float(va @ vb / norms)
