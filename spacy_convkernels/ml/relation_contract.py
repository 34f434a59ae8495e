"""What a relation model promises the ``kernel_relations`` component, in one place.

A relation model is any registered architecture, given as the component's ``model``,
whose thinc model

- carries its candidate generator as ``model.attrs["candidates"]`` (a Doc's candidates,
  with ``roles``, ``options``, ``missing`` and ``margins``: :mod:`.relation_candidates`),
  which the component reads for its warnings, the margins its scores are lowered by and
  the spans of its predicted relations;
- takes Docs, makes their candidates once (:func:`candidate_batch`) and returns
  :class:`RelationScores`: that :class:`CandidateBatch` and the model's rows, one per
  candidate, in a layout of its own, with the :class:`Layout` that reads them. A
  CandidateBatch already made is taken as it is: the component's initialize makes
  one, as the gold labels of the training candidates are needed before any fit;
- is initialized with that batch as ``X`` and its gold labels as ``Y`` (a row per
  candidate, a column per label), from which it takes its width;
- backpropagates the gradient its layout's ``loss`` gives.

So the component never makes candidates and never decodes columns: a new architecture
is one module (its forward, its init and its layout) and one config block
(``tests/test_relation_architecture.py`` registers one).
"""

from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np
from spacy.tokens import Doc
from thinc.api import Model, get_array_module
from thinc.types import Floats2d
from thinc.util import to_numpy

from ..structures.relations import RelationCandidate


class CandidateGenerator(Protocol):
    """A relation model's ``attrs["candidates"]``: Doc -> candidates, with the roles of
    its candidates (in order) and its options; ``margins(doc, candidates)`` what each
    candidate's scores are lowered by (0 but for a proposed participant's); ``missing(doc)``,
    when it has one, says what a Doc lacks to have candidates (None: nothing)."""

    roles: tuple[str, ...]
    options: dict

    def __call__(self, doc: Doc) -> list[RelationCandidate]: ...

    def margins(self, doc: Doc, candidates: list[RelationCandidate]) -> list[float]: ...


class CandidateBatch(NamedTuple):
    """Docs and the candidates of each, made once: what a relation model's layers read."""

    docs: list[Doc]
    candidates: list[list[RelationCandidate]]


def candidate_batch(model: Model, inputs: list[Doc] | CandidateBatch) -> CandidateBatch:
    """``inputs`` as a :class:`CandidateBatch`: itself, or Docs whose candidates the
    model's generator makes."""
    if isinstance(inputs, CandidateBatch):
        return inputs
    docs = list(inputs)
    return CandidateBatch(docs, [model.attrs["candidates"](doc) for doc in docs])


class Layout(Protocol):
    """How a relation model's rows read: each label's score, and the loss of gold labels."""

    def label_scores(self, values: np.ndarray) -> np.ndarray:
        """Each candidate's score in [0, 1] per label (candidates x labels)."""
        ...

    def loss(self, values: Floats2d, truths: Floats2d) -> tuple[float, Floats2d]:
        """The loss of the gold labels ``truths`` (candidates x labels, 0 or 1) and the
        gradient the model's backprop takes."""
        ...


@dataclass(frozen=True)
class RelationScores:
    """A relation model's output: the ``batch`` it scored, its ``values`` (a row per
    candidate, Doc after Doc) and the ``layout`` that reads them."""

    batch: CandidateBatch
    values: Floats2d
    layout: Layout

    @property
    def candidates(self) -> list[list[RelationCandidate]]:
        """The candidates of each Doc, in the order of the rows."""
        return self.batch.candidates

    def __len__(self) -> int:
        return len(self.values)

    def label_scores(self) -> np.ndarray:
        """Each candidate's score per label, a numpy array (candidates x labels)."""
        return self.layout.label_scores(to_numpy(self.values))

    def loss(self, truths: np.ndarray) -> tuple[float, Floats2d]:
        """The loss of the candidates' gold labels (candidates x labels) and its gradient."""
        xp = get_array_module(self.values)
        return self.layout.loss(self.values, xp.asarray(truths, dtype="float32"))
