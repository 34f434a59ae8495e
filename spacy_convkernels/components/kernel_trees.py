"""The ``kernel_trees`` component: a sentence's dependency parse as kernel-ready trees.

    nlp.add_pipe("kernel_trees", config={"representations": ["grct", "lct"]})

writes ``Span._.kernel_trees`` on every sentence (representation name to bracket
string); ``Doc._.kernel_trees`` reads them back as a list, one dict per sentence. The
values are plain strings stored with the sentences, so they survive
``DocBin(store_user_data=True)`` and ``nlp.pipe(..., n_process=N)``;
``Tree.from_string`` gives the trees back.
"""

from spacy.tokens import Doc

from ..errors import MissingAnnotationError, UnknownRepresentationError
from ..extensions import install_extensions
from ..structures.dependency import REPRESENTATIONS, spans_to_trees
from .pipe import KernelPipe


class KernelTrees(KernelPipe):
    """Writes the tree representations of each sentence (see the module docstring).

    Parameters
    ----------
    name : str, default="kernel_trees"
        The component's name in the pipeline.
    representations : sequence of str, default=all of ``REPRESENTATIONS``
        Which trees to write: "grct", "lct", "loct", "cgrct", "clct" (Croce et al. 2011,
        Annesi et al. 2014; :func:`~spacy_convkernels.structures.span_to_trees`).
    lowercase : bool, default=True
        Lower-case the lemmas of the lexical nodes.
    collapse_prepositions : bool, default=True
        Collapse a preposition and its object into the relation ``prep_<word>``, as
        KeLP's data (:mod:`~spacy_convkernels.structures.dependency`).
    """

    def __init__(
        self,
        name: str = "kernel_trees",
        representations=REPRESENTATIONS,
        *,
        lowercase: bool = True,
        collapse_prepositions: bool = True,
    ):
        unknown = [r for r in representations if r not in REPRESENTATIONS]
        if unknown or not representations:
            raise UnknownRepresentationError(
                f"kernel_trees: representations must be some of {', '.join(REPRESENTATIONS)}, "
                f"got {list(representations)}"
            )
        install_extensions("span._.kernel_trees", "doc._.kernel_trees")
        self.name = name
        self.representations = list(representations)
        self.options = {"lowercase": lowercase, "collapse_prepositions": collapse_prepositions}

    def predict(self, docs: list[Doc]) -> list[list[dict]]:
        """Each Doc's sentences' trees, as ``Span._.kernel_trees`` holds them."""
        for doc in docs:
            if len(doc) and not doc.has_annotation("DEP"):
                raise MissingAnnotationError(
                    f"{self.name}: the Doc {doc.text[:40]!r} has no dependency parse (token.dep_, token.head); "
                    "put a parser before this component"
                )
        return [self._strings(doc) if len(doc) else [] for doc in docs]

    def _strings(self, doc: Doc) -> list[dict[str, str]]:
        """Each sentence's bracket strings ("" for a sentence without a tree)."""
        sentences = spans_to_trees(doc.sents, self.representations, **self.options)
        return [{name: "" if tree is None else str(tree) for name, tree in trees.items()} for trees in sentences]

    def set_annotations(self, docs: list[Doc], predictions: list[list[dict]]) -> None:
        for doc, sentences in zip(docs, predictions):
            for sentence, trees in zip(doc.sents if len(doc) else [], sentences):
                sentence._.kernel_trees = trees
