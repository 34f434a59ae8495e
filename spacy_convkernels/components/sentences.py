"""What the components share: checks of their settings, the docs they are fitted on, and
the base of the components whose model is fitted on sentence trees (a Doc's sentence trees
are read by :mod:`~spacy_convkernels.ml.doc_structures`)."""

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import srsly
from spacy import util
from spacy.language import Language
from spacy.tokens import Doc

from ..errors import (
    ConvKernelsError,
    MissingAnnotationError,
    ModelFileError,
    NotInitializedError,
    UnknownRepresentationError,
)
from ..extensions import install_extensions
from ..ml.doc_structures import TREE_KERNEL, read_structure, sentence_trees
from ..structures.dependency import REPRESENTATIONS
from ..structures.forest import Forest
from ..structures.tree import Tree
from ..utils.saved_arrays import reading, sealed, unsealed
from ..utils.validation import COUNT
from .kernel_trees import KernelTrees
from .pipe import KernelPipe
from .registered_kernels import bind_pipeline_vectors, refuse_vector_files

TREE_SOURCES = ("predicted", "reference")


#: The constraints of the settings every :class:`SentenceTreeModel` has.
SENTENCE_MODEL_PARAMETERS = {"kernel": [TREE_KERNEL], "batch_size": [COUNT]}


def runtime_components(nlp: Language) -> list:
    """The enabled components, and the disabled ones that ``[training] frozen_components``
    names: ``spacy train`` disables those while it initializes the others, but they run
    in training (when annotating) and at runtime."""
    training = nlp.config.get("training", {})
    frozen = set(training.get("frozen_components", []))
    return [(name, component) for name, component in nlp.components if name not in nlp.disabled or name in frozen]


def fitting_docs(examples: Iterable, nlp: Language, component_name: str, source: str) -> Iterator[Doc]:
    """The docs a component is fitted on, made as the pipeline will make them at runtime:
    with ``source="predicted"``, a copy of each example's predicted doc through every
    runtime component before ``component_name``; with ``"reference"``, a copy of its reference
    (gold) doc through the ``kernel_trees`` components before it."""
    docs: Iterable[Doc] = (
        (example.predicted if source == "predicted" else example.reference).copy() for example in examples
    )
    for name, component in runtime_components(nlp):
        if name == component_name:
            break
        if source == "predicted" or isinstance(component, KernelTrees):
            docs = component.pipe(docs) if hasattr(component, "pipe") else map(component, docs)
    for doc in docs:
        if len(doc) and not doc.has_annotation("DEP"):
            advice = (
                "put a parser before it, or fit on the reference docs"
                if source == "predicted"
                else "fit on parsed docs"
            )
            raise MissingAnnotationError(
                f"{component_name}: a {source} training doc has no dependency parse ({doc.text[:40]!r}); {advice}"
            )
        yield doc


