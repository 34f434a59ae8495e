"""The samples the ``demo`` command runs on: their installed paths and raw texts (whose
parses ``tools/make_sample_parses.py`` stores in ``sample-parses``)."""

from . import sample_path

QUESTIONS = sample_path("questions")
DOCUMENTS = sample_path("bionlp")
TRAINING_DOCUMENTS = sample_path("bionlp-train")
PARSES = sample_path("parses")


def sample_texts() -> list[str]:
    """The raw texts of the samples, questions, documents then training documents (the
    texts of the stored parses)."""
    from ..corpora import read_klp, read_standoff

    documents = [doc.text for source in (DOCUMENTS, TRAINING_DOCUMENTS) for doc in read_standoff(source)]
    return [example.texts["quest"] for example in read_klp(QUESTIONS)] + documents
