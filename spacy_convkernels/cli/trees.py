"""Write the trees of every sentence: raw text or a DocBin to GRCT, LCT, LOCT, CGRCT and CLCT.

    PARSES=$(python -m spacy_convkernels demo --sample parses)
    python -m spacy_convkernels trees "$PARSES" --format jsonl -o trees.jsonl
    python -m spacy_convkernels trees questions.txt --model en_core_web_md -o trees.tsv

The input is a text file, one text per line (blank lines skipped), parsed with
``--model`` (a spaCy pipeline with a parser, by name or path), or a ``.spacy`` DocBin of
parsed docs (read with the model's vocab when given). Each sentence becomes one output
line, in document order:

- ``--format lines``: document number, sentence number, then one tree per representation,
  tab-separated, in KeLP's bracket form; an empty field for a sentence that keeps no
  node (punctuation only);
- ``--format jsonl``: ``{"doc": ..., "sentence": ..., "text": ..., "grct": ..., ...}``,
  null for such a sentence.

The trees are those of the ``kernel_trees`` component with its default options
(:func:`~spacy_convkernels.structures.dependency.span_to_trees`).
"""

import argparse
import codecs
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..errors import InvalidParameterError, MissingAnnotationError
from ..utils.outputs import pipeline_path, replacing
from .kernel_inputs import REPRESENTATIONS
from .options import add_checked_argument, positive, processes

if TYPE_CHECKING:
    from spacy.tokens import Doc


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("input", type=Path, help="a text file (one text per line) or a .spacy DocBin of parsed docs")
    parser.add_argument(
        "--model", default=None, help="a spaCy pipeline with a parser (name or path); raw text needs it"
    )
    parser.add_argument("--representations", nargs="+", choices=REPRESENTATIONS, default=list(REPRESENTATIONS))
    parser.add_argument("--format", choices=["lines", "jsonl"], default="lines", help="output format (default lines)")
    parser.add_argument("-o", "--output", type=Path, default=None, help="the file to write (default: standard output)")
    add_checked_argument(
        parser, "--batch-size", check=positive, type=int, default=256, help="texts per parser batch (default 256)"
    )
    add_checked_argument(
        parser, "--n-process", check=processes, type=int, default=1, help="parser processes (default 1)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal)")


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    return {"input": arguments.input, "--model": pipeline_path(arguments.model)}, {"--output": arguments.output}


def run(arguments: argparse.Namespace) -> None:
    from tqdm import tqdm

    docs = read_docs(
        arguments.input, model=arguments.model, batch_size=arguments.batch_size, n_process=arguments.n_process
    )
    docs = tqdm(docs, desc="documents", unit=" docs", disable=True if arguments.quiet else None)  # None: on a terminal
    if arguments.output is None:
        count = write_trees(docs, sys.stdout, representations=arguments.representations, format=arguments.format)
    else:
        with replacing(arguments.output, name="--output") as temporary, open(temporary, "w", encoding="utf-8") as out:
            count = write_trees(docs, out, representations=arguments.representations, format=arguments.format)
    print(f"{count} sentences", file=sys.stderr)


def read_docs(path: Path, *, model: str | None = None, batch_size: int = 256, n_process: int = 1) -> Iterator["Doc"]:
    """The parsed docs of a DocBin (a bare Vocab holds them: no pipeline, whose making loads
    every installed package's spaCy factories, seconds), or of a text file's lines parsed by
    ``model``."""
    from spacy.vocab import Vocab

    from .pipelines import load_pipeline, read_docbin

    nlp = load_pipeline(model) if model is not None else None
    if path.suffix == ".spacy":
        yield from read_docbin(path, nlp.vocab if nlp is not None else Vocab())
        return
    if nlp is None or "parser" not in nlp.pipe_names:
        raise InvalidParameterError("raw text needs --model, a spaCy pipeline with a parser")
    yield from nlp.pipe(_texts(path), batch_size=batch_size, n_process=n_process)


def _texts(path: Path) -> Iterator[str]:
    from ..utils.text_lines import Unreadable, corpus_error, corpus_lines

    for number, line in corpus_lines(path):
        if isinstance(line, Unreadable):
            raise corpus_error(line.message, path, number, line.cause)
        if line.strip():
            yield line.strip()


def write_trees(docs: Iterable["Doc"], out: TextIO, *, representations: Iterable[str], format: str) -> int:
    """Write one line per sentence (see the module); returns the number of sentences."""
    from ..structures.dependency import span_to_trees

    representations = list(representations)
    ascii_json = not _writes_unicode(out)  # JSON's \u00e9 escapes: exact in any encoding
    count = 0
    for number, doc in enumerate(docs):
        if len(doc) and not doc.has_annotation("DEP"):
            raise MissingAnnotationError(f"document {number} has no dependency parse: give parsed docs or --model")
        for index, sentence in enumerate(doc.sents if len(doc) else []):
            trees = span_to_trees(sentence, representations)
            strings = {name: None if trees[name] is None else str(trees[name]) for name in representations}
            if format == "jsonl":
                record = {"doc": number, "sentence": index, "text": sentence.text, **strings}
                out.write(json.dumps(record, ensure_ascii=ascii_json) + "\n")
            else:
                out.write("\t".join([str(number), str(index), *(s or "" for s in strings.values())]) + "\n")
            count += 1
    return count


def _writes_unicode(out: TextIO) -> bool:
    """Whether ``out``'s encoding represents every character (a UTF, GB 18030): a file of
    ``-o`` is UTF-8; standard output may be ASCII (``PYTHONIOENCODING=ascii``) or Latin-1,
    where a line of trees writes what it cannot represent as backslash escapes, with a
    warning (:func:`~spacy_convkernels.utils.display.tolerant_streams`)."""
    try:
        name = codecs.lookup(getattr(out, "encoding", None) or "utf-8").name
    except LookupError:
        return False
    return name.startswith("utf") or name == "gb18030"
