"""The checks of the options the commands share are declared with each option
(``options.add_checked_argument``), not guessed from attribute names (issue 64 point 3):
an option is checked because its command says so."""

import argparse

import pytest

from spacy_convkernels.cli import command_parser
from spacy_convkernels.cli.options import add_checked_argument, check_arguments, positive
from spacy_convkernels.errors import InvalidParameterError

# the options the command line checked by their attribute names before
COUNTS = {"batch_size", "block_size", "top", "n_components", "local_cluster", "k", "sample"}
CHECKED = COUNTS | {"seed", "C", "n_jobs", "n_process"}


def subparsers(parser: argparse.ArgumentParser, path=()):
    """(command words, parser) of every leaf command."""
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not found:
        yield path, parser
        return
    for name, child in found[0].choices.items():
        yield from subparsers(child, (*path, name))


def test_an_option_is_checked_when_declared_whatever_its_name():
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int)  # named like a checked option, not declared
    add_checked_argument(parser, "--rows", check=positive, type=int)
    check_arguments(parser.parse_args(["--top", "0"]))
    with pytest.raises(InvalidParameterError, match="--rows must be positive, got 0"):
        check_arguments(parser.parse_args(["--top", "0", "--rows", "0"]))
    check_arguments(parser.parse_args([]))  # not given: nothing to check


def test_every_commands_checked_options_are_declared():
    declared_anywhere = set()
    for command, parser in subparsers(command_parser()):
        declared = {dest for _, dest, _ in parser.get_default("checks") or ()}
        options = {a.dest for a in parser._actions if a.option_strings and a.type in (int, float)}
        assert options & CHECKED <= declared, (command, sorted(options & CHECKED - declared))
        declared_anywhere |= declared
    assert declared_anywhere == CHECKED
