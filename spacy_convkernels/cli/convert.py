"""Write spaCy DocBins (.spacy) from TREC/KeLP question-classification files (.klp, .klp.gz).

    python -m spacy_convkernels convert train_5500.coarse.klp.gz corpus/train.spacy --dev corpus/dev.spacy
    python -m spacy_convkernels convert TREC_10.coarse.klp.gz corpus/test.spacy

Each example becomes a Doc of its question text (the ``quest`` text representation, as
tokenized by KeLP) whose ``cats`` are one-hot over the 6 coarse classes (ABBR, DESC,
ENTY, HUM, LOC, NUM); a fine label such as ``NUM:dist`` counts as its coarse class. With
``--dev``, every ``--dev-every``-th example of the file (the 10th, 20th, ... by default,
i.e. 10 %) goes to the dev DocBin instead: a fixed split of the training file, so that
every choice is made without the test file.
"""

import argparse
from pathlib import Path

import spacy
from spacy.tokens import DocBin

from ..corpora.klp import read_klp_lines
from ..errors import ConvKernelsError, CorpusFormatError, InvalidParameterError

CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
TEXT = "quest"


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("input", type=Path, help="a .klp or .klp.gz file")
    parser.add_argument("output", type=Path, help="the .spacy file to write")
    parser.add_argument("--dev", type=Path, default=None, help="write every --dev-every-th example here instead")
    parser.add_argument("--dev-every", type=int, default=10, help="dev takes examples N, 2N, ... (default 10)")
    parser.add_argument("--lang", default="en", help="language of the tokenizer's vocab (default en)")


def run(arguments: argparse.Namespace) -> None:
    counts = convert(
        arguments.input, arguments.output, dev=arguments.dev, dev_every=arguments.dev_every, lang=arguments.lang
    )
    print(", ".join(f"{n} questions to {path}" for path, n in counts.items()))


def convert(input_path, output, *, dev=None, dev_every: int = 10, lang: str = "en") -> dict:
    """Write the DocBin(s); returns the number of Docs written to each path."""
    if dev is not None and dev_every < 2:
        raise InvalidParameterError(f"--dev-every must be at least 2, got {dev_every}")
    nlp = spacy.blank(lang)
    train, held_out = DocBin(attrs=[], store_user_data=False), DocBin(attrs=[], store_user_data=False)
    for number, (line, example) in enumerate(read_klp_lines(input_path), start=1):
        if TEXT not in example.texts:
            raise CorpusFormatError(f"no |BS:{TEXT}| question text", input_path, line)
        label = example.labels[0].split(":")[0] if len(example.labels) == 1 else None
        if label not in CLASSES:
            raise CorpusFormatError(
                f"labels {list(example.labels)}, expected one of {', '.join(CLASSES)}", input_path, line
            )
        doc = nlp.make_doc(example.texts[TEXT])
        doc.cats = {name: float(name == label) for name in CLASSES}
        (held_out if dev is not None and number % dev_every == 0 else train).add(doc)
    if not len(train):
        raise ConvKernelsError(f"{input_path}: no question outside the dev split")
    written = {output: train} if dev is None else {output: train, dev: held_out}
    for path, docs in written.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        docs.to_disk(path)
    return {str(path): len(docs) for path, docs in written.items()}
