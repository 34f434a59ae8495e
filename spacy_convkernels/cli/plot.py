"""Draw a kernel-similarity heatmap of a corpus sample, or a relation model's precision-recall curves (the plot extra).

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    RELATIONS=$(python -m spacy_convkernels demo --sample relations)
    python -m spacy_convkernels plot heatmap "$QUESTIONS" -o heatmap.png --sample 40
    python -m spacy_convkernels plot relations training/relations/model-best "$RELATIONS" -o curves.png

``plot heatmap`` draws the kernel matrix of a sample of a corpus, ``plot relations`` the
precision-recall curve of each label of a relation pipeline on a gold corpus; ``plot
FIGURE --help`` describes each. The image format follows the output's suffix: .png, .svg
or .pdf. (``plot CORPUS ...``, without ``heatmap``, is the heatmap's earlier spelling.)
"""

import argparse
import io
import sys
import warnings
from pathlib import Path

from ..errors import InvalidParameterError, SettingDeprecationWarning
from ..utils.outputs import pipeline_path, replacing
from .kernel_inputs import add_input_arguments, add_kernel_arguments, kernel_parameters, make_kernel, read_trees
from .options import (
    add_checked_argument,
    add_output_argument,
    add_seed_argument,
    positive,
    standoff_inputs,
    vector_inputs,
)

HEATMAP = """A kernel-similarity heatmap of a corpus sample.

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    python -m spacy_convkernels plot heatmap "$QUESTIONS" -o heatmap.png --sample 40
    python -m spacy_convkernels plot heatmap "$QUESTIONS" -o heatmap.svg --kernel sst --representation lct

The corpus is read as by ``gram`` (``.jsonl`` of ``trees --format jsonl``, ``.klp[.gz]``
or bracket trees one per line; ``--representation`` picks the tree). ``--sample`` trees
drawn at random (``--seed``; all of them when the corpus is smaller) are shown as their
kernel matrix, grouped by label (:func:`spacy_convkernels.plots.similarity_heatmap`): the
first label of each KeLP example, or ``--labels``, a file of one label per line and tree;
without either, one group. The image format follows the output's suffix.
"""
RELATIONS = """A relation pipeline's precision-recall curve of each label on a gold corpus.

    RELATIONS=$(python -m spacy_convkernels demo --sample relations)
    python -m spacy_convkernels plot relations training/relations/model-best "$RELATIONS" -o curves.png

MODEL, a pipeline with a kernel_relations component, is run on CORPUS as ``evaluate
relations`` runs it (the gold entities given unless ``--entities predicted``); each
label's precision against its recall at every threshold
(:func:`spacy_convkernels.plots.precision_recall_curves`), a dot at the model's own
threshold, each label's support in the legend. Recall counts every gold relation of the
corpus, those no candidate reaches too. The image format follows the output's suffix.
"""
FIGURES = ("heatmap", "relations")
SETTINGS = ("gold", "predicted")  # of --entities and --triggers, as evaluate relations'


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    figures = parser.add_subparsers(dest="figure", required=True)
    heatmap = figures.add_parser("heatmap", help=HEATMAP.splitlines()[0], description=HEATMAP)
    heatmap.formatter_class = argparse.RawDescriptionHelpFormatter
    heatmap.add_argument("input", type=Path, help="the corpus: .jsonl (of trees), .klp[.gz] or bracket trees")
    add_output_argument(heatmap, help="the image to write: .png, .svg or .pdf")
    heatmap.add_argument("--labels", type=Path, default=None, help="a file of one label per line and tree")
    add_checked_argument(
        heatmap, "--sample", check=positive, type=int, default=200, help="trees to draw at random (default 200)"
    )
    add_seed_argument(heatmap, help="seed of the sample")
    add_input_arguments(heatmap)
    add_kernel_arguments(heatmap)
    relations = figures.add_parser("relations", help=RELATIONS.splitlines()[0], description=RELATIONS)
    relations.formatter_class = argparse.RawDescriptionHelpFormatter
    relations.add_argument("model", help="a pipeline with a kernel_relations component (name or path)")
    relations.add_argument("corpus", type=Path, help="a relations .jsonl, a standoff directory or a .spacy file")
    add_output_argument(relations, help="the image to write: .png, .svg or .pdf")
    relations.add_argument("--entities", choices=SETTINGS, default="gold", help="given entities (default gold)")
    relations.add_argument("--triggers", choices=SETTINGS, default="predicted", help="triggers (default predicted)")
    relations.add_argument("--quiet", action="store_true", help="no progress bar")


def earlier_spelling(argv: list[str]) -> list[str]:
    """``plot CORPUS ...``, the heatmap's spelling before ``plot relations``, read as
    ``plot heatmap CORPUS ...`` with a warning."""
    if len(argv) > 1 and argv[0] == "plot" and argv[1] not in FIGURES and not argv[1].startswith("-"):
        warnings.warn(
            "`plot CORPUS` is the earlier spelling of `plot heatmap CORPUS`, which replaces it",
            SettingDeprecationWarning,
            stacklevel=2,
        )
        return ["plot", "heatmap", *argv[1:]]
    return argv


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    if arguments.figure == "relations":
        inputs = {"model": pipeline_path(arguments.model), "corpus": standoff_inputs(arguments.corpus)}
        return inputs, {"output": arguments.output}
    inputs = {"input": arguments.input, "--labels": arguments.labels, "--vectors": vector_inputs(arguments.vectors)}
    return inputs, {"output": arguments.output}


def run(arguments: argparse.Namespace) -> None:
    if arguments.output.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InvalidParameterError(f"the output must end in .png, .svg or .pdf, got {arguments.output}")
    figure, said = (relations_figure if arguments.figure == "relations" else heatmap)(arguments)
    figure.tight_layout()
    drawn = io.BytesIO()  # drawn in memory, then written by Python: a full disk is one line, not matplotlib's error
    figure.savefig(drawn, format=arguments.output.suffix.lower()[1:], dpi=110)
    with replacing(arguments.output) as temporary:
        temporary.write_bytes(drawn.getvalue())
    print(f"{said} drawn to {arguments.output}", file=sys.stderr)


def heatmap(arguments: argparse.Namespace):
    """The heatmap's Figure and what it shows."""
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
    return figure, f"{min(arguments.sample, len(trees))} trees"


def relations_figure(arguments: argparse.Namespace):
    """The precision-recall curves' Figure of the model on the corpus, and what it shows."""
    from ..components.relation_evaluation import evaluated_examples, relation_component, warn_unknown_labels
    from ..components.relation_scores import Decisions
    from ..plots import precision_recall_curves
    from .evaluate import references
    from .pipelines import load_pipeline

    nlp = load_pipeline(arguments.model)
    component = relation_component(nlp)
    examples = evaluated_examples(
        nlp,
        references(arguments.corpus, nlp),
        entities=arguments.entities,
        triggers=arguments.triggers,
        progress=not arguments.quiet,
    )
    decisions = Decisions(examples, single_label=component.cfg["single_label"], labels=component.labels)
    warn_unknown_labels(decisions, component)
    scores = decisions.scores_at(component.thresholds)
    marks = {label: (s["p"], s["r"]) for label, s in scores["rel_f_per_type"].items() if label in component.labels}
    ax = precision_recall_curves(decisions.curves(), marks=marks, support=scores["rel_support_per_type"])
    ax.set_title(f"{Path(arguments.model).name} on {arguments.corpus.name}: micro F1 {scores['rel_micro_f']:.3f}")
    ax.figure.set_size_inches(7, 5.5)
    return ax.figure, f"the precision-recall curves of {len(decisions.labels)} labels"


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
