"""spacy-convkernels: convolution kernels for spaCy, from the command line (also python -m spacy_convkernels).

Each command is a module here with ``add_parser`` and ``run``; a package error is
printed as one line on stderr with exit status 1. ``spacy-convkernels COMMAND --help``
describes a command."""

import argparse
import sys

from ..errors import ConvKernelsError
from . import convert, demo, evaluate, explain, gram, lexicon, nystroem, trees

COMMANDS = {
    "demo": demo,
    "convert": convert,
    "trees": trees,
    "gram": gram,
    "nystroem": nystroem,
    "explain": explain,
    "evaluate": evaluate,
    "lexicon": lexicon,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="spacy-convkernels",
        description=__doc__.splitlines()[0],
        epilog="Start with: spacy-convkernels demo. Help on a command: spacy-convkernels COMMAND --help.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        module.add_parser(commands.add_parser(name, help=module.__doc__.splitlines()[0], description=module.__doc__))
    arguments = parser.parse_args(argv)
    try:
        COMMANDS[arguments.command].run(arguments)
    except (ConvKernelsError, OSError) as error:
        message = " ".join(str(error).split())  # one line, whatever the message holds
        print(f"spacy-convkernels {arguments.command}: error: {message}", file=sys.stderr)
        return 1
    return 0