class SentenceTreeModel(KernelPipe):
    """A component around a model fitted on sentence trees: ``initialize`` fits it on the
    trees of the training sentences (or of a corpus given at initialization), ``predict``
    computes ``model.transform`` of each sentence's tree, one call per batch, and
    ``set_annotations`` writes the values to ``Span._.<extension>`` (None for a sentence
    without a tree) and a summary of them to ``Doc._.<extension>``; the fitted state is
    saved with the pipeline (``model``, which ``exclude`` can leave out).

    Subclasses set ``extension``, ``fitted_attribute`` (set once the model is fitted) and
    ``minimum_trees``, validate their settings (``validate_params`` on their constructor,
    with ``SENTENCE_MODEL_PARAMETERS``) and define ``doc_value``, ``_state`` and ``_set_state``."""

    extension: str
    fitted_attribute: str
    minimum_trees: int = 1

    def __init__(self, nlp: Language, name: str, representation: str, batch_size: int, model, tree_source: str):
        if representation not in REPRESENTATIONS:
            raise UnknownRepresentationError(
                f"{name}: representation must be one of {REPRESENTATIONS}, got {representation!r}"
            )
        install_extensions(
            "span._.kernel_trees",
            "doc._.kernel_trees",
            "span._.kernel_forest",
            f"span._.{self.extension}",
            f"doc._.{self.extension}",
        )
        self.nlp = nlp
        self.name = name
        self.representation = representation
        self.batch_size = batch_size
        self.model = model
        self.tree_source = tree_source

    def _bind_vectors(self) -> None:
        """Give a kernel with ``vectors="vocab"`` the pipeline's vectors, at first use: when
        ``spacy.load`` creates the component, they are not loaded yet."""
        bind_pipeline_vectors(self.model.kernel, self.nlp.vocab)

    def _fit(self, get_examples: Callable, *, nlp: Language | None, corpus: Callable | None) -> None:
        """Fit the model on the trees of the training sentences, or of ``corpus`` (a spaCy reader)."""
        nlp = nlp or self.nlp
        self._bind_vectors()
        examples = corpus(nlp) if corpus is not None else get_examples()
        trees = [
            tree
            for doc in fitting_docs(examples, nlp, self.name, self.tree_source)
            for tree in sentence_trees(doc, self.representation, self.model.kernel.structure_type)
            if tree is not None
        ]
        if len(trees) < self.minimum_trees:
            raise ConvKernelsError(
                f"{self.name}: {len(trees)} training sentences with a tree, at least {self.minimum_trees} needed"
            )
        self.model.fit(trees)

    def _read(self, texts: list[str]) -> list[Tree | Forest]:
        """Structures of the kernel's type from their text forms."""
        return [read_structure(self.model.kernel, text) for text in texts]

    def doc_value(self, values: list):
        """``Doc._.<extension>`` from the values of its sentences (None where no tree)."""
        raise NotImplementedError

    def predict(self, docs: list[Doc]) -> list[list]:
        """The values of each Doc's sentences (None for a sentence without a tree)."""
        if not hasattr(self.model, self.fitted_attribute):
            raise NotInitializedError(f"{self.name}: not fitted yet; run nlp.initialize() or load a trained pipeline")
        self._bind_vectors()
        trees = [sentence_trees(doc, self.representation, self.model.kernel.structure_type) for doc in docs]
        found = [tree for doc_trees in trees for tree in doc_trees if tree is not None]
        values = iter(self.model.transform(found) if found else [])
        return [[None if tree is None else next(values) for tree in doc_trees] for doc_trees in trees]

    def set_annotations(self, docs: list[Doc], predictions: list[list]) -> None:
        for doc, values in zip(docs, predictions):
            for sentence, value in zip(doc.sents if len(doc) else [], values):
                sentence._.set(self.extension, value)
            doc._.set(self.extension, self.doc_value(values))

    def _state(self) -> dict:
        raise NotImplementedError

    def _set_state(self, state: dict) -> None:
        raise NotImplementedError

    def _state_bytes(self) -> bytes:
        """The state, sealed with its content hashes (:mod:`~spacy_convkernels.utils.saved_arrays`); {} unfitted."""
        return srsly.msgpack_dumps(sealed(self._state()) if hasattr(self.model, self.fitted_attribute) else {})

    def _load_state(self, data: bytes, source: str) -> None:
        """The state of ``_state_bytes``; a damaged one raises :class:`ModelFileError`
        naming the component and ``source``."""
        refuse_vector_files([self.model.kernel], self.name)
        with reading(f"{self.name}: {source}"):
            state = srsly.msgpack_loads(data)
            if state != {}:
                self._bind_vectors()
                self._set_state(unsealed(state))

    def _load_state_file(self, path: Path) -> None:
        with reading(f"{self.name}: {path}"):
            data = path.read_bytes()
        self._load_state(data, source=str(path))

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return util.to_bytes({"model": self._state_bytes}, exclude)

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()):
        with reading(f"{self.name}: its bytes"):
            saved = srsly.msgpack_loads(data)
            if not isinstance(saved, dict) or set(saved) - {"model"}:
                raise ModelFileError("not the bytes of a saved component")
            if "model" not in exclude and "model" in saved:  # as spaCy's from_bytes: bytes saved without it
                self._load_state(saved["model"], source="its bytes")
        return self

    def to_disk(self, path, *, exclude: Iterable[str] = tuple()) -> None:
        def write(p: Path) -> None:
            p.write_bytes(self._state_bytes())

        util.to_disk(path, {"model.msgpack": write}, exclude)

    def from_disk(self, path, *, exclude: Iterable[str] = tuple()):
        util.from_disk(path, {"model.msgpack": self._load_state_file}, exclude)
        return self
