"""Evaluate a trained relation pipeline on a gold corpus, or a kernel on the two benchmark tasks.

    RELATIONS=$(python -m spacy_convkernels demo --sample relations)
    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    BIONLP=$(python -m spacy_convkernels demo --sample bionlp)
    python -m spacy_convkernels evaluate relations training/relations/model-best "$RELATIONS"
    python -m spacy_convkernels evaluate qc "$QUESTIONS" "$QUESTIONS" --kernel ptk
    python -m spacy_convkernels evaluate bionlp "$BIONLP" "$BIONLP" --model en_core_web_md

``evaluate relations`` scores a pipeline's kernel_relations component with the corpus's
gold entities (``python -m spacy evaluate`` gives its Docs none). ``evaluate qc`` and
``evaluate bionlp`` are the library's protocols of the benchmark scripts in the
repository's bench/, for one kernel at a time (the scripts compare many and write the
docs' tables). ``evaluate TASK --help`` describes each. The qc and bionlp examples train
and test on one sample: they show that the command runs, not a score.
"""

import argparse
import time
from pathlib import Path

from ..errors import ConvKernelsError, CorpusFileError, InvalidParameterError
from ..utils.outputs import pipeline_path, replacing
from ..utils.validation import POSITIVE
from .kernel_inputs import REPRESENTATIONS, add_kernel_arguments, kernel_parameters, make_kernel
from .options import accepted_by, add_checked_argument, positive, processes, standoff_inputs, threads, vector_inputs

SETTINGS = ("gold", "predicted")  # of evaluate relations' --entities and --triggers (evaluate_relations's)

