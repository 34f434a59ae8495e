"""The options the commands spell alike: ``-o/--output`` for the file (or folder) a command
writes, ``--seed`` for the seed of its random choices; the checks of an option's value,
declared with the option (:func:`add_checked_argument`) and run before any work
(:func:`check_arguments`); and the files an input stands for (:func:`vector_inputs`,
:func:`standoff_inputs`), every one a command declares.

Earlier spellings still read, hidden from the help, for the commands written with them
(bench/, docs/results/): the output as a last positional argument after the inputs
(``gram IN G.npy``), ``--random-state`` for ``--seed``."""

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InvalidParameterError
from ..utils.validation import SEED

#: A check of an option's value: called with the option's flag and its value (not None),
#: it raises :class:`~spacy_convkernels.errors.InvalidParameterError` when it refuses it.
Check = Callable[[str, Any], None]


def add_checked_argument(
    parser: argparse.ArgumentParser, *flags: str, check: Check, group: Any = None, **options: Any
) -> None:
    """Add an option (to ``group``, an argument group of ``parser``, when given) whose value
    ``check`` accepts: :func:`check_arguments` runs it before any work. Only declared
    options are checked, whatever their names."""
    action = (group or parser).add_argument(*flags, **options)
    declared = parser.get_default("checks") or ()
    parser.set_defaults(checks=(*declared, (flags[-1], action.dest, check)))


def positive(flag: str, value: Any) -> None:
    """A count of 1 or more."""
    if value < 1:
        raise InvalidParameterError(f"{flag} must be positive, got {value}")


def processes(flag: str, value: Any) -> None:
    """A number of processes: 1 or more, or -1 for every core."""
    if value != -1 and value < 1:
        raise InvalidParameterError(f"{flag} must be positive, or -1 for every core; got {value}")


def threads(flag: str, value: Any) -> None:
    """A number of kernel threads, as ``n_jobs`` counts them (:func:`~spacy_convkernels.kernels.base.n_threads`)."""
    from ..kernels.base import n_threads

    n_threads(value)


def accepted_by(constraint) -> Check:
    """The check of a value ``constraint`` (of :mod:`spacy_convkernels.utils.validation`) accepts."""

    def check(flag: str, value: Any) -> None:
        if not constraint.accepts(value):
            raise InvalidParameterError(f"{flag} must be {constraint}, got {value!r}")

    return check


def check_arguments(arguments: argparse.Namespace) -> None:
    """Resolve the output (:func:`resolve_output`) and run the declared checks of the
    options given a value."""
    resolve_output(arguments)
    for flag, dest, check in getattr(arguments, "checks", ()):
        value = getattr(arguments, dest, None)
        if value is not None:
            check(flag, value)


def add_output_argument(parser: argparse.ArgumentParser, *, help: str, metavar: str = "OUTPUT") -> None:
    """``-o/--output``, required (:func:`resolve_output` checks it), for a command whose
    output is the file it is run for; the earlier positional spelling still reads
    (:func:`take_positional_output`)."""
    parser.add_argument("-o", "--output", type=Path, default=None, metavar=metavar, help=f"{help} (required)")
    parser.set_defaults(output_required=help)


def add_seed_argument(parser: argparse.ArgumentParser, *, help: str) -> None:
    """``--seed`` (default 0); ``--random-state``, its earlier spelling, still reads."""
    add_checked_argument(parser, "--seed", check=accepted_by(SEED), type=int, default=0, help=f"{help} (default 0)")
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
