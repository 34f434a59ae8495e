"""spacy-convkernels: convolution kernels for spaCy, from the command line (also python -m spacy_convkernels).

Each command is a module here with ``add_parser``, ``run`` and ``files`` (every input
path, folders and pipelines included, and every output path, by the names the user
gives them): an output that is an input, lies inside an input folder or is another
output is refused before any work, and the outputs are written to temporary files put
in place together on success (:mod:`spacy_convkernels.utils.outputs`); when an output is
standard output (``-o /dev/stdout``), what the command prints goes to standard error.
A package error, a full disk included, is printed as one line on stderr with exit
status 1; Ctrl-C ends with status 130, SIGTERM and SIGHUP with 128 + the signal's
number, their temporary files removed (SIGXFSZ is ignored: a file size limit is a write
error, EFBIG).
``spacy-convkernels COMMAND --help`` describes a command.

A command module imports spaCy, scikit-learn and the compiled engine in the functions
that need them, not at its top: ``--help`` and ``--version`` stay fast
(``python -m bench.speed --filter CommandLine`` measures them)."""

import argparse
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, redirect_stdout

from .. import __version__
from ..errors import ConvKernelsError
from ..utils.display import tolerant_streams, visible
from ..utils.outputs import check_outputs, standard_output
from . import config, convert, demo, evaluate, explain, explain_relation, gram, lexicon, nystroem, plot, project, trees
from .options import check_arguments, take_positional_output

COMMANDS = {
    "demo": demo,
    "config": config,
    "project": project,
    "convert": convert,
    "trees": trees,
    "gram": gram,
    "nystroem": nystroem,
    "explain": explain,
    "explain-relation": explain_relation,
    "evaluate": evaluate,
    "lexicon": lexicon,
    "plot": plot,
}


def main(argv: list[str] | None = None) -> int:
    """Run a command; returns the exit status. Standard output and standard error write
    what their encoding cannot represent as backslash escapes, and a warning at the end
    says when standard output did (:func:`~spacy_convkernels.utils.display.tolerant_streams`)."""
    prefix = ["spacy-convkernels"]  # the command's name is added once it is parsed
    with tolerant_streams() as escaped:
        status = _main(argv, prefix)
        if escaped:
            print(
                f"{prefix[0]}: warning: standard output's encoding ({escaped[0]}) cannot represent some of the "
                "text: those characters were written as backslash escapes such as \\xe9; -o FILE writes UTF-8, "
                "as does standard output with PYTHONIOENCODING=utf-8",
                file=sys.stderr,
            )
    return status


def command_parser() -> argparse.ArgumentParser:
    """The parser of the command line: one subparser per command of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="spacy-convkernels",
        description=__doc__.splitlines()[0],
        epilog="Start with: spacy-convkernels demo. Help on a command: spacy-convkernels COMMAND --help.",
    )
    parser.add_argument("--version", action=VersionAction, help="print the version and exit")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        doc = str(module.__doc__)
        module.add_parser(commands.add_parser(name, help=doc.splitlines()[0], description=doc))
    return parser


def _main(argv: list[str] | None, names: list[str]) -> int:
    """:func:`main`, ``names[0]`` set to the prefix of its messages once the command is known."""
    parser = command_parser()
    prefix = names[0]
    formatwarning = warnings.formatwarning
    warnings.formatwarning = lambda message, *_, **__: f"{prefix}: warning: {_line(message)}\n"
    try:
        argv = plot.earlier_spelling(list(sys.argv[1:] if argv is None else argv))
        arguments, extra = parser.parse_known_args(argv)
        extra = take_positional_output(arguments, extra)
        if extra:  # as parse_args does
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        prefix = names[0] = f"spacy-convkernels {arguments.command}"
        with _terminating_signals():
            check_arguments(arguments)
            module = COMMANDS[arguments.command]
            inputs, outputs = module.files(arguments)
            check_outputs(inputs=inputs, outputs=outputs)
            to_stdout = any(standard_output(path) for path in outputs.values())
            with redirect_stdout(sys.stderr) if to_stdout else nullcontext():  # the output's bytes alone
                module.run(arguments)
    except (ConvKernelsError, OSError) as error:
        print(f"{prefix}: error: {_line(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130
    except _Terminated as signal_:
        print(f"{prefix}: terminated by {signal.Signals(signal_.number).name}", file=sys.stderr)
        return 128 + signal_.number
    finally:
        warnings.formatwarning = formatwarning
    return 0


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: raised in the main thread as Ctrl-C's KeyboardInterrupt
    is, so that the temporary files are removed on the way out."""

    def __init__(self, number: int):
        super().__init__(number)
        self.number = number


@contextmanager
def _terminating_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`_Terminated` (unless ignored, as under ``nohup``) and
    SIGXFSZ is ignored, for the block; the earlier handlers are put back after it. Only the
    main thread may set handlers: elsewhere (a test's thread) the block runs as it is.

    Python runs a handler wherever the main thread is: inside a finalizer it would only be
    printed ("Exception ignored"), inside ``__set_name__`` wrapped in a RuntimeError. So
    the signal is remembered: such an unraisable one is not printed, and the block ends as
    terminated whatever it raised or returned after the signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner, received = os.getpid(), []

    def terminate(number, frame):
        if os.getpid() != owner:  # a forked worker (spaCy's n_process): the default action
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)
            return
        received.append(number)
        raise _Terminated(number)

    def unraisable(report, hook=sys.unraisablehook):
        if not isinstance(report.exc_value, _Terminated):  # a swallowed one is raised again below
            hook(report)

    earlier = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGXFSZ)}
    earlier_hook, sys.unraisablehook = sys.unraisablehook, unraisable
    for number in (signal.SIGTERM, signal.SIGHUP):
        if earlier[number] != signal.SIG_IGN:
            signal.signal(number, terminate)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        yield
    except _Terminated:
        raise
    except BaseException as error:
        if received:  # raised on the way out of a signal (a wrapped one, or a failure it caused)
            raise _Terminated(received[0]) from error
        raise
    finally:
        for number, handler in earlier.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        sys.unraisablehook = earlier_hook
    if received:  # swallowed inside a finalizer: the run ends as terminated all the same
        raise _Terminated(received[0])


class VersionAction(argparse.Action):
    """``--version``, looked up only when asked (importlib.metadata takes a third of --help's imports)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} {version()}")
        parser.exit()


def version() -> str:
    """The installed distribution's version, else the source tree's."""
    from importlib import metadata

    try:
        return metadata.version("spacy-convkernels")
    except metadata.PackageNotFoundError:
        return __version__


def _line(message) -> str:
    """A message on one line, whatever it holds: control characters (an escape sequence
    from a file's label or name) are shown as ``\\x1b``, never sent to the terminal."""
    return visible(" ".join(str(message).split()))