RELATIONS = """A relation pipeline on a gold corpus, with its gold entities (docs/relations.md).

    RELATIONS=$(python -m spacy_convkernels demo --sample relations)
    BIONLP=$(python -m spacy_convkernels demo --sample bionlp)
    python -m spacy_convkernels evaluate relations training/relations/model-best "$RELATIONS"
    python -m spacy_convkernels evaluate relations training/bionlp/model-best "$BIONLP" --triggers gold

MODEL is a pipeline with a kernel_relations component (name or path), such as ``spacy
train`` makes from configs/relations.cfg or configs/bionlp_relations.cfg; CORPUS is a
relations JSONL file (.jsonl, .jsonl.gz), a directory of BioNLP standoff documents or a
.spacy file that ``convert`` wrote from either. Each document's text goes through the
pipeline with, by default, the gold entities (for interactions, also the gold
participants: the shared task's gold proteins), kept whatever the pipeline's components
write; ``--entities predicted`` leaves them to the pipeline (raw text). Triggers are the
pipeline's, or with ``--triggers gold`` the corpus's: the shared task's two settings.
Prints micro precision, recall and F1, and per label with its support (the corpus's gold
relations of the label) and threshold, as ``spacy train`` scores its dev corpus (the same
figures on the same documents with what its reader gives); ``-o`` (``--output``) writes
them as JSON. ``--threshold`` scores at other thresholds than the model's: ``0.5`` for
every label, ``Kill=0.7`` for one (repeat it for more). Warns when spans of the corpus
were widened to whole tokens, and when the corpus has relations of labels the model does
not know (or none of its labels at all).
"""
QC = """TREC question classification: one-vs-all SVMs on a tree kernel (bench/qc_classification.py).

    QUESTIONS=$(python -m spacy_convkernels demo --sample questions)
    python -m spacy_convkernels evaluate qc "$QUESTIONS" "$QUESTIONS" --kernel ptk

TRAIN and TEST are KeLP example files (the benchmark's: train_5500.coarse.klp.gz and
TREC_10.coarse.klp.gz); their ``--representation`` trees and coarse classes. One binary
C-SVM per class on the normalized Gram, with KeLP's fairness (a positive error costs
C * negatives / positives); the highest decision value wins. Prints the test accuracy.
"""
BIONLP = """BioNLP GE interactions: a path-kernel k-NN (bench/bionlp_relations.py, the exact PK k-NN row).

    BIONLP=$(python -m spacy_convkernels demo --sample bionlp)
    python -m spacy_convkernels evaluate bionlp "$BIONLP" "$BIONLP" --model en_core_web_md

TRAIN and DEVEL are BioNLP standoff directories with gold proteins, parsed by ``--model``
(its NER left out). Candidates are the interactions of the role sets theme; catalyst,
theme; theme, theme2 within 4 dependency edges of the gold triggers, positive when a gold
interaction has their trigger and participants. A k-NN on the subsequence path kernel
(lam 0.5) of their paths, fitted on the training candidates, predicts the devel
candidates; prints precision, recall and F1 of the positive class.
"""


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    tasks = parser.add_subparsers(dest="task", required=True)
    relations = tasks.add_parser("relations", help=RELATIONS.splitlines()[0], description=RELATIONS)
    relations.formatter_class = argparse.RawDescriptionHelpFormatter
    relations.add_argument("model", help="a pipeline with a kernel_relations component (name or path)")
    relations.add_argument("corpus", type=Path, help="a relations .jsonl, a standoff directory or a .spacy file")
    relations.add_argument("--entities", choices=SETTINGS, default="gold", help="given entities (default gold)")
    relations.add_argument("--triggers", choices=SETTINGS, default="predicted", help="triggers (default predicted)")
    relations.add_argument(
        "--threshold",
        action="append",
        default=None,
        metavar="[LABEL=]VALUE",
        help="score at this threshold, for every label or one (repeatable; default: the model's)",
    )
    relations.add_argument("-o", "--output", type=Path, default=None, help="write the scores here as JSON")
    relations.add_argument("--quiet", action="store_true", help="no progress bar")
    qc = tasks.add_parser("qc", help=QC.splitlines()[0], description=QC)
    qc.formatter_class = argparse.RawDescriptionHelpFormatter
    qc.add_argument("train", type=Path, help="KeLP examples to train on (.klp, .klp.gz)")
    qc.add_argument("test", type=Path, help="KeLP examples to test on")
    qc.add_argument("--representation", choices=REPRESENTATIONS, default="grct", help="the trees (default grct)")
    add_checked_argument(
        qc, "--C", check=accepted_by(POSITIVE), type=float, default=10.0, help="the SVMs' C (default 10, KeLP's)"
    )
    qc.add_argument("--quiet", action="store_true", help="no progress bars")
    add_kernel_arguments(qc)
    bionlp = tasks.add_parser("bionlp", help=BIONLP.splitlines()[0], description=BIONLP)
    bionlp.formatter_class = argparse.RawDescriptionHelpFormatter
    bionlp.add_argument("train", type=Path, help="a directory of standoff documents (.txt, .a1, .a2)")
    bionlp.add_argument("devel", type=Path, help="a directory of standoff documents to score")
    bionlp.add_argument("--model", required=True, help="a spaCy pipeline with a parser (name or path)")
    add_checked_argument(bionlp, "--k", check=positive, type=int, default=5, help="neighbours (default 5)")
    add_checked_argument(
        bionlp, "--n-jobs", check=threads, type=int, default=None, help="threads of the kernel (default: every core)"
    )
    add_checked_argument(
        bionlp, "--n-process", check=processes, type=int, default=1, help="parser processes (default 1)"
    )
    bionlp.add_argument("--quiet", action="store_true", help="no progress bars")


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    if arguments.task == "qc":
        return {"train": arguments.train, "test": arguments.test, "--vectors": vector_inputs(arguments.vectors)}, {}
    if arguments.task == "bionlp":
        return {"train": arguments.train, "devel": arguments.devel, "--model": pipeline_path(arguments.model)}, {}
    inputs = {"model": pipeline_path(arguments.model), "corpus": standoff_inputs(arguments.corpus)}
    return inputs, {"--output": arguments.output}


def run(arguments: argparse.Namespace) -> None:
    {"relations": evaluate_relations, "qc": evaluate_qc, "bionlp": evaluate_bionlp}[arguments.task](arguments)


