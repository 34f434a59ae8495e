"""The ``kernel_vectors`` component: Nyström vectors of each sentence's tree.

    nlp.add_pipe("kernel_vectors", config={"representation": "lct", "n_components": 500})
    nlp.initialize(lambda: examples)     # picks the landmarks among the training sentences

``initialize`` picks ``n_components`` landmark trees among the sentences of the training
examples, or of ``landmark_corpus`` when one is given under
``[initialize.components.kernel_vectors]`` (any spaCy reader), and computes the Nyström
normalization (:class:`~spacy_convkernels.approx.Nystroem`). Then every sentence gets
``Span._.kernel_vector`` (float32, ``n_components`` values; None for a sentence left
without a tree, such as one of punctuation only) and every Doc ``Doc._.kernel_vector``,
the mean of its sentences' vectors (None when none has one). ``pipe`` computes one
kernel block per batch against the landmarks. Landmarks and normalization are saved
with the pipeline, so a reloaded pipeline gives identical vectors.

Trees are read from ``Span._.kernel_trees`` when a ``kernel_trees`` component made them,
else converted from the parse with the default options.
"""
from typing import Callable, Iterable, Iterator, Optional

import numpy as np
import srsly
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import ensure_path, minibatch

from ..approx.nystroem import Nystroem
from ..errors import ConvKernelsError
from ..structures.dependency import REPRESENTATIONS, UnknownRepresentationError
from ..structures.tree import Tree
from .registered_kernels import bind_pipeline_vectors
from .sentences import parsed_docs, sentence_trees

Span.set_extension("kernel_vector", default=None, force=True)
Doc.set_extension("kernel_vector", default=None, force=True)

DEFAULT_KERNEL = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4, "terminal_factor": 1.0}


class NotInitializedError(ConvKernelsError, RuntimeError):
    """A component with learned state was used before ``nlp.initialize`` or loading."""


@Language.factory(
    "kernel_vectors",
    default_config={"representation": "grct", "kernel": DEFAULT_KERNEL, "n_components": 500,
                    "landmarks": "uniform", "random_state": 0, "batch_size": 256},
)
def make_kernel_vectors(nlp: Language, name: str, representation: str, kernel, n_components: int, landmarks: str,
                        random_state: int, batch_size: int) -> "KernelVectors":
    return KernelVectors(nlp, name, representation=representation, kernel=bind_pipeline_vectors(kernel, nlp.vocab),
                         n_components=n_components, landmarks=landmarks, random_state=random_state,
                         batch_size=batch_size)


class KernelVectors:
    """Nyström sentence vectors (see the module docstring)."""

    def __init__(self, nlp: Language, name: str, *, representation: str, kernel, n_components: int,
                 landmarks: str = "uniform", random_state: int = 0, batch_size: int = 256):
        if representation not in REPRESENTATIONS:
            raise UnknownRepresentationError(f"{name}: representation must be one of {REPRESENTATIONS}, "
                                             f"got {representation!r}")
        self.nlp = nlp
        self.name = name
        self.representation = representation
        self.batch_size = batch_size
        self.model = Nystroem(kernel, n_components, landmarks=landmarks, dtype=np.float32, random_state=random_state)

    def initialize(self, get_examples: Callable, *, nlp: Optional[Language] = None,
                   landmark_corpus: Optional[Callable] = None) -> None:
        """Pick the landmarks among the training sentences, or those of ``landmark_corpus``."""
        nlp = nlp or self.nlp
        examples = landmark_corpus(nlp) if landmark_corpus is not None else get_examples()
        trees = [tree for doc in parsed_docs(examples, nlp, self.name)
                 for tree in sentence_trees(doc, self.representation) if tree is not None]
        if not trees:
            raise ConvKernelsError(f"{self.name}: no parsed sentence to choose landmarks from")
        self.model.fit(trees)

    def __call__(self, doc: Doc) -> Doc:
        return next(iter(self.pipe([doc], batch_size=1)))

    def pipe(self, stream: Iterable[Doc], *, batch_size: Optional[int] = None) -> Iterator[Doc]:
        if not hasattr(self.model, "normalization_"):
            raise NotInitializedError(f"{self.name}: no landmarks yet; run nlp.initialize() or load a trained pipeline")
        for batch in minibatch(stream, size=batch_size or self.batch_size):
            sentences = [(sentence, tree) for doc in batch for sentence, tree in
                         zip(doc.sents if len(doc) else [], sentence_trees(doc, self.representation))]
            with_tree = [(sentence, tree) for sentence, tree in sentences if tree is not None]
            vectors = self.model.transform([tree for _, tree in with_tree]) if with_tree else []
            for (sentence, _), vector in zip(with_tree, vectors):
                sentence._.kernel_vector = vector
            for doc in batch:
                found = [s._.kernel_vector for s in (doc.sents if len(doc) else []) if s._.kernel_vector is not None]
                doc._.kernel_vector = np.mean(found, axis=0).astype(np.float32) if found else None
                yield doc

    # serialization: the landmarks as bracket strings and the normalization matrix
    def _state(self) -> dict:
        if not hasattr(self.model, "normalization_"):
            return {}
        return {"landmarks": [str(t) for t in self.model.components_], "normalization": self.model.normalization_}

    def _set_state(self, state: dict) -> None:
        if state:
            self.model.set_landmarks([Tree.from_string(s) for s in state["landmarks"]], state["normalization"])

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        return srsly.msgpack_dumps(self._state())

    def from_bytes(self, data: bytes, *, exclude=tuple()) -> "KernelVectors":
        self._set_state(srsly.msgpack_loads(data))
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = ensure_path(path)
        path.mkdir(parents=True, exist_ok=True)
        state = self._state()
        if state:
            srsly.write_json(path / "landmarks.json", state["landmarks"])
            np.save(path / "normalization.npy", np.asarray(state["normalization"]))

    def from_disk(self, path, *, exclude=tuple()) -> "KernelVectors":
        path = ensure_path(path)
        if (path / "landmarks.json").exists():
            self._set_state({"landmarks": srsly.read_json(path / "landmarks.json"),
                             "normalization": np.load(path / "normalization.npy")})
        return self
