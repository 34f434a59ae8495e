"""Small samples of real data installed with the package (source and licence in README.md
here): ``importlib.resources.files("spacy_convkernels.data") / "trec-qc-kelp-sample"``.

:data:`SAMPLES` names the ones the command line's help examples use
(``spacy-convkernels demo --list-samples`` prints their paths); :mod:`.samples` holds the
paths and raw texts the ``demo`` command runs on."""

from importlib import resources
from pathlib import Path

# name: (path under this folder, what it is)
SAMPLES = {
    "questions": ("trec-qc-kelp-sample/TREC_10.coarse.first60.klp.gz", "60 TREC questions in KeLP format, with trees"),
    "word-vectors": ("trec-qc-kelp-sample/wordspace_md300.first60.txt.gz", "KeLP word space of those questions"),
    "bionlp": ("bionlp-st-2013-ge-sample", "3 BioNLP-ST 2013 GE documents in standoff format (a directory)"),
    "bionlp-train": ("bionlp-st-2013-ge-train-sample", "the other 18 GE documents of that article (a directory)"),
    "relations": ("relations-sample/relations.jsonl", "Prodigy relations JSONL"),
    "parses": ("sample-parses/parses.spacy", "a DocBin of the questions and documents parsed by en_core_web_md"),
}


def sample_path(name: str) -> Path:
    """The installed path of the sample ``name`` (a key of :data:`SAMPLES`)."""
    return Path(str(resources.files(__name__))) / SAMPLES[name][0]