def evaluate_relations(arguments: argparse.Namespace) -> None:
    import srsly

    from ..components.relation_evaluation import evaluate_relations as score
    from ..components.relation_evaluation import relation_component
    from .pipelines import load_pipeline

    corpus = arguments.corpus
    if not corpus.exists():
        raise CorpusFileError("no such file or directory", corpus)
    nlp = load_pipeline(arguments.model)
    documents = references(corpus, nlp)
    thresholds = _thresholds(arguments.threshold, relation_component(nlp))
    scores = score(
        nlp,
        documents,
        entities=arguments.entities,
        triggers=arguments.triggers,
        threshold=thresholds,
        progress=not arguments.quiet,
    )
    print(
        f"relations: {arguments.model} on {corpus}, {arguments.entities} entities, {arguments.triggers} triggers: "
        f"{_figures(scores['rel_micro_p'], scores['rel_micro_r'], scores['rel_micro_f'])}"
    )
    print(f"  any label: {_figures(scores['rel_untyped_p'], scores['rel_untyped_r'], scores['rel_untyped_f'])}")
    rows = [("label", "precision", "recall", "F1", "support", "threshold")]
    for label, figures in scores["rel_f_per_type"].items():
        threshold = f"{thresholds[label]:.3f}" if label in thresholds else "(unknown)"
        figure_cells = (f"{figures[key]:.3f}" for key in ("p", "r", "f"))
        rows.append((label, *figure_cells, f"{scores['rel_support_per_type'][label]:,}", threshold))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print(
            "  "
            + "  ".join(
                cell.ljust(width) if i == 0 else cell.rjust(width) for i, (cell, width) in enumerate(zip(row, widths))
            )
        )
    if arguments.output is not None:
        with replacing(arguments.output, name="--output") as temporary:
            srsly.write_json(temporary, {**scores, "thresholds": thresholds})


def _thresholds(given: list[str] | None, component) -> dict[str, float]:
    """Each label's threshold: the component's, replaced by ``--threshold VALUE`` (every
    label) and ``--threshold LABEL=VALUE`` (one), in their order."""
    thresholds = dict(component.thresholds)
    for item in given or []:
        label, _, value = item.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not 0.0 <= number <= 1.0:
            raise InvalidParameterError(f"--threshold {item}: the value must be a number in [0, 1]")
        if label and label not in thresholds:
            raise InvalidParameterError(
                f"--threshold {item}: the model has no label {label!r} (its labels: {', '.join(thresholds)})"
            )
        thresholds.update({label: number} if label else dict.fromkeys(thresholds, number))
    return thresholds


def references(corpus: Path, nlp) -> list:
    """The gold Docs of a corpus: a standoff directory, a relations JSONL file or a .spacy
    file; a warning when spans were widened to whole tokens of the pipeline's tokenizer."""
    import warnings
    from collections import Counter

    from ..corpora import read_relations_jsonl, read_standoff
    from ..errors import CorpusWarning
    from .pipelines import read_docbin

    counts: Counter = Counter()
    if corpus.is_dir():
        documents = list(read_standoff(corpus, nlp, counts=counts))
    elif corpus.name.endswith((".jsonl", ".jsonl.gz")):
        documents = list(read_relations_jsonl(corpus, nlp, counts=counts))
    elif corpus.suffix == ".spacy":
        documents = read_docbin(corpus, nlp.vocab)
    else:
        raise CorpusFileError("not a relations .jsonl, a standoff directory or a .spacy file", corpus)
    if not documents:
        raise CorpusFileError("no document", corpus)
    if counts["misaligned"]:
        warnings.warn(
            f"{corpus}: {counts['misaligned']:,} annotated spans begin or end inside a token of the pipeline's "
            "tokenizer and were widened to whole tokens, so a relation of theirs is scored on the wider span",
            CorpusWarning,
            stacklevel=2,
        )
    return documents


def _figures(precision: float, recall: float, f1: float) -> str:
    return f"precision {precision:.3f}, recall {recall:.3f}, F1 {f1:.3f}"


