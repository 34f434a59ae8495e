"""Explain a tree kernel's value for two trees: the node pairs and common fragments that make it, drawn to HTML or SVG.

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    python -m spacy_convkernels explain "(S (NP the cat) (VP sat))" "(S (NP a cat) (VP slept))" -o explain.html
    python -m spacy_convkernels explain --corpus "$QUESTIONS" 3 17 --kernel sst --top 5 -o explain.svg

A and B are trees in bracket form, or with ``--corpus`` the 0-based positions of two
trees of a corpus file (as for ``gram``: ``.jsonl`` of ``trees --format jsonl``,
``.klp[.gz]``, or bracket trees one per line; ``--representation`` picks the tree).
The ``--top`` node pairs of largest contribution to K(A, B) are listed (value, share of
K, largest common fragment) and drawn: both trees, each match's fragment in its colour,
a match nested in another in its own (:func:`spacy_convkernels.kernels.explain.explain`,
:func:`~spacy_convkernels.kernels.explain.to_svg`). The output is an
HTML page (a ``.html`` name) or an SVG image (``.svg``); without ``-o``, ``explain.html``
in the current directory, refused when a file of that name exists (``-o explain.html``
replaces it).
"""

import argparse
import sys
from pathlib import Path

from ..errors import ConvKernelsError, InvalidParameterError
from ..utils.display import visible
from ..utils.outputs import default_output, replacing
from .kernel_inputs import add_input_arguments, add_kernel_arguments, kernel_parameters, make_kernel, read_trees
from .options import add_checked_argument, positive, vector_inputs

DEFAULT = "explain.html"  # the output without -o, written only where no file of that name is


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("a", help="a tree in bracket form, or with --corpus a position in the corpus")
    parser.add_argument("b", help="the other tree (or position)")
    parser.add_argument("--corpus", type=Path, default=None, help="read A and B from this corpus file by position")
    parser.add_argument(
        "-o", "--output", type=Path, default=None, help=f".html or .svg (default {DEFAULT}, never over an existing one)"
    )
    add_checked_argument(
        parser, "--top", check=positive, type=int, default=10, help="node pairs to list and draw (default 10)"
    )
    add_input_arguments(parser)
    add_kernel_arguments(parser)


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    inputs = {"--corpus": arguments.corpus, "--vectors": vector_inputs(arguments.vectors)}
    return inputs, {"--output": _output(arguments)}


def _output(arguments: argparse.Namespace) -> Path:
    """``-o``, else :data:`DEFAULT` where no file of that name exists."""
    return arguments.output if arguments.output is not None else default_output(DEFAULT)


def run(arguments: argparse.Namespace) -> None:
    output = _output(arguments)
    if output.suffix not in (".html", ".svg"):
        raise InvalidParameterError(f"--output must end in .html or .svg, got {output}")
    from ..kernels.explain import to_html, to_svg

    kernel = make_kernel(arguments.kernel, kernel_parameters(arguments))
    a, b = _pair(arguments)
    explanation = kernel.explain(a, b, top=arguments.top, normalize=arguments.normalize)
    title = f"{arguments.kernel.upper()} K(a, b) = {explanation.value:.4g}"
    page = to_svg(explanation, a, b) if output.suffix == ".svg" else to_html(explanation, a, b, title=title)
    with replacing(output, name="--output") as temporary:
        temporary.write_text(page, encoding="utf-8")
    print(f"K(a, b) = {explanation.value:.6g} ({explanation.n_pairs} contributing node pairs)")
    for rank, match in enumerate(explanation.matches, start=1):  # a label's control characters shown as \x1b
        print(f"{rank:3d}. {match.value:.6g} ({100 * match.share:.1f} %) {visible(str(match.fragment))}")
    print(f"drawn to {visible(str(output))}", file=sys.stderr)


def _pair(arguments: argparse.Namespace) -> tuple:
    """Trees A and B, from the command line or the corpus."""
    from ..structures.tree import Tree

    if arguments.corpus is None:
        trees = []
        for name in ("a", "b"):
            try:
                trees.append(Tree.from_string(getattr(arguments, name)))
            except ConvKernelsError as error:
                raise InvalidParameterError(f"{name.upper()} is not a tree in bracket form: {error}") from error
        return trees[0], trees[1]
    corpus = read_trees(arguments.corpus, representation=arguments.representation)
    picked = []
    for name in ("a", "b"):
        text = getattr(arguments, name)
        if not text.isdigit() or int(text) >= len(corpus):
            raise InvalidParameterError(f"{name.upper()} = {text!r}: not a position among the {len(corpus)} trees")
        picked.append(corpus[int(text)])
    return picked[0], picked[1]
