"""The options the commands spell alike: ``-o/--output`` for the file (or folder) a command
writes, ``--seed`` for the seed of its random choices; and the files an input stands for
(:func:`vector_inputs`, :func:`standoff_inputs`), every one a command declares.

Earlier spellings still read, hidden from the help, for the commands written with them
(bench/, docs/results/): the output as a last positional argument after the inputs
(``gram IN G.npy``), ``--random-state`` for ``--seed``."""

import argparse
from pathlib import Path

from ..errors import InvalidParameterError


def add_output_argument(parser: argparse.ArgumentParser, *, help: str, metavar: str = "OUTPUT") -> None:
    """``-o/--output``, required (:func:`resolve_output` checks it), for a command whose
    output is the file it is run for; the earlier positional spelling still reads
    (:func:`take_positional_output`)."""
    parser.add_argument("-o", "--output", type=Path, default=None, metavar=metavar, help=f"{help} (required)")
    parser.set_defaults(output_required=help)


def add_seed_argument(parser: argparse.ArgumentParser, *, help: str) -> None:
    """``--seed`` (default 0); ``--random-state``, its earlier spelling, still reads."""
    parser.add_argument("--seed", type=int, default=0, help=f"{help} (default 0)")
    parser.add_argument("--random-state", dest="seed", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_dev_articles_arguments(parser: argparse.ArgumentParser, *, help: str) -> None:
    """``--dev-articles SHARE`` (standoff: the whole articles that ``split_articles`` holds
    out, as the standoff reader's ``dev_share`` does) and ``--seed``, the seed of their order."""
    parser.add_argument("--dev-articles", type=float, default=None, metavar="SHARE", help=help)
    add_seed_argument(parser, help="--dev-articles: the seed of the articles' order")


def take_positional_output(arguments: argparse.Namespace, extra: list[str]) -> list[str]:
    """The arguments argparse left over (``parse_known_args``), but for the output of the
    earlier spelling: one argument after the inputs, of a command with a required output.
    A hidden positional argument could not take it: argparse fills an optional positional
    at the first run of positionals, so ``lexicon TRAIN --min-count 2 OUT`` would leave OUT."""
    if getattr(arguments, "output_required", None) is not None and len(extra) == 1 and not extra[0].startswith("-"):
        arguments.positional_output = Path(extra[0])
        return []
    return extra


def resolve_output(arguments: argparse.Namespace) -> None:
    """Set ``arguments.output`` from the positional spelling, refusing both spellings at
    once and a required output given by neither."""
    positional = getattr(arguments, "positional_output", None)
    if positional is not None:
        if arguments.output is not None:
            raise InvalidParameterError(f"two outputs, {positional} and -o {arguments.output}: give -o alone")
        arguments.output = positional
    required = getattr(arguments, "output_required", None)
    if required is not None and arguments.output is None:
        raise InvalidParameterError(f"-o/--output is required: {required}")


def vector_inputs(path: Path | str | None) -> list[Path] | None:
    """The files ``--vectors PATH`` reads: a ``.npy`` and the ``.keys`` beside it, else PATH."""
    from ..kernels.vectors import vector_files

    return None if path is None else vector_files(path)


def standoff_inputs(path: Path | str | None) -> list[Path] | None:
    """The files a standoff corpus reads: a folder, or a document's ``.txt``, ``.a1`` and
    ``.a2``, whichever was named (an input that is not standoff: itself)."""
    from ..corpora.standoff import document_files

    if path is None:
        return None
    if Path(path).is_dir() or Path(path).suffix not in (".txt", ".a1", ".a2"):
        return [Path(path)]
    return document_files(path)
