"""``pipe`` for a trainable component whose kernels run while the components before it
parse the next batch.

``TrainablePipe.pipe`` annotates a batch, yields it, and only then pulls the next batch
through the components before it (spaCy's pipes are generators). Here ``predict`` and
``set_annotations`` of a batch run on one worker thread while the calling thread pulls
the next batch: the kernel engine releases the GIL, so on two cores the parse of batch
i + 1 and the kernels of batch i run at the same time. The Docs come out in order, a
batch once the worker has annotated it; a batch that fails goes to the component's
error handler, as in ``TrainablePipe.pipe``. At most two batches are in flight. The
worker computes under the caller's OpenMP thread limit (``OMP_NUM_THREADS``,
threadpoolctl, one thread in a forked process), which a new thread would not inherit.
"""

import contextvars
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.util import minibatch

from ..kernels.base import n_threads, set_max_threads


def overlapped_pipe(component: TrainablePipe, stream: Iterable[Doc], *, batch_size: int) -> Iterator[Doc]:
    """The Docs of ``stream``, annotated by ``component`` a batch at a time, each batch on
    the worker thread while the next is pulled (module docstring)."""
    error_handler = component.get_error_handler()

    def annotate(docs: list[Doc]) -> None:
        component.set_annotations(docs, component.predict(docs))

    def finished(docs: list[Doc], annotated: Future) -> list[Doc]:
        try:
            annotated.result()
        except Exception as error:
            error_handler(component.name, component, docs, error)
            return []
        return docs

    worker = ThreadPoolExecutor(
        max_workers=1,
        thread_name_prefix=component.name,
        initializer=set_max_threads,
        initargs=(n_threads(None),),
    )
    try:
        waiting: tuple[list[Doc], Future] | None = None
        for docs in minibatch(stream, size=batch_size):
            # in the caller's context: thinc keeps its current ops in a context variable
            submitted = (docs, worker.submit(contextvars.copy_context().run, annotate, docs))
            if waiting is not None:
                yield from finished(*waiting)
            waiting = submitted
        if waiting is not None:
            yield from finished(*waiting)
    finally:
        worker.shutdown(wait=True, cancel_futures=True)
