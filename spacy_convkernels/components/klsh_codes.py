"""The ``klsh_codes`` component: a KLSH bit code for each sentence's tree.

    nlp.add_pipe("klsh_codes", config={"representation": "grct", "n_bits": 256})
    nlp.initialize(lambda: examples)      # draws the reference set among the training sentences

``initialize`` draws ``n_references`` reference trees among the sentences of the
training examples (or of ``reference_corpus`` under ``[initialize.components.klsh_codes]``)
and the hash functions (:class:`~spacy_convkernels.approx.KLSH`); every sentence then
gets ``Span._.klsh_code``, its code packed 8 bits to a byte (uint8 array, None for a
sentence without a tree), and every Doc ``Doc._.klsh_code``, the list of its sentences'
codes. Reference set and hash functions are saved with the pipeline.
"""
from typing import Callable, Iterable, Iterator, Optional

import numpy as np
import srsly
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import ensure_path, minibatch

from ..approx.klsh import KLSH
from ..errors import ConvKernelsError
from ..structures.dependency import REPRESENTATIONS, UnknownRepresentationError
from ..structures.tree import Tree
from .kernel_vectors import DEFAULT_KERNEL, NotInitializedError
from .registered_kernels import bind_pipeline_vectors
from .sentences import parsed_docs, sentence_trees

Span.set_extension("klsh_code", default=None, force=True)
Doc.set_extension("klsh_code", default=None, force=True)


@Language.factory(
    "klsh_codes",
    default_config={"representation": "grct", "kernel": DEFAULT_KERNEL, "n_references": 100, "n_bits": 256,
                    "subset_size": 20, "hash_function": "random_knn", "random_state": 0, "batch_size": 256},
)
def make_klsh_codes(nlp: Language, name: str, representation: str, kernel, n_references: int, n_bits: int,
                    subset_size: int, hash_function: str, random_state: int, batch_size: int) -> "KLSHCodes":
    return KLSHCodes(nlp, name, representation=representation, kernel=bind_pipeline_vectors(kernel, nlp.vocab),
                     n_references=n_references, n_bits=n_bits, subset_size=subset_size,
                     hash_function=hash_function, random_state=random_state, batch_size=batch_size)


class KLSHCodes:
    """KLSH sentence codes (see the module docstring)."""

    def __init__(self, nlp: Language, name: str, *, representation: str, kernel, n_references: int, n_bits: int,
                 subset_size: int = 20, hash_function: str = "random_knn", random_state: int = 0,
                 batch_size: int = 256):
        if representation not in REPRESENTATIONS:
            raise UnknownRepresentationError(f"{name}: representation must be one of {REPRESENTATIONS}, "
                                             f"got {representation!r}")
        self.nlp = nlp
        self.name = name
        self.representation = representation
        self.batch_size = batch_size
        self.model = KLSH(kernel, n_references, n_bits, subset_size, hash_function, random_state)

    def initialize(self, get_examples: Callable, *, nlp: Optional[Language] = None,
                   reference_corpus: Optional[Callable] = None) -> None:
        nlp = nlp or self.nlp
        examples = reference_corpus(nlp) if reference_corpus is not None else get_examples()
        trees = [tree for doc in parsed_docs(examples, nlp, self.name)
                 for tree in sentence_trees(doc, self.representation) if tree is not None]
        if not trees:
            raise ConvKernelsError(f"{self.name}: no parsed sentence to draw references from")
        self.model.fit(trees)

    def __call__(self, doc: Doc) -> Doc:
        return next(iter(self.pipe([doc], batch_size=1)))

    def pipe(self, stream: Iterable[Doc], *, batch_size: Optional[int] = None) -> Iterator[Doc]:
        if not hasattr(self.model, "references_"):
            raise NotInitializedError(f"{self.name}: no reference set yet; run nlp.initialize() or load a trained pipeline")
        for batch in minibatch(stream, size=batch_size or self.batch_size):
            pairs = [(sentence, tree) for doc in batch for sentence, tree in
                     zip(doc.sents if len(doc) else [], sentence_trees(doc, self.representation))]
            with_tree = [(sentence, tree) for sentence, tree in pairs if tree is not None]
            codes = self.model.transform([tree for _, tree in with_tree]) if with_tree else []
            for (sentence, _), code in zip(with_tree, codes):
                sentence._.klsh_code = code
            for doc in batch:
                doc._.klsh_code = [s._.klsh_code for s in doc.sents] if len(doc) else []
                yield doc

    def _state(self) -> dict:
        if not hasattr(self.model, "references_"):
            return {}
        state = {"references": [str(t) for t in self.model.references_]}
        if self.model.hash_function == "random_knn":
            state["subsets"] = self.model.subsets_
        else:
            state["hyperplanes"] = self.model.hyperplanes_
        return state

    def _set_state(self, state: dict) -> None:
        if not state:
            return
        self.model.set_references([Tree.from_string(s) for s in state["references"]])
        if "subsets" in state:
            self.model.subsets_ = np.asarray(state["subsets"])
        else:
            self.model.hyperplanes_ = np.asarray(state["hyperplanes"])

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        return srsly.msgpack_dumps(self._state())

    def from_bytes(self, data: bytes, *, exclude=tuple()) -> "KLSHCodes":
        self._set_state(srsly.msgpack_loads(data))
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = ensure_path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / "klsh.msgpack").write_bytes(self.to_bytes())

    def from_disk(self, path, *, exclude=tuple()) -> "KLSHCodes":
        path = ensure_path(path)
        if (path / "klsh.msgpack").exists():
            self.from_bytes((path / "klsh.msgpack").read_bytes())
        return self
