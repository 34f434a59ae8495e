"""Draw the kernel-similarity heatmap of a corpus sample to an image (needs the plot extra, matplotlib).

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    python -m spacy_convkernels plot "$QUESTIONS" -o heatmap.png --sample 40
    python -m spacy_convkernels plot "$QUESTIONS" -o heatmap.svg --kernel sst --representation lct

The corpus is read as by ``gram`` (``.jsonl`` of ``trees --format jsonl``, ``.klp[.gz]``
or bracket trees one per line; ``--representation`` picks the tree). ``--sample`` trees
drawn at random (``--seed``; all of them when the corpus is smaller) are shown as
their kernel matrix, grouped by label
(:func:`spacy_convkernels.plots.similarity_heatmap`): the first label of each KeLP
example, or ``--labels``, a file of one label per line and tree; without either, one
group. The image format follows the output's suffix: .png, .svg or .pdf.
"""

import argparse
import io
import sys
from pathlib import Path

from ..errors import InvalidParameterError
from ..utils.outputs import replacing
from .options import add_output_argument, add_seed_argument
from .structures import add_input_arguments, add_kernel_arguments, kernel_parameters, make_kernel, read_trees


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("input", type=Path, help="the corpus: .jsonl (of trees), .klp[.gz] or bracket trees")
    add_output_argument(parser, help="the image to write: .png, .svg or .pdf")
    parser.add_argument("--labels", type=Path, default=None, help="a file of one label per line and tree")
    parser.add_argument("--sample", type=int, default=200, help="trees to draw at random (default 200)")
    add_seed_argument(parser, help="seed of the sample")
    add_input_arguments(parser)
    add_kernel_arguments(parser)


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    inputs = {"input": arguments.input, "--labels": arguments.labels, "--vectors": arguments.vectors}
    return inputs, {"output": arguments.output}


def run(arguments: argparse.Namespace) -> None:
    if arguments.sample < 1:
        raise InvalidParameterError(f"--sample must be positive, got {arguments.sample}")
    if arguments.output.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InvalidParameterError(f"the output must end in .png, .svg or .pdf, got {arguments.output}")
    kernel = make_kernel(arguments.kernel, kernel_parameters(arguments))
    trees = read_trees(arguments.input, representation=arguments.representation)
    labels = _labels(arguments.input, arguments.labels, len(trees))
    figure = heatmap_figure(
        kernel,
        trees,
        labels,
        sample=arguments.sample,
        random_state=arguments.seed,
        normalize=arguments.normalize,
        n_jobs=arguments.n_jobs,
    )
    figure.axes[0].set_title(f"{arguments.kernel.upper()} on {arguments.representation}: {arguments.input.name}")
    figure.tight_layout()
    drawn = io.BytesIO()  # drawn in memory, then written by Python: a full disk is one line, not matplotlib's error
    figure.savefig(drawn, format=arguments.output.suffix.lower()[1:], dpi=110)
    with replacing(arguments.output) as temporary:
        temporary.write_bytes(drawn.getvalue())
    print(f"{min(arguments.sample, len(trees))} trees drawn to {arguments.output}", file=sys.stderr)


def heatmap_figure(
    kernel, trees: list, labels: list[str], *, sample: int, random_state: int, normalize: bool = True, n_jobs=None
):
    """The Figure of :func:`~spacy_convkernels.plots.similarity_heatmap` on ``sample`` trees
    drawn at random (in corpus order)."""
    import numpy as np

    from ..plots import similarity_heatmap

    chosen = np.arange(len(trees))
    if sample < len(trees):
        chosen = np.sort(np.random.default_rng(random_state).choice(len(trees), sample, replace=False))
    ax = similarity_heatmap(
        kernel, [trees[i] for i in chosen], [labels[i] for i in chosen], normalize=normalize, n_jobs=n_jobs
    )
    ax.figure.set_size_inches(8, 6.8)
    return ax.figure


def _labels(corpus: Path, path: Path | None, count: int) -> list[str]:
    """One label per tree: from ``path``, from a KeLP corpus, or one group."""
    from ..corpora.klp import read_klp
    from ..utils.text_lines import Unreadable, corpus_error, corpus_lines

    if path is not None:
        labels = []
        for number, line in corpus_lines(path):
            if isinstance(line, Unreadable):
                raise corpus_error(line.message, path, number, line.cause)
            if line.strip():
                labels.append(line.strip())
    elif corpus.name.lower().endswith((".klp", ".klp.gz")):
        labels = [example.labels[0] if example.labels else "" for example in read_klp(corpus)]
    else:
        return ["all"] * count
    if len(labels) != count:
        raise InvalidParameterError(f"{path or corpus}: {len(labels)} labels for {count} trees")
    return labels
