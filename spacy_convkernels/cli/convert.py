"""Write spaCy DocBins (.spacy) from TREC/KeLP question files, BioNLP standoff or relations JSONL.

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    BIONLP=$(python -m spacy_convkernels demo --sample bionlp)
    RELATIONS=$(python -m spacy_convkernels demo --sample relations)
    python -m spacy_convkernels convert "$QUESTIONS" -o train.spacy --dev dev.spacy
    python -m spacy_convkernels convert "$BIONLP" -o ge.spacy
    python -m spacy_convkernels convert "$RELATIONS" -o rel.spacy

(the samples installed with the package: ``python -m spacy_convkernels demo --list-samples``)

The input's format comes from its name: a directory is BioNLP standoff (``standoff``), a
``.klp`` or ``.klp.gz`` file TREC/KeLP questions (``klp``), a ``.jsonl`` or ``.jsonl.gz``
file Prodigy relations (``relations-jsonl``). ``--format`` names it for any other name;
without it such an input is refused in one line saying which ``--format`` to give.

Each example of a ``klp`` input becomes a Doc of its question text (the ``quest`` text
representation, as tokenized by KeLP) whose ``cats`` are one-hot over the 6 coarse
classes (ABBR, DESC, ENTY, HUM, LOC, NUM); a fine label such as ``NUM:dist`` counts as its coarse class. With
``--dev``, every ``--dev-every``-th example of the file (the 10th, 20th, ... by default,
i.e. 10 %) goes to the dev DocBin instead: a fixed split of the training file, so that
every choice is made without the test file.

A ``standoff`` input is a directory of BioNLP shared-task documents
(``.txt``, ``.a1``, ``.a2``; see :mod:`spacy_convkernels.corpora.standoff`), a
``relations-jsonl`` input a Prodigy relations ``.jsonl`` file (see
:mod:`spacy_convkernels.corpora.relations_jsonl`): one Doc per document or record, with
its entities, span groups and ``Doc._.kernel_interactions`` or ``Doc._.kernel_rel`` (kept in the
DocBin's user data); ``--dev`` takes every ``--dev-every``-th Doc as for klp, or, for
standoff with ``--dev-articles SHARE``, whole articles (the sections of one stay
together) until they make SHARE of the documents (``split_articles``: articles shuffled
with ``--seed``), and ``--skip-errors`` skips malformed lines with a warning instead of stopping.
"""

import argparse
from pathlib import Path

from ..errors import ConvKernelsError, CorpusFileError, CorpusFormatError, InvalidParameterError
from ..utils.outputs import check_outputs, replacing_all
from .options import add_dev_articles_arguments, add_output_argument, standoff_inputs

CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
TEXT = "quest"
READERS = ("standoff", "relations-jsonl")  # the formats besides klp, read by _reader
FORMATS = "klp (TREC/KeLP questions), standoff (a BioNLP directory) or relations-jsonl (Prodigy relations)"
SUFFIXES = {".klp": "klp", ".klp.gz": "klp", ".jsonl": "relations-jsonl", ".jsonl.gz": "relations-jsonl"}


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("input", type=Path, help="a .klp or .klp.gz file, a standoff directory or a .jsonl file")
    add_output_argument(parser, help="the .spacy file to write")
    parser.add_argument("--dev", type=Path, default=None, help="write every --dev-every-th example here instead")
    parser.add_argument("--dev-every", type=int, default=10, help="dev takes examples N, 2N, ... (default 10)")
    parser.add_argument("--lang", default="en", help="language of the tokenizer's vocab (default en)")
    parser.add_argument(
        "--format", choices=["klp", *READERS], default=None, help="input format (default: by the input's name)"
    )
    parser.add_argument("--skip-errors", action="store_true", help="standoff, relations-jsonl: skip malformed lines")
    add_dev_articles_arguments(parser, help="standoff: --dev takes whole articles, SHARE")


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    """A standoff document's input is its three files, whichever was named."""
    format = arguments.format if arguments.format is not None else input_format(arguments.input)
    source = standoff_inputs(arguments.input) if format == "standoff" else arguments.input
    return {"input": source}, {"output": arguments.output, "--dev": arguments.dev}


def run(arguments: argparse.Namespace) -> None:
    format = arguments.format if arguments.format is not None else input_format(arguments.input)
    if arguments.dev_articles is not None and (format != "standoff" or arguments.dev is None):
        raise InvalidParameterError(
            "--dev-articles splits standoff documents: give it with a standoff corpus and --dev"
        )
    if format != "klp":
        counts = convert_annotations(
            arguments.input,
            arguments.output,
            format=format,
            dev=arguments.dev,
            dev_every=arguments.dev_every,
            dev_articles=arguments.dev_articles,
            seed=arguments.seed,
            lang=arguments.lang,
            skip_errors=arguments.skip_errors,
        )
        print(", ".join(f"{n} documents to {path}" for path, n in counts.items()))
        return
    counts = convert(
        arguments.input, arguments.output, dev=arguments.dev, dev_every=arguments.dev_every, lang=arguments.lang
    )
    print(", ".join(f"{n} questions to {path}" for path, n in counts.items()))