def evaluate_qc(arguments: argparse.Namespace) -> None:
    import numpy as np

    from ..learn import fair_one_vs_all

    kernel = make_kernel(arguments.kernel, kernel_parameters(arguments))
    (X, y), (Z, y_test) = (_questions(path, arguments.representation) for path in (arguments.train, arguments.test))
    if len(np.unique(y)) < 2:
        raise ConvKernelsError(f"{arguments.train}: the training questions have a single class")
    start = time.perf_counter()
    progress = not arguments.quiet
    train_gram = kernel.gram(X, normalize=arguments.normalize, n_jobs=arguments.n_jobs, progress=progress)
    test_gram = kernel.gram(Z, X, normalize=arguments.normalize, n_jobs=arguments.n_jobs, progress=progress)
    seconds = time.perf_counter() - start
    predicted = fair_one_vs_all(train_gram, y, test_gram, C=arguments.C)
    print(
        f"qc: {arguments.kernel} on {arguments.representation}, {len(X)} training and {len(Z)} test questions: "
        f"accuracy {100 * np.mean(predicted == y_test):.2f} % ({np.sum(predicted == y_test)}/{len(Z)}); "
        f"Grams in {seconds:.1f} s"
    )


def _questions(path: Path, representation: str) -> tuple:
    """The trees of a KeLP file's questions and their coarse labels (an array)."""
    import numpy as np

    from ..corpora import read_klp

    trees: list = []
    labels: list[str] = []
    for example in read_klp(path):
        if representation not in example.trees or len(example.labels) != 1:
            raise ConvKernelsError(f"{path}: question {len(trees) + 1} lacks a {representation} tree or one label")
        trees.append(example.trees[representation])
        labels.append(example.labels[0].split(":")[0])
    if not trees:
        raise ConvKernelsError(f"{path}: no question")
    return trees, np.array(labels)


def evaluate_bionlp(arguments: argparse.Namespace) -> None:
    import numpy as np

    from ..kernels import SubsequencePathKernel
    from ..learn import KernelKNeighborsClassifier
    from .pipelines import load_pipeline

    for folder in (arguments.train, arguments.devel):
        if not folder.is_dir():
            raise CorpusFileError("no such directory", folder)
    nlp = load_pipeline(arguments.model, exclude=["ner"])
    if "parser" not in nlp.pipe_names:
        raise InvalidParameterError(f"--model {arguments.model} has no parser")
    progress = not arguments.quiet
    X, y = _candidates(arguments.train, nlp, arguments.n_process, progress)
    Z, y_devel = _candidates(arguments.devel, nlp, arguments.n_process, progress)
    if not y.any():
        raise ConvKernelsError(f"{arguments.train}: no positive training candidate (no .a2 events?)")
    start = time.perf_counter()
    knn = KernelKNeighborsClassifier(
        SubsequencePathKernel(lam=0.5), n_neighbors=arguments.k, n_jobs=arguments.n_jobs, verbose=progress
    ).fit(X, y)
    predicted = knn.predict(Z).astype(bool)
    seconds = time.perf_counter() - start
    tp = int(np.sum(predicted & y_devel))
    precision, recall = tp / max(predicted.sum(), 1), tp / max(y_devel.sum(), 1)
    f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
    print(
        f"bionlp: path-kernel {arguments.k}-NN, {len(X)} training candidates ({y.sum()} positive), "
        f"{len(Z)} devel candidates ({y_devel.sum()} positive): precision {precision:.3f}, recall {recall:.3f}, "
        f"F1 {f1:.3f}; k-NN in {seconds:.1f} s"
    )


def _candidates(folder: Path, nlp, n_process: int, progress: bool) -> tuple:
    """The paths of the candidates of a directory's documents, and whether each is positive."""
    import numpy as np
    from tqdm import tqdm

    from ..corpora import read_standoff
    from ..structures.relations import GoldRelations, dependency_interactions

    documents = list(read_standoff(folder, nlp))
    if not documents:
        raise CorpusFileError("no standoff document (.txt)", folder)
    paths, positive = [], []
    docs = nlp.pipe(documents, n_process=n_process)
    for doc in tqdm(docs, total=len(documents), desc=f"parsing {folder.name}", unit="doc", disable=not progress):
        gold = GoldRelations(doc)
        for candidate in dependency_interactions(doc):  # the three role sets, 4 edges
            paths.append(candidate.path)
            positive.append(bool(gold.labels(candidate, doc)))
    return paths, np.array(positive, dtype=bool)
