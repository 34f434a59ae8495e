"""The base of the components that do not train, in the shape of spaCy's (``TrainablePipe``):
``predict`` computes from a batch of Docs without changing them, ``set_annotations``
writes what it computed, and ``__call__`` and ``pipe`` go through both, giving a Doc that
fails to the component's error handler (``nlp.set_error_handler``; by default the error
is raised)."""

from collections.abc import Iterable, Iterator

from spacy.pipeline import Pipe
from spacy.tokens import Doc
from spacy.util import minibatch


class KernelPipe(Pipe):
    """A component that writes what ``predict`` computes (module docstring); subclasses
    define ``predict`` and ``set_annotations``."""

    name: str  # set by the subclass's constructor, as spaCy's components do
    batch_size = 128  # Docs per ``predict`` in ``pipe`` when it is given no batch size

    def predict(self, docs: list[Doc]) -> list:
        """What the component writes on each Doc, computed without changing them."""
        raise NotImplementedError

    def set_annotations(self, docs: list[Doc], predictions: list) -> None:
        """Write the predictions of ``predict`` on the Docs."""
        raise NotImplementedError

    def __call__(self, doc: Doc) -> Doc | None:  # type: ignore[override]  # None when an error handler skips it
        error_handler = self.get_error_handler()
        try:
            self.set_annotations([doc], self.predict([doc]))
            return doc
        except Exception as error:
            error_handler(self.name, self, [doc], error)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int | None = None) -> Iterator[Doc]:
        """The Docs, annotated a batch at a time; when a batch fails, its Docs one at a time,
        so that only the Docs that fail go to the error handler."""
        for docs in minibatch(stream, size=batch_size or self.batch_size):
            try:
                self.set_annotations(docs, self.predict(docs))
            except Exception:
                yield from (doc for doc in map(self, docs) if doc is not None)
            else:
                yield from docs
