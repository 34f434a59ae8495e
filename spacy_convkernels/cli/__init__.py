"""The package's command line: ``python -m spacy_convkernels <command> ...`` (or the
``spacy-convkernels`` script). Each command is a module here with ``add_parser`` and
``run``; a package error is printed as one line on stderr with exit status 1."""

import argparse
import sys

from ..errors import ConvKernelsError
from . import convert, lexicon, trees

COMMANDS = {"convert": convert, "trees": trees, "lexicon": lexicon}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spacy-convkernels", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        module.add_parser(commands.add_parser(name, help=module.__doc__.splitlines()[0], description=module.__doc__))
    arguments = parser.parse_args(argv)
    try:
        COMMANDS[arguments.command].run(arguments)
    except (ConvKernelsError, OSError) as error:
        print(f"spacy-convkernels {arguments.command}: error: {error}", file=sys.stderr)
        return 1
    return 0
