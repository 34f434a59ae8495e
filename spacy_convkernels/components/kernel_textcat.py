"""The ``kernel_textcat`` and ``kernel_textcat_multilabel`` components: spaCy's textcat
and textcat_multilabel whose ``initialize`` also fits the kernel blocks of their model
on every training Doc, as the pipeline parses it.

    [components.textcat]
    factory = "kernel_textcat"

    [components.textcat.model]
    @architectures = "spacy_convkernels.KernelTextCat.v1"

    [components.textcat.model.kernel_features]
    @architectures = "spacy_convkernels.KernelSVMFeatures.v1"
    ...

spaCy's textcat initializes its model on ten reference docs. The blocks that hold an
estimator (``spacy_convkernels.KernelSVMFeatures.v1``: exact-kernel SVMs;
``spacy_convkernels.KernelNystroemFeatures.v1``: Nyström landmarks) need every training
Doc with the parse it gets at runtime: here each example's predicted Doc goes through
the components before this one (on copies), and the blocks are fitted on those Docs and
the examples' categories before the model's layers are sized. Everything else
(prediction, loss, labels, scoring, saving) is spaCy's own component; a kernel with
``vectors = "vocab"`` gets the pipeline's vectors at first use.
"""

from collections.abc import Callable, Iterable, Iterator

import numpy as np
from spacy.language import Language
from spacy.pipeline import TextCategorizer
from spacy.pipeline.textcat_multilabel import MultiLabel_TextCategorizer
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from thinc.api import Model

from ..errors import MissingAnnotationError
from ..extensions import install_extensions
from ..ml.fitted_doc_features import doc_blocks, fit_doc_blocks
from .overlapped_pipe import overlapped_pipe
from .registered_kernels import bind_model_vectors
from .sealed_pipe import SealedPipe
from .sentences import fitting_docs


class FittedKernelBlocks(SealedPipe):
    """What the two components add to spaCy's: fitting the model's kernel blocks in
    ``initialize``, and saving sealed by content hashes (:class:`~.sealed_pipe.SealedPipe`)."""

    def _prepare_blocks(self) -> None:
        """Install the tree extension the kernel blocks read."""
        if doc_blocks(self.model):
            install_extensions("span._.kernel_trees", "doc._.kernel_trees")

    def predict(self, docs):
        bind_model_vectors(self.model, self.vocab)
        return super().predict(docs)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """The Docs annotated a batch at a time, the next batch parsed meanwhile
        (:func:`~.overlapped_pipe.overlapped_pipe`)."""
        return overlapped_pipe(self, stream, batch_size=batch_size)

    def update(self, examples, **settings):
        bind_model_vectors(self.model, self.vocab)
        return super().update(examples, **settings)

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Language | None = None,
        labels: Iterable[str] | None = None,
        **settings,
    ) -> None:
        """Fit the kernel blocks on every training Doc (see the module), then initialize as spaCy's textcat."""
        validate_get_examples(get_examples, f"{self.name}.initialize")
        bind_model_vectors(self.model, self.vocab)
        examples = list(get_examples())
        if doc_blocks(self.model):
            if nlp is None:
                raise MissingAnnotationError(
                    f"{self.name}: initialize needs the pipeline (nlp=...) to parse the docs its kernel blocks fit on"
                )
            docs = list(fitting_docs(examples, nlp, self.name, "predicted"))
            fit_doc_blocks(self.model, docs, self._targets(examples, labels))
        # a mixin: super() is the spaCy textcat after it in the bases
        super().initialize(lambda: examples, nlp=nlp, labels=labels, **settings)  # type: ignore[misc]

    def _targets(self, examples: list[Example], labels: Iterable[str] | None) -> np.ndarray:
        """Each example's category (exclusive classes) or its indicator row over the labels."""
        names = sorted(labels if labels is not None else {cat for eg in examples for cat in eg.reference.cats})
        truths = np.array([[eg.reference.cats.get(name, 0.0) >= 0.5 for name in names] for eg in examples])
        if self.model.attrs.get("multi_label", False):
            return truths.astype(int)
        if not truths.any(axis=1).all():
            row = int(np.argmin(truths.any(axis=1)))
            raise MissingAnnotationError(f"{self.name}: training example {row} has no category of {names}")
        return np.array(names)[truths.argmax(axis=1)]


class KernelTextCategorizer(FittedKernelBlocks, TextCategorizer):
    """spaCy's ``TextCategorizer`` with kernel blocks fitted on every training Doc."""

    def __init__(self, vocab, model: Model, name: str = "kernel_textcat", *, threshold: float, scorer):
        super().__init__(vocab, model, name, threshold=threshold, scorer=scorer)
        self._prepare_blocks()


class KernelMultiLabelTextCategorizer(FittedKernelBlocks, MultiLabel_TextCategorizer):
    """spaCy's ``MultiLabel_TextCategorizer`` with kernel blocks fitted on every training Doc."""

    def __init__(self, vocab, model: Model, name: str = "kernel_textcat_multilabel", *, threshold: float, scorer):
        super().__init__(vocab, model, name, threshold=threshold, scorer=scorer)
        self._prepare_blocks()