def input_format(path: Path) -> str:
    """The format of an input by its name (see the module), or an error saying which
    ``--format`` to give: the format its first line looks like, else every one."""
    if path.is_dir():
        return "standoff"
    for suffix, format in SUFFIXES.items():
        if path.name.lower().endswith(suffix):
            return format
    if not path.exists():
        raise CorpusFileError("no such file or directory", path)
    looks = _looks_like(path)
    hint = f"it looks like {looks[1]}: give --format {looks[0]}" if looks else f"give --format {FORMATS}"
    raise InvalidParameterError(
        f"cannot tell the format of {path} from its name (a directory, .klp[.gz] or .jsonl[.gz]); {hint}"
    )


def _looks_like(path: Path) -> tuple[str, str] | None:
    """(format, description) of what the first line of a file looks like, or None."""
    import gzip

    try:
        with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as file:  # as the readers open it
            start = file.read(1 << 16)
    except (OSError, EOFError):
        return None
    line = start.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    if line.startswith(b"{"):
        return "relations-jsonl", "JSON lines"
    if b"|BT:" in line or b"|BS:" in line or b"|BV:" in line:
        return "klp", "KeLP examples"
    return None


def convert(input_path, output, *, dev=None, dev_every: int = 10, lang: str = "en") -> dict:
    """Write the DocBin(s); returns the number of Docs written to each path."""
    from spacy.tokens import DocBin

    from ..corpora.klp import read_klp_lines

    check_outputs(inputs={"input": Path(input_path)}, outputs={"output": Path(output), "dev": dev})
    if dev is not None and dev_every < 2:
        raise InvalidParameterError(f"--dev-every must be at least 2, got {dev_every}")
    if Path(input_path).is_dir():
        raise InvalidParameterError(f"{input_path} is a directory: a standoff corpus needs --format standoff")
    nlp = _blank(lang)
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
    return _write({"output": (output, train), "--dev": None if dev is None else (dev, held_out)})


def convert_annotations(
    input_path,
    output,
    *,
    format: str,
    dev=None,
    dev_every: int = 10,
    dev_articles: float | None = None,
    seed: int = 0,
    lang: str = "en",
    skip_errors: bool = False,
) -> dict:
    """Write the DocBin(s) of a standoff directory or a relations JSONL file (``format``
    ``"standoff"`` or ``"relations-jsonl"``); returns the number of Docs written to each
    path. ``dev_articles`` (standoff): the dev DocBin takes whole articles, that share of
    the documents (:func:`~spacy_convkernels.corpora.standoff.split_articles` with ``seed``)."""
    from spacy.tokens import DocBin

    from ..corpora.standoff import split_articles

    if format not in READERS:
        raise InvalidParameterError(f"format {format!r} is not one of {', '.join(READERS)}")
    check_outputs(inputs={"input": Path(input_path)}, outputs={"output": Path(output), "dev": dev})
    if dev is not None and dev_every < 2:
        raise InvalidParameterError(f"--dev-every must be at least 2, got {dev_every}")
    train, held_out = DocBin(store_user_data=True), DocBin(store_user_data=True)
    parts: list[tuple[DocBin | None, object]]  # (the DocBin of every document, or None to split by --dev-every; source)
    if dev_articles is None:
        parts = [(None, input_path)]
    elif format != "standoff" or dev is None:
        raise InvalidParameterError("dev_articles splits standoff documents: give it with format standoff and dev")
    else:
        kept, held = split_articles(input_path, share=dev_articles, seed=seed)
        parts = [(train, kept), (held_out, held)]
    nlp = _blank(lang)
    for target, source in parts:
        for number, doc in enumerate(_reader(format)(source, nlp, skip_errors=skip_errors), start=1):
            if target is not None:
                target.add(doc)
            else:
                (held_out if dev is not None and number % dev_every == 0 else train).add(doc)
    if not len(train):
        raise ConvKernelsError(f"{input_path}: no document outside the dev split")
    return _write({"output": (output, train), "--dev": None if dev is None else (dev, held_out)})


def _reader(format: str):
    """The corpus reader of a format of :data:`READERS`."""
    from ..corpora.relations_jsonl import read_relations_jsonl
    from ..corpora.standoff import read_standoff

    return {"standoff": read_standoff, "relations-jsonl": read_relations_jsonl}[format]


def _blank(lang: str):
    """A blank pipeline of the language ``lang``, or the package error naming it."""
    import spacy

    try:
        return spacy.blank(lang)
    except ImportError as error:
        raise InvalidParameterError(f"--lang {lang!r} is not a language code spaCy knows (en, de, fr, ...)") from error


def _write(written: dict) -> dict:
    """Write each named (path, DocBin) pair, all or none (None pairs are left out); returns
    the number of Docs written to each path."""
    written = {name: pair for name, pair in written.items() if pair is not None}
    with replacing_all({name: path for name, (path, _) in written.items()}) as temporaries:
        for name, (_, docs) in written.items():
            docs.to_disk(temporaries[name])
    return {str(path): len(docs) for path, docs in written.values()}
