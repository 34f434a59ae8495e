"""What ``gram`` and ``nystroem`` share: the tree kernel named on the command line, and the
trees of a corpus file.

A corpus file of trees is one of

- ``.jsonl``: the output of ``trees --format jsonl`` (the ``--representation`` field of
  each line; a sentence without a tree, null, is left out);
- ``.klp`` or ``.klp.gz``: KeLP examples (their ``--representation`` tree);
- any other file: one tree in bracket form per line (blank lines are left out).
"""

import argparse
import inspect
import json
from pathlib import Path

from ..errors import ConvKernelsError, CorpusFormatError, InvalidParameterError
from ..utils.validation import validate_parameters
from .options import add_checked_argument, threads

# structures.dependency.REPRESENTATIONS, not imported here: --help imports no numpy (a test keeps them equal)
REPRESENTATIONS = ("grct", "lct", "loct", "cgrct", "clct")

# name on the command line: class of spacy_convkernels.kernels (imported by kernel_class): every kernel of
# kernels.KERNELS over trees of plain labels, written here as --help imports no kernel (a test keeps them equal)
KERNELS = {
    "st": "SubtreeKernel",
    "sst": "SubsetTreeKernel",
    "ptk": "PartialTreeKernel",
    "sptk": "SmoothedPartialTreeKernel",
    "csptk": "CompositionalSmoothedPartialTreeKernel",
}
OPTIONS = ("lam", "mu", "terminal_factor", "vectors")


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--representation", choices=REPRESENTATIONS, default="grct", help=".jsonl, .klp: the tree to use (grct)"
    )


def add_kernel_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernel", choices=KERNELS, default="ptk", help="the tree kernel (default ptk)")
    parser.add_argument("--lam", type=float, default=None, help="lambda, the decay by fragment height (0.4)")
    parser.add_argument("--mu", type=float, default=None, help="ptk, sptk, csptk: the decay by child gaps (0.4)")
    parser.add_argument("--terminal-factor", type=float, default=None, help="ptk, sptk, csptk: leaf weight (1)")
    parser.add_argument("--vectors", default=None, help="sptk, csptk: a word-vector file (KeLP, word2vec, .npy)")
    parser.add_argument(
        "--normalize", action=argparse.BooleanOptionalAction, default=True, help="K(a,b)/sqrt(K(a,a)K(b,b)) (on)"
    )
    add_checked_argument(
        parser, "--n-jobs", check=threads, type=int, default=None, help="threads of the kernel (default: every core)"
    )


def kernel_parameters(arguments: argparse.Namespace) -> dict:
    """The kernel options given on the command line, checked against the kernel's parameters."""
    accepted = inspect.signature(kernel_class(arguments.kernel)).parameters
    given = {name: getattr(arguments, name) for name in OPTIONS if getattr(arguments, name) is not None}
    for name in given:
        if name not in accepted:
            raise InvalidParameterError(f"--{name.replace('_', '-')} does not apply to the {arguments.kernel} kernel")
    return given


def kernel_class(name: str) -> type:
    """The kernel class of a command-line name (the engine is imported here)."""
    from .. import kernels

    if name not in KERNELS:
        raise InvalidParameterError(f"unknown kernel {name!r}; known: {', '.join(KERNELS)}")
    return getattr(kernels, KERNELS[name])


def make_kernel(name: str, parameters: dict):
    """The kernel ``name`` with ``parameters``, checked before any work."""
    kernel = kernel_class(name)(**parameters)
    validate_parameters(kernel)  # before any work, not at the first block
    return kernel


def read_trees(path: Path, *, representation: str = "grct") -> list:
    """The trees (:class:`~spacy_convkernels.Tree`) of a corpus file (see the module)."""
    from ..corpora.klp import read_klp_lines

    name = path.name.lower()
    if name.endswith((".klp", ".klp.gz")):
        trees = []
        for line, example in read_klp_lines(path):
            if representation not in example.trees:
                raise CorpusFormatError(f"no {representation} tree", path, line)
            trees.append(example.trees[representation])
    else:
        trees = list(_tree_lines(path, representation if name.endswith(".jsonl") else None))
    if not trees:
        raise ConvKernelsError(f"{path}: no tree")
    return trees


def _tree_lines(path: Path, field: str | None):
    from ..structures.tree import Tree
    from ..utils.text_lines import Unreadable, corpus_error, corpus_lines

    for number, line in corpus_lines(path):
        if isinstance(line, Unreadable):
            raise corpus_error(line.message, path, number, line.cause)
        if not line.strip():
            continue
        text = line
        if field is not None:
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise corpus_error(f"not JSON ({error.msg})", path, number, error) from error
            if not isinstance(record, dict) or field not in record:
                raise CorpusFormatError(f"no {field!r} field", path, number)
            text = record[field]
            if text is None:
                continue
        try:
            yield Tree.from_string(text)
        except (ConvKernelsError, TypeError) as error:
            raise corpus_error(f"not a tree ({error})", path, number, error) from error
