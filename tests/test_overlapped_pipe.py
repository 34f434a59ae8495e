"""``overlapped_pipe``: a batch's kernels on a worker thread while the next batch is pulled,
the Docs in order, failing batches to the error handler, the caller's OpenMP limit."""

import os
import threading

import pytest
import spacy
from kelp_parses import questions
from relation_samples import parsed_in, trained_pair_pipeline
from spacy.pipeline import TrainablePipe
from spacy.util import fix_random_seed
from threadpoolctl import threadpool_limits

from spacy_convkernels.components.overlapped_pipe import overlapped_pipe
from spacy_convkernels.kernels.base import max_threads


class Recording(TrainablePipe):
    """A component that writes each Doc's batch number, the thread it ran on and that
    thread's OpenMP limit; ``predict`` fails on batches in ``failing`` and, for the
    batches in ``waiting_for_pull``, waits until the stream has given the next Doc."""

    def __init__(self, *, failing=(), waiting_for_pull=None):
        self.name, self.batches, self.failing = "recording", 0, set(failing)
        self.waiting_for_pull = waiting_for_pull
        self.saw_the_next_pull: list[bool] = []

    def predict(self, docs):
        batch, self.batches = self.batches, self.batches + 1
        if batch in self.failing:
            raise ValueError(f"batch {batch}")
        if self.waiting_for_pull is not None:
            self.saw_the_next_pull.append(self.waiting_for_pull.wait(timeout=10))
        return batch, threading.current_thread().name, max_threads()

    def set_annotations(self, docs, annotations):
        for doc in docs:
            doc.user_data["recorded"] = annotations


def counted(docs, pulled: list, pulled_next: threading.Event | None = None):
    """The Docs, counting in ``pulled`` how many were taken; sets ``pulled_next`` at the second."""
    for doc in docs:
        pulled.append(doc)
        if pulled_next is not None and len(pulled) == 2:
            pulled_next.set()
        yield doc


def texts(n: int) -> list:
    nlp = spacy.blank("en")
    return [nlp.make_doc(f"text {i}") for i in range(n)]


def test_the_docs_come_out_in_order_annotated_on_the_worker_a_batch_ahead():
    docs, pulled = texts(7), []
    component = Recording()
    out = []
    for doc in overlapped_pipe(component, counted(docs, pulled), batch_size=2):
        out.append((doc, len(pulled)))
    assert [doc for doc, _ in out] == docs
    assert [doc.user_data["recorded"][0] for doc in docs] == [0, 0, 1, 1, 2, 2, 3]
    assert all(doc.user_data["recorded"][1].startswith("recording") for doc in docs)
    # when a batch comes out, the next one has been pulled already
    assert [seen for _, seen in out] == [4, 4, 6, 6, 7, 7, 7]


def test_a_batch_is_predicted_while_the_next_is_pulled():
    pulled_next = threading.Event()
    component = Recording(waiting_for_pull=pulled_next)
    list(overlapped_pipe(component, counted(texts(2), [], pulled_next), batch_size=1))
    assert component.saw_the_next_pull == [True, True]


def test_a_failing_batch_goes_to_the_error_handler_and_the_rest_come_out():
    docs = texts(5)
    component = Recording(failing={1})
    handled = []
    component.set_error_handler(lambda name, proc, batch, error: handled.append((name, batch, str(error))))
    out = list(overlapped_pipe(component, docs, batch_size=2))
    assert out == docs[:2] + docs[4:] and handled == [("recording", docs[2:4], "batch 1")]
    with pytest.raises(ValueError, match="batch 1"):
        list(overlapped_pipe(Recording(failing={1}), texts(5), batch_size=2))


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: every OpenMP limit is 1")
def test_the_worker_computes_under_the_callers_openmp_limit():
    """Under limits 1 and 2 (a pytest-xdist worker's default is its share of the cores),
    so that a worker keeping the process's default fails one of them."""
    for limit in (1, 2):
        with threadpool_limits(limit, user_api="openmp"):
            (doc,) = overlapped_pipe(Recording(), texts(1), batch_size=1)
        assert doc.user_data["recorded"][2] == limit


def test_kernel_relations_in_a_pipeline_annotate_as_batch_by_batch():
    nlp, extractor, _, _ = trained_pair_pipeline(tok2vec=False, steps=1)
    docs = [parsed_in(nlp) for _ in range(5)]
    expected = [dict(doc._.kernel_rel) for doc in map(extractor, [parsed_in(nlp) for _ in range(5)])]
    pulled: list = []
    out = [len(pulled) for _ in extractor.pipe(counted(docs, pulled), batch_size=2)]
    assert [dict(doc._.kernel_rel) for doc in docs] == expected
    assert out[0] == 4


@pytest.mark.slow
def test_kernel_textcat_in_a_pipeline_annotates_as_batch_by_batch():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_trees", config={"representations": ["grct"]})
    nlp.add_pipe(
        "kernel_textcat",
        name="textcat",
        config={
            "model": {
                "@architectures": "spacy_convkernels.KernelTextCat.v1",
                "kernel_features": {
                    "@architectures": "spacy_convkernels.KernelSVMFeatures.v1",
                    "representation": "grct",
                    "kernel": {"@misc": "spacy_convkernels.PartialTreeKernel.v1"},
                },
                "text_features": None,
            }
        },
    )
    examples = questions(nlp.vocab)
    nlp.initialize(lambda: examples)
    textcat = nlp.get_pipe("textcat")
    expected = [textcat(eg.predicted.copy()).cats for eg in examples]
    docs = [eg.predicted.copy() for eg in examples]
    pulled: list = []
    annotated = textcat.pipe(counted(docs, pulled), batch_size=4)
    assert next(annotated) is docs[0] and len(pulled) == 8
    list(annotated)
    assert [doc.cats for doc in docs] == expected
