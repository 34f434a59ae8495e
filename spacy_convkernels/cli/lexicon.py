"""Build a protein gazetteer and a trigger lexicon (span_ruler patterns) from BioNLP standoff training data.

    BIONLP=$(python -m spacy_convkernels demo --sample bionlp)
    python -m spacy_convkernels lexicon "$BIONLP" -o lexicon/
    python -m spacy_convkernels lexicon "$BIONLP" -o strict/ --min-count 2 --min-precision 0.2 --no-shapes

TRAIN holds BioNLP shared-task documents with their annotations (``.txt``, ``.a1``,
``.a2``); the ``-o`` directory DIR receives ``proteins.jsonl`` (label ``Protein``) and ``triggers.jsonl``
(label the event type), patterns in the JSONL format of spaCy's ``span_ruler`` and
``entity_ruler`` (see :mod:`spacy_convkernels.corpora.lexicon` for how they are chosen):
phrases matched on ``LOWER`` (a ruler with ``phrase_matcher_attr = "LOWER"``) where the
tokenizer gives their words back, else token patterns. The texts are tokenized by
``--model``'s tokenizer (default: blank English); the patterns match a pipeline with the
same tokenizer. Put them into a pipeline with
``spacy_convkernels.corpora.lexicon.add_lexicon(nlp, DIR)``.

``--dev-articles SHARE`` leaves out the articles that ``convert --dev-articles SHARE`` and
the standoff reader's ``dev_share`` hold out for dev (``split_articles``, the same
``--seed``): a lexicon of the other articles, so that the dev articles' scores during
``spacy train`` are those of articles the lexicon has not seen, as devel's are (it needs
two articles or more; the bundled sample is one).
"""

import argparse
from collections import Counter
from pathlib import Path

from ..errors import CorpusFileError
from ..utils.outputs import pipeline_path
from .options import add_dev_articles_arguments, add_output_argument, standoff_inputs


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("train", type=Path, help="a directory of standoff documents (.txt, .a1, .a2)")
    add_output_argument(parser, help="the directory to write proteins.jsonl and triggers.jsonl to", metavar="DIR")
    parser.add_argument("--model", default=None, help="the spaCy pipeline whose tokenizer to use (default blank en)")
    parser.add_argument("--min-count", type=int, default=1, help="annotated at least N times (default 1)")
    parser.add_argument(
        "--min-precision", type=float, default=0.1, help="triggers: annotated in this share of occurrences (0.1)"
    )
    parser.add_argument(
        "--protein-min-precision", type=float, default=0.5, help="proteins and shape exclusions: the same (0.5)"
    )
    parser.add_argument(
        "--shapes", action=argparse.BooleanOptionalAction, default=True, help="gene-like token patterns (default on)"
    )
    parser.add_argument("--skip-errors", action="store_true", help="skip malformed standoff lines")
    add_dev_articles_arguments(parser, help="leave out the dev articles of this share")


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    """The outputs are the files written in OUTPUT_DIR."""
    from ..corpora.lexicon import FILES

    inputs = {"train": standoff_inputs(arguments.train), "--model": pipeline_path(arguments.model)}
    return inputs, {f"output {name}": arguments.output / name for name in FILES.values()}


def run(arguments: argparse.Namespace) -> None:
    import spacy

    from ..corpora.lexicon import FILES, build_lexicon, write_lexicon
    from ..corpora.standoff import read_standoff, split_articles
    from .pipelines import load_pipeline

    train = arguments.train
    if not train.is_dir():
        raise CorpusFileError("no such directory", train)
    if not any(train.glob("*.a2")):
        raise CorpusFileError("a directory without .a2 files (event annotations): not training data", train)
    nlp = load_pipeline(arguments.model) if arguments.model is not None else spacy.blank("en")
    counts: Counter[str] = Counter()
    documents = (
        train
        if arguments.dev_articles is None
        else split_articles(train, share=arguments.dev_articles, seed=arguments.seed)[0]
    )
    docs = read_standoff(documents, nlp, skip_errors=arguments.skip_errors, counts=counts)
    lexicon = build_lexicon(
        docs,
        min_count=arguments.min_count,
        min_precision=arguments.min_precision,
        protein_min_precision=arguments.protein_min_precision,
        shapes=arguments.shapes,
        tokenizer=nlp.tokenizer,
    )
    written = write_lexicon(lexicon, arguments.output)
    print(
        f"{counts['documents']} documents ({counts['proteins']} proteins, {counts['triggers']} triggers): "
        + ", ".join(f"{n} patterns to {arguments.output / FILES[key]}" for key, n in zip(FILES, written.values()))
    )
