"""TREC question classification from raw text: spaCy textcat, kernel features, both.

    python bench/qc_textcat.py [--data ../shared/data/trec-qc-kelp] [--docs docs] [--only NAME ...]

The questions are converted as `python -m spacy_convkernels convert` does (dev: every
10th training question, 545; train: the other 4,907; test: TREC-10's 500). The md
pipeline of configs/qc_textcat.cfg (tok2vec, tagger, parser, attribute_ruler,
lemmatizer, frozen) and kernel_trees annotate every question once: spacy train runs
these frozen annotating components again on every batch, with the same result. Each
kernel_vectors configuration is then initialized as in spacy train (landmarks among the
md parser's trees of the training questions) and writes Doc._.kernel_vector; each textcat
(configs/qc_textcat.cfg's KernelTextCat, or spaCy's own architectures) trains on those
docs with the config's optimizer, batcher and dropout, is evaluated on dev after every
epoch and keeps its best epoch (at most --epochs, --patience epochs without gain). Every
choice (M, shared_rows, kernel, epoch) is made on dev; test accuracy is reported for all.
Inference speed: the assembled pipeline (md, kernel_trees, kernel_vectors, textcat) on
the raw test questions, nlp.pipe, every core; its test accuracy is checked against the
cached-annotation one. Results go to bench/qc_textcat.json as they come (a run can be
resumed) and to docs/qc_textcat.md.
"""

import argparse
import copy
import json
import random
import time
from pathlib import Path

import numpy as np
import spacy
from qc_classification import svm_accuracy
from spacy.training import Example
from spacy.util import fix_random_seed, load_config, registry

import spacy_convkernels.ml  # noqa: F401  (registers the architectures when not installed)
from spacy_convkernels.cli.convert import CLASSES
from spacy_convkernels.components.registered_kernels import bind_pipeline_vectors
from spacy_convkernels.components.sentences import sentence_trees
from spacy_convkernels.corpora import read_klp

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "qc_textcat.cfg"
MD = ROOT.parent / "shared" / "models" / "en_core_web_md-3.8.0"
PTK = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4, "terminal_factor": 5.0}
SPTK = {
    "@misc": "spacy_convkernels.SmoothedPartialTreeKernel.v1",
    "lam": 0.4,
    "mu": 0.4,
    "terminal_factor": 0.2,
    "threshold": 0.01,
}
CSPTK = {
    "@misc": "spacy_convkernels.CompositionalSmoothedPartialTreeKernel.v1",
    "lam": 0.4,
    "mu": 0.4,
    "terminal_factor": 1.0,
    "threshold": 0.01,
}
FAMILIES = {"PTK-GRCT": ("grct", PTK), "SPTK-LCT": ("lct", SPTK), "CSPTK-CLCT": ("clct", CSPTK)}
SIZES = (500, 1000, 2000)
SPACY_BOW = {
    "@architectures": "spacy.TextCatBOW.v3",
    "exclusive_classes": True,
    "ngram_size": 1,
    "no_output_layer": False,
    "length": 262144,
}
MD_TOK2VEC = {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "tok2vec"}
SPACY_ENSEMBLE = {
    "@architectures": "spacy.TextCatEnsemble.v2",
    "tok2vec": MD_TOK2VEC,
    "linear_model": {**SPACY_BOW, "ngram_size": 1},
}
MEAN_TOK2VEC = {
    "@layers": "chain.v1",
    "*": {"tok2vec": MD_TOK2VEC, "ragged": {"@layers": "list2ragged.v1"}, "mean": {"@layers": "reduce_mean.v1"}},
}


def questions(path: Path):
    """(text, label) of the questions of a KeLP file, in order."""
    return [(e.texts["quest"], e.labels[0].split(":")[0]) for e in read_klp(path)]


