"""5-fold cross-validation over a relations corpus's train and dev documents: the shipped
``relations`` config against a hand-built exact SVM, pooled over the folds, with a paired
bootstrap interval of their micro-F1 difference (issue 63, point 2: a test set of 288
sentences moves by about 3 points, so one split decides little).

    python bench/relations_cv.py [--corpus ../shared/data/conll04] --work /tmp/relations-cv \
        [--folds 5] [--bootstrap 2000] [--results docs/results/relations_cv.json]

The documents of train and dev are shuffled (seed 0) into ``--folds`` folds. For each
fold, the others are the training documents, a tenth of them (seed 0) held out as the dev
set that chooses what each system chooses on dev, and the fold is scored with its gold
entities:

- ``component``: ``spacy train`` of the shipped ``relations`` config (seed 0) on the
  training documents, model-best on the dev tenth; the fold scored as ``evaluate
  relations`` scores it;
- ``hand-built``: the issue's hand-built SVM, one-vs-rest ``KernelSVC``s over the mean of
  two normalized Grams of the same candidates, the path kernel (separate positions, lam
  0.5) and the SPTK on their LCT path-enclosed trees (lam = mu = 0.4, md's vectors,
  ``shared_rows = "diluted"``), C among 0.3 to 30 chosen on the dev tenth; a candidate
  takes its label of highest decision when that is positive.

Both are counted alike (``Decisions.counts_at``: a gold relation no candidate reaches is
missed), per document; the pooled micro F1 of each, and for the difference the mean and
the 2.5 and 97.5 percentiles over ``--bootstrap`` resamplings of the documents (seed 0).
"""

import argparse
import json
import random
from pathlib import Path

import numpy as np
import spacy
from common import write_json
from locations import DATA, MD_MODEL
from spacy.training import Example
from spacy_train import train

from spacy_convkernels.cli.evaluate import references
from spacy_convkernels.components.relation_evaluation import evaluated_examples, relation_component
from spacy_convkernels.components.relation_scores import Decisions
from spacy_convkernels.configs import config_path
from spacy_convkernels.kernels import SmoothedPartialTreeKernel, SubsequencePathKernel
from spacy_convkernels.learn import KernelSVC
from spacy_convkernels.structures.relations import GoldRelations, entity_pairs
from spacy_convkernels.utils.outputs import replacing

CS = (0.3, 1.0, 3.0, 10.0, 30.0)


def counts(examples: list[Example], thresholds, labels: list[str], *, single_label: bool) -> np.ndarray:
    """Per example, [right predictions, predictions, gold found, gold relations], micro."""
    rows = []
    for example in examples:
        per_label = Decisions([example], single_label=single_label, labels=labels).counts_at(thresholds)
        rows.append(sum(per_label.values(), np.zeros(4, dtype=int)))
    return np.array(rows)


def micro_f1(rows: np.ndarray) -> float:
    right, predicted, found, gold = rows.sum(axis=0)
    precision, recall = right / max(predicted, 1), found / max(gold, 1)
    return 0.0 if precision + recall == 0 else float(2 * precision * recall / (precision + recall))


def write_lines(path: Path, lines: list[str]) -> Path:
    with replacing(path) as temporary:
        temporary.write_text("".join(lines), encoding="utf-8")
    return path


def component_counts(fold: Path, md: Path, labels: list[str]) -> np.ndarray:
    """Train the shipped config on the fold's training documents, count on its held ones."""
    output = fold / "component"
    if not (output / "model-best").exists():
        overrides = ["--paths.train", str(fold / "train.jsonl"), "--paths.dev", str(fold / "dev.jsonl")]
        overrides += ["--paths.md_model", str(md), "--system.seed", "0"]
        train(config_path("relations"), output, overrides, log=fold / "component.log")
    nlp = spacy.load(output / "model-best")
    pipe = relation_component(nlp)
    examples = evaluated_examples(nlp, references(fold / "held.jsonl", nlp), entities="gold")
    return counts(examples, pipe.thresholds, labels, single_label=pipe.cfg["single_label"])


