"""What the tree-based components share: a Doc's sentence trees, parsed training docs,
and the base of the components whose model is fitted on sentence trees."""
from typing import Iterable, Iterator, List, Optional

import srsly
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import ensure_path, minibatch

from ..errors import ConvKernelsError
from ..structures.dependency import REPRESENTATIONS, UnknownRepresentationError, span_to_tree
from ..structures.tree import Tree


class NotInitializedError(ConvKernelsError, RuntimeError):
    """A component with learned state was used before ``nlp.initialize`` or loading."""


def sentence_trees(doc: Doc, representation: str) -> List[Optional[Tree]]:
    """One tree per sentence (None for a sentence with nothing left, e.g. punctuation), read
    from ``Span._.kernel_trees`` when a ``kernel_trees`` component made them, else
    converted from the parse with the default options."""
    if not len(doc):
        return []
    trees = []
    for sentence in doc.sents:
        made = sentence._.kernel_trees
        if made is not None and representation in made:
            trees.append(Tree.from_string(made[representation]) if made[representation] else None)
        else:
            trees.append(span_to_tree(sentence, representation))
    return trees


def parsed_docs(examples: Iterable, nlp: Language, component_name: str) -> Iterator[Doc]:
    """The examples' gold docs when parsed, else their texts through the components before ``component_name``."""
    before = []
    for name, component in nlp.pipeline:
        if name == component_name:
            break
        before.append(component)
    for example in examples:
        doc = example.reference
        if not doc.has_annotation("DEP"):
            doc = example.predicted
            for component in before:
                doc = component(doc)
        yield doc


class SentenceTreeModel:
    """A component around a model fitted on sentence trees: ``initialize`` fits it on the
    trees of the training sentences (or of a corpus given at initialization), ``pipe``
    writes ``model.transform`` of each sentence's tree to ``Span._.<extension>`` (None for
    a sentence without a tree) and a summary of them to ``Doc._.<extension>``, one batch
    of sentences per ``transform`` call; the fitted state is saved with the pipeline.

    Subclasses set ``extension`` and ``fitted_attribute`` (set once the model is fitted),
    and define ``doc_value``, ``_state`` and ``_set_state``."""

    extension: str
    fitted_attribute: str

    def __init__(self, nlp: Language, name: str, representation: str, batch_size: int, model):
        if representation not in REPRESENTATIONS:
            raise UnknownRepresentationError(f"{name}: representation must be one of {REPRESENTATIONS}, "
                                             f"got {representation!r}")
        self.nlp = nlp
        self.name = name
        self.representation = representation
        self.batch_size = batch_size
        self.model = model

    def _fit(self, examples: Iterable, nlp: Language) -> None:
        trees = [tree for doc in parsed_docs(examples, nlp, self.name)
                 for tree in sentence_trees(doc, self.representation) if tree is not None]
        if not trees:
            raise ConvKernelsError(f"{self.name}: no parsed sentence to fit on")
        self.model.fit(trees)

    def doc_value(self, values: list):
        """``Doc._.<extension>`` from the values of its sentences (None where no tree)."""
        raise NotImplementedError

    def __call__(self, doc: Doc) -> Doc:
        return next(iter(self.pipe([doc], batch_size=1)))

    def pipe(self, stream: Iterable[Doc], *, batch_size: Optional[int] = None) -> Iterator[Doc]:
        if not hasattr(self.model, self.fitted_attribute):
            raise NotInitializedError(f"{self.name}: not fitted yet; run nlp.initialize() or load a trained pipeline")
        for batch in minibatch(stream, size=batch_size or self.batch_size):
            sentences = [(sentence, tree) for doc in batch for sentence, tree in
                         zip(doc.sents if len(doc) else [], sentence_trees(doc, self.representation))]
            with_tree = [(sentence, tree) for sentence, tree in sentences if tree is not None]
            values = self.model.transform([tree for _, tree in with_tree]) if with_tree else []
            for (sentence, _), value in zip(with_tree, values):
                sentence._.set(self.extension, value)
            for doc in batch:
                doc._.set(self.extension, self.doc_value([s._.get(self.extension) for s in doc.sents] if len(doc) else []))
                yield doc

    def _state(self) -> dict:
        raise NotImplementedError

    def _set_state(self, state: dict) -> None:
        raise NotImplementedError

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        return srsly.msgpack_dumps(self._state() if hasattr(self.model, self.fitted_attribute) else {})

    def from_bytes(self, data: bytes, *, exclude=tuple()):
        state = srsly.msgpack_loads(data)
        if state:
            self._set_state(state)
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = ensure_path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / "model.msgpack").write_bytes(self.to_bytes())

    def from_disk(self, path, *, exclude=tuple()):
        path = ensure_path(path)
        if (path / "model.msgpack").exists():
            self.from_bytes((path / "model.msgpack").read_bytes())
        return self