class Bench:
    def __init__(self, data: Path, epochs: int, patience: int, limit: int):
        self.config = load_config(CONFIG, overrides={"paths.md_model": str(MD)}, interpolate=True)
        train = questions(data / "train_5500.coarse.klp.gz")
        self.split = {
            "train": [q for i, q in enumerate(train, 1) if i % 10],
            "dev": [q for i, q in enumerate(train, 1) if not i % 10],
            "test": questions(data / "TREC_10.coarse.klp.gz"),
        }
        if limit:
            self.split = {name: rows[: limit if name == "train" else limit // 5] for name, rows in self.split.items()}
        self.epochs, self.patience = epochs, patience
        self.md = spacy.load(MD, exclude=["ner", "senter"])
        self.md.add_pipe("kernel_trees", config={"representations": ["grct", "lct", "clct"]})
        start = time.perf_counter()
        self.docs = {
            name: list(self.md.pipe([text for text, _ in rows], batch_size=256)) for name, rows in self.split.items()
        }
        self.parse_seconds = time.perf_counter() - start
        self.labels = {name: np.array([label for _, label in rows]) for name, rows in self.split.items()}

    def kernel_vectors(self, family: str, size: int, shared_rows=None):
        """A kernel_vectors component initialized on the training docs, its seconds to
        initialize and to annotate every doc, and the docs' vectors."""
        representation, kernel = FAMILIES[family]
        kernel = dict(kernel, **({"shared_rows": shared_rows} if shared_rows else {}))
        nlp = spacy.blank("en", vocab=self.md.vocab)
        component = nlp.add_pipe(
            "kernel_vectors", config={"representation": representation, "kernel": kernel, "n_components": size}
        )
        start = time.perf_counter()
        component.initialize(lambda: [Example(d, d) for d in self.docs["train"]], nlp=nlp)
        fitted = time.perf_counter()
        vectors = {
            name: np.stack([d._.kernel_vector for d in component.pipe([d.copy() for d in docs])])
            for name, docs in self.docs.items()
        }
        return nlp, fitted - start, time.perf_counter() - fitted, vectors

    def textcat(self, model: dict, vectors=None):
        """Train a textcat with ``model``; returns its pipeline, dev and test accuracy at the
        best dev epoch, that epoch and the training seconds."""
        fix_random_seed(0)
        nlp = spacy.blank("en", vocab=self.md.vocab)
        textcat = nlp.add_pipe("textcat", config={"model": model})
        examples = {name: self._examples(name, vectors) for name in self.docs}
        training = registry.resolve(
            {"optimizer": self.config["training"]["optimizer"], "batcher": self.config["training"]["batcher"]}
        )
        dropout = self.config["training"]["dropout"]
        start = time.perf_counter()
        optimizer = nlp.initialize(lambda: examples["train"], sgd=training["optimizer"])
        best, since, rng = (-1.0, 0, None), 0, random.Random(0)
        for epoch in range(1, self.epochs + 1):
            order = examples["train"][:]
            rng.shuffle(order)
            for batch in training["batcher"](order):
                textcat.update(batch, sgd=optimizer, drop=dropout)
            dev = self._accuracy(textcat, examples["dev"])
            print(f"  epoch {epoch}: dev {dev:.1f}", flush=True)
            if dev > best[0]:
                best, since = (dev, epoch, textcat.model.to_bytes()), 0
            else:
                since += 1
                if since >= self.patience:
                    break
        seconds = time.perf_counter() - start
        textcat.model.from_bytes(best[2])
        return nlp, best[0], self._accuracy(textcat, examples["test"]), best[1], seconds

    def _examples(self, name, vectors):
        examples = []
        for i, (doc, label) in enumerate(zip(self.docs[name], self.labels[name])):
            doc = doc.copy()
            if vectors is not None:
                doc._.kernel_vector = vectors[name][i]
            reference = doc.copy()
            reference.cats = {c: float(c == label) for c in CLASSES}
            examples.append(Example(doc, reference))
        return examples

    @staticmethod
    def _accuracy(textcat, examples):
        scores = textcat.predict([e.predicted for e in examples])
        predicted = np.array(textcat.labels)[np.asarray(scores).argmax(axis=1)]
        return 100.0 * np.mean(
            predicted == np.array([max(e.reference.cats, key=e.reference.cats.get) for e in examples])
        )

    def assembled(self, kernel_nlp, textcat_nlp):
        """The whole pipeline from raw text: md, kernel_trees, kernel_vectors, textcat (the
        textcat alone without ``kernel_nlp``); its questions per second on the raw test
        questions and its test accuracy."""
        if kernel_nlp is None:
            nlp = spacy.blank("en", vocab=self.md.vocab)
        else:
            nlp = spacy.load(MD, exclude=["ner", "senter"], vocab=self.md.vocab)
            representation = kernel_nlp.get_pipe("kernel_vectors").representation
            nlp.add_pipe("kernel_trees", config={"representations": [representation]})
            nlp.add_pipe("kernel_vectors", source=kernel_nlp)
        nlp.add_pipe("textcat", source=textcat_nlp)
        texts = [text for text, _ in self.split["test"]]
        start = time.perf_counter()
        docs = list(nlp.pipe(texts, batch_size=256))
        speed = len(texts) / (time.perf_counter() - start)
        predicted = np.array([max(d.cats, key=d.cats.get) for d in docs])
        return speed, 100.0 * np.mean(predicted == self.labels["test"])

    def exact_svm(self, family: str) -> float:
        """The exact-kernel one-vs-all SVM (C = 10) of qc_classification.md on the md
        parser's trees: trained on train + dev (KeLP's 5,452), tested on the 500."""

        representation, params = FAMILIES[family]
        kernel = bind_pipeline_vectors(registry.resolve({"k": params})["k"], self.md.vocab)
        trees = {
            name: [next(t for t in sentence_trees(d, representation) if t is not None) for d in docs]
            for name, docs in self.docs.items()
        }  # a question the parser splits: its first sentence
        X, y = trees["train"] + trees["dev"], np.concatenate([self.labels["train"], self.labels["dev"]])
        return svm_accuracy(kernel.gram(X), y, kernel.gram(trees["test"], X), self.labels["test"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "trec-qc-kelp")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "qc_textcat.json")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--patience", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="first N training questions only (development)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--families", nargs="+", default=list(FAMILIES))
    args = parser.parse_args()
    results = json.loads(args.results.read_text()) if args.results.exists() else {}

    def record(key, **values):
        results[key] = {name: float(value) if value is not None else None for name, value in values.items()}
        args.results.write_text(json.dumps(results, indent=1))
        write_docs(results, args.docs / "qc_textcat.md")
        print(key, values, flush=True)

    bench = Bench(args.data, args.epochs, args.patience, args.limit)
    record("parse", seconds=bench.parse_seconds, questions=sum(len(d) for d in bench.docs.values()))
    ktc = bench.config["components"]["textcat"]["model"]
    text_only = dict(copy.deepcopy(ktc), kernel_features=None)
    baselines = [("spaCy BOW", SPACY_BOW), ("KernelTextCat text only (BOW)", text_only)]
    later = [
        ("spaCy ensemble (md tok2vec)", SPACY_ENSEMBLE),
        ("KernelTextCat text only (mean md tok2vec)", dict(text_only, text_features=MEAN_TOK2VEC)),
    ]

    def run_text(name, model):
        if name not in results:
            nlp, dev, test, epoch, seconds = bench.textcat(model)
            speed, _ = bench.assembled(None, nlp) if name == "spaCy BOW" else (None, None)
            record(name, dev=dev, test=test, epoch=epoch, train_seconds=seconds, speed=speed)

    for name, model in baselines:
        run_text(name, model)
    for family in args.families:
        kernel_runs = {}
        rules = [None] if family == "PTK-GRCT" else ["diluted", "kelp", "exclusive"]
        for size in args.sizes:
            for rule in rules if size == 1000 else rules[:1]:
                key = f"{family} M={size}" + (f" shared_rows={rule}" if rule else "")
                kernel_nlp, fit_s, annotate_s, vectors = bench.kernel_vectors(family, size, rule)
                kernel_runs[key] = (kernel_nlp, vectors)
                if key in results:
                    continue
                model = dict(copy.deepcopy(ktc), text_features=None)
                model["kernel_features"]["nO"] = size
                _, dev, test, epoch, seconds = bench.textcat(model, vectors)
                record(
                    key,
                    dev=dev,
                    test=test,
                    epoch=epoch,
                    train_seconds=seconds,
                    landmarks_seconds=fit_s,
                    annotate_seconds=annotate_s,
                    annotate_per_second=sum(map(len, bench.docs.values())) / annotate_s,
                )
        best = max(kernel_runs, key=lambda k: results[k]["dev"])
        key = f"both: {best} + BOW"
        if key not in results:
            kernel_nlp, vectors = kernel_runs[best]
            model = copy.deepcopy(ktc)
            model["kernel_features"]["nO"] = vectors["train"].shape[1]
            textcat_nlp, dev, test, epoch, seconds = bench.textcat(model, vectors)
            speed, assembled = bench.assembled(kernel_nlp, textcat_nlp)
            record(key, dev=dev, test=test, epoch=epoch, train_seconds=seconds, speed=speed, assembled_test=assembled)
    for name, model in later:
        run_text(name, model)
    for family in args.families:
        key = f"exact SVM {family}"
        if key not in results:
            start = time.perf_counter()
            record(key, test=bench.exact_svm(family), seconds=time.perf_counter() - start)


def write_docs(results: dict, path: Path):
    lines = [
        "# TREC question classification from raw text with kernel features",
        "",
        "Made by `python bench/qc_textcat.py` (its docstring gives the protocol); raw results in",
        "bench/qc_textcat.json. Train 4,907 / dev 545 (every 10th question of train_5500, as",
        "`python -m spacy_convkernels convert --dev` writes it) / test 500 (TREC-10). The md",
        "pipeline parses the questions as given in KeLP's files (`|BS:quest|`, tokens separated",
        'by spaces). Accuracy in %. Every choice (epoch, M, `shared_rows`, the kernel for "both")',
        "is made on dev; test is reported for every row. KernelTextCat rows use the textcat of",
        "configs/qc_textcat.cfg (maxout hidden layer of 256, the config's optimizer, batcher and",
        "dropout), with `text_features` or `kernel_features` set to null for one part alone; BOW",
        "there is spaCy's `spacy.TextCatBOW.v3` (unigrams and bigrams, 65,536 x 32) without its",
        "output layer. spaCy BOW and spaCy ensemble are spaCy's own `TextCatBOW.v3` (unigrams,",
        "262,144 rows) and `TextCatEnsemble.v2` (that BOW with the md tok2vec through a",
        "listener) on the same loop. Training s: the textcat's training with a dev evaluation per",
        "epoch, on annotations computed once (kernel vectors below). Questions/s: the assembled",
        "pipeline (md, kernel_trees, kernel_vectors, textcat; spaCy BOW: the textcat alone) on",
        "the 500 raw test questions, `nlp.pipe`, batch 256, 2 cores, and its test accuracy",
        "(equal to the row's when the cached annotations are those of the pipeline).",
        "Kernels at KeLP's parameters (PTK-GRCT: lam = mu = 0.4, terminal",
        "factor 5; SPTK-LCT: terminal factor 0.2, threshold 0.01; CSPTK-CLCT: terminal factor 1,",
        "threshold 0.01), the md vectors of the pipeline's vocab, M landmarks uniform",
        "(random_state 0) among the md parser's trees of the training questions; `shared_rows`",
        "compared at M = 1000, the other sizes diluted. Exact SVM: the one-vs-all C-SVM (C = 10)",
        "of qc_classification.md, `shared_rows` kelp (the default).",
        f"Annotating the {results['parse']['questions']:,.0f} questions once with the md pipeline and "
        f"kernel_trees: {results['parse']['seconds']:.0f} s."
        if "parse" in results
        else "",
        "",
        "| model | dev % | test % | best epoch | training s | questions/s | assembled pipeline test % |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, r in results.items():
        if "dev" in r:
            speed = f"{r['speed']:.0f}" if r.get("speed") else ""
            assembled = f"{r['assembled_test']:.1f}" if r.get("assembled_test") is not None else ""
            lines.append(
                f"| {key} | {r['dev']:.1f} | {r['test']:.1f} | {int(r['epoch'])} | {r['train_seconds']:.0f} "
                f"| {speed} | {assembled} |"
            )
    lines += ["", "| exact-kernel SVM on the md parser's trees (train + dev) | test % | s |", "|---|---|---|"]
    lines += [
        f"| {key[len('exact SVM ') :]} | {r['test']:.1f} | {r['seconds']:.0f} |"
        for key, r in results.items()
        if key.startswith("exact SVM")
    ]
    lines += [
        "",
        "Kernel vectors: seconds to pick the landmarks (and their Gram), to annotate every question",
        "(train, dev, test) and questions per second of that annotation.",
        "",
        "| kernel | landmarks s | annotate s | questions/s |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {key} | {r['landmarks_seconds']:.1f} | {r['annotate_seconds']:.1f} | {r['annotate_per_second']:.0f} |"
        for key, r in results.items()
        if "landmarks_seconds" in r
    ]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