class HandBuilt:
    """The hand-built SVM's Grams over every candidate of the corpus, computed once."""

    def __init__(self, lines: list[str], md: Path, work: Path):
        """Parse the documents of ``lines`` with ``md``, give them their gold entities and
        compute the mean of the path kernel's and the SPTK's Grams of their candidates."""
        nlp = spacy.load(md, exclude=["ner"])
        self.references = references(write_lines(work / "all.jsonl", lines), nlp)
        self.docs = list(nlp.pipe(reference.text for reference in self.references))
        for doc, reference in zip(self.docs, self.references):
            doc.ents = [doc.char_span(e.start_char, e.end_char, e.label_) for e in reference.ents]
        self.candidates = [entity_pairs(doc, path="separate", tree="lct") for doc in self.docs]
        self.owner = np.array([d for d, found in enumerate(self.candidates) for _ in found])
        self.first_row = np.cumsum([0] + [len(found) for found in self.candidates])  # a document's rows start there
        flat = [c for found in self.candidates for c in found]
        golds = [GoldRelations(reference) for reference in self.references]
        self.labels = sorted({label for gold in golds for pair in gold.pairs.values() for label in pair})
        self.Y = np.array(
            [
                [label in gold.labels(c, doc) for label in self.labels]
                for gold, doc, found in zip(golds, self.docs, self.candidates)
                for c in found
            ],
            dtype=int,
        )
        sptk = SmoothedPartialTreeKernel(lam=0.4, mu=0.4, vectors=nlp.vocab, shared_rows="diluted")
        self.paths = [c.path for c in flat]
        self.gram = SubsequencePathKernel(lam=0.5).gram(self.paths, progress=True)
        self.gram += sptk.gram([c.tree for c in flat], progress=True)
        self.gram /= 2

    def fold_counts(self, fit_docs, dev_docs, held_docs) -> tuple[np.ndarray, float]:
        """The held documents' counts of SVMs fitted on ``fit_docs`` at the C of the best
        micro F1 on ``dev_docs``, and that C."""
        rows = {
            name: np.flatnonzero(np.isin(self.owner, docs))
            for name, docs in (("fit", fit_docs), ("dev", dev_docs), ("held", held_docs))
        }
        fit = rows["fit"]

        def predictions(C: float, where: np.ndarray) -> np.ndarray:
            svm = KernelSVC(SubsequencePathKernel(lam=0.5), C=C)
            svm.fit_gram(self.gram[np.ix_(fit, fit)], [self.paths[i] for i in fit], self.Y[fit])
            decisions = svm.decision_function_from_rows(self.gram[np.ix_(where, fit[svm.support_])])
            best = decisions.argmax(axis=1)
            return np.where(decisions[np.arange(len(where)), best] > 0, best, -1)

        def examples(docs, where: np.ndarray, predicted: np.ndarray) -> list[Example]:
            """The Examples of ``docs`` whose candidates (rows ``where``) predict ``predicted`` (-1: none)."""
            by_row = dict(zip(where.tolist(), predicted.tolist()))
            out = []
            for d in docs:
                doc = self.docs[d].copy()
                doc._.kernel_rel = {
                    c.key: ({self.labels[by_row[i]]: 1.0} if by_row[i] >= 0 else {})
                    for i, c in enumerate(self.candidates[d], start=self.first_row[d])
                }
                out.append(Example(doc, self.references[d]))
            return out

        dev = rows["dev"]
        scored = {
            C: micro_f1(counts(examples(dev_docs, dev, predictions(C, dev)), 0.5, self.labels, single_label=True))
            for C in CS
        }
        best = max(CS, key=lambda C: (scored[C], -C))
        held = rows["held"]
        return counts(examples(held_docs, held, predictions(best, held)), 0.5, self.labels, single_label=True), best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DATA / "conll04")
    parser.add_argument("--md-model", type=Path, default=MD_MODEL)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--results", type=Path)
    parser.add_argument("--limit", type=int, help="the first N documents only, for a quick check")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    lines = [line for split in ("train", "dev") for line in (args.corpus / f"{split}.jsonl").open(encoding="utf-8")]
    lines = lines[: args.limit]
    order = list(range(len(lines)))
    random.Random(0).shuffle(order)
    folds = [sorted(order[k :: args.folds]) for k in range(args.folds)]
    hand = HandBuilt(lines, args.md_model, args.work)
    pooled = {"component": [], "hand-built": []}
    per_fold = []
    for k, held in enumerate(folds):
        rest = [d for j, fold in enumerate(folds) if j != k for d in fold]
        dev = sorted(random.Random(0).sample(rest, len(rest) // 10))
        fit = sorted(set(rest) - set(dev))
        folder = args.work / f"fold{k}"
        folder.mkdir(exist_ok=True)
        for name, docs in (("train", fit), ("dev", dev), ("held", held)):
            write_lines(folder / f"{name}.jsonl", [lines[d] for d in docs])
        ours = component_counts(folder, args.md_model, hand.labels)
        theirs, C = hand.fold_counts(fit, dev, held)
        pooled["component"].append(ours)
        pooled["hand-built"].append(theirs)
        row = {"fold": k, "documents": len(held), "component": micro_f1(ours), "hand-built": micro_f1(theirs), "C": C}
        per_fold.append(row)
        print(json.dumps(row), flush=True)
    ours, theirs = (np.concatenate(pooled[name]) for name in ("component", "hand-built"))
    rng = np.random.default_rng(0)
    differences = []
    for _ in range(args.bootstrap):
        sample = rng.integers(len(ours), size=len(ours))
        differences.append(micro_f1(ours[sample]) - micro_f1(theirs[sample]))
    summary = {
        "component": micro_f1(ours),
        "hand-built": micro_f1(theirs),
        "difference": micro_f1(ours) - micro_f1(theirs),
        "interval_95": [float(np.percentile(differences, 2.5)), float(np.percentile(differences, 97.5))],
        "documents": len(ours),
        "folds": per_fold,
    }
    print(json.dumps(summary, indent=1))
    if args.results is not None:
        write_json(args.results, summary)


if __name__ == "__main__":
    main()
