"""Run the package end to end on the samples installed with it, from raw text, and print what it finds.

    python -m spacy_convkernels demo
    python -m spacy_convkernels demo --model en_core_web_sm
    python -m spacy_convkernels demo --list-samples

The raw texts are the samples of ``spacy_convkernels/data``: 60 TREC questions (with
their coarse classes) and 21 BioNLP-ST 2013 GE documents, the sections of one article
(with their gold proteins, event triggers and interactions), 18 to train on and 3 held
out. With ``--model`` (a spaCy pipeline with a tagger, lemmatizer and parser; its NER is
left out) they are parsed on the spot. Without it, their parses
by en_core_web_md 3.8.0, stored with the package (``data/sample-parses``), stand in for
the parser: the package's registries (PyPI) have no official spaCy parser, so a fresh
machine may have none. Then, in order:

1. trees: the five tree representations of every question (``kernel_trees``' conversion);
2. kernel values: the normalized partial tree kernel (PTK) Gram of the questions' GRCTs;
3. Nyström vectors of that kernel (20 landmarks) and how well they approximate it;
4. KLSH codes (16 bits, 20 references) and the nearest question by Hamming distance;
5. a text classifier: an SVM on the PTK Gram trained on 45 questions, scored on the other 15;
6. relation extraction: the ``kernel_relations`` component as the shipped
   ``bionlp_relations`` config sets it up (its component block, optimizer, batches and
   dropout; the 8 epochs of its refit) trained on the 18 documents, given their gold
   proteins and triggers (the shared task's gold-trigger setting), then scored by its own
   scorer on the 3 held-out documents (held out, but of the same article), as
   ``evaluate relations --triggers gold`` scores: micro precision, recall and F1, the
   predictions (the labels at or above the component's threshold, chosen at initialize
   on the training documents), how many are right, how many gold interactions are
   missed, and a few predictions, evenly spaced in text order, to judge.

``--list-samples`` prints the samples' names and paths instead; ``--sample NAME`` prints
one path, for the other commands' examples: ``"$(python -m spacy_convkernels demo --sample
questions)"`` is the installed path of the 60 questions.
"""

import argparse

from ..data import SAMPLES, sample_path
from ..utils.outputs import pipeline_path
from .options import add_checked_argument, processes, threads


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--model", default=None, help="a spaCy pipeline with a parser (name or path) to parse with")
    add_checked_argument(
        parser, "--n-jobs", check=threads, type=int, default=None, help="threads of the kernels (default: every core)"
    )
    add_checked_argument(
        parser, "--n-process", check=processes, type=int, default=1, help="parser processes with --model (default 1)"
    )
    listing = parser.add_mutually_exclusive_group()
    listing.add_argument("--list-samples", action="store_true", help="print the installed samples' names and paths")
    listing.add_argument("--sample", choices=SAMPLES, default=None, help="print the path of one sample")


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    return {"--model": pipeline_path(arguments.model)}, {}


def run(arguments: argparse.Namespace) -> None:
    if arguments.list_samples:
        for name, (_, about) in SAMPLES.items():
            print(f"{name}\t{sample_path(name)}\t{about}")
        return
    if arguments.sample is not None:
        print(sample_path(arguments.sample))
        return
    from .demo_steps import run_demo  # spaCy, scikit-learn and the engine: not for --help

    run_demo(model=arguments.model, n_process=arguments.n_process, n_jobs=arguments.n_jobs)
