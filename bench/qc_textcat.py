"""TREC question classification from raw text: spaCy textcat, kernel features, both.

    python bench/qc_textcat.py [--data ../shared/data/trec-qc-kelp] [--seeds 0 1 2] [--groups NAME ...] [--report-only]

The questions are converted as `python -m spacy_convkernels convert` does (dev: every
10th training question, 545; train: the other 4,907; test: TREC-10's 500). The md
pipeline of configs/qc_textcat.cfg (tok2vec, tagger, parser, attribute_ruler,
lemmatizer, frozen) and kernel_trees annotate every question once: spacy train runs
these frozen annotating components again on every batch, with the same result.

Every row trains a textcat with the `kernel_textcat` component (spaCy's textcat, whose
initialize also fits the model's kernel blocks on every training Doc) and the optimizer,
batcher and dropout of configs/qc_textcat.cfg, evaluates it on dev after every epoch and
keeps its best epoch (at most --epochs, --patience epochs without gain), once per seed
(the seed fixes the textcat's initialization, the batches, the SVMs' folds and the
landmarks). Every choice is made on the dev mean; test is reported for every row.
Nyström rows with one kernel take their vectors from the `kernel_vectors` component,
computed once; SVM rows fit `KernelSVMFeatures.v1` (exact-kernel SVMs, out-of-fold
decisions while training). Exact-SVM rows: scikit-learn's SVC on the exact Gram, one
per class with KeLP's fairness, C chosen on dev. The learning curve trains on random
draws of 100, 300, 1,000 and all training questions.

Groups (--groups): baselines, nystroem, svm, several, both, exact, curve; --kernels and
--sizes narrow the Nyström group (landmark methods: bench/nystroem_landmarks.py).
Results go to docs/results/qc_textcat.json as they come (a run can be resumed) and to
docs/results/qc_textcat.md's tables (``--report-only``: only that).
"""

import argparse
import copy
import random
import statistics
import time
from pathlib import Path

import numpy as np
import spacy
from common import ResultsFile, fill_page, pm, split_questions, table
from locations import DATA, MD_MODEL, add_outputs
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC
from spacy.training import Example
from spacy.util import fix_random_seed, load_config, registry

from spacy_convkernels.cli.convert import CLASSES
from spacy_convkernels.components.registered_kernels import bind_pipeline_vectors
from spacy_convkernels.configs import config_path
from spacy_convkernels.kernels.base import Kernel, Prepared
from spacy_convkernels.learn import fair_one_vs_all
from spacy_convkernels.ml.fitted_doc_features import doc_tree, doc_words
from spacy_convkernels.ml.kernel_encoders import NgramCosine

CONFIG = config_path("qc_textcat")
KERNELS = {
    "PTK-GRCT": (
        "grct",
        {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4, "terminal_factor": 5.0},
    ),
    "SPTK-LCT": (
        "lct",
        {
            "@misc": "spacy_convkernels.SmoothedPartialTreeKernel.v1",
            "lam": 0.4,
            "mu": 0.4,
            "terminal_factor": 0.2,
            "threshold": 0.01,
            "shared_rows": "diluted",
        },
    ),
    "CSPTK-CLCT": (
        "clct",
        {
            "@misc": "spacy_convkernels.CompositionalSmoothedPartialTreeKernel.v1",
            "lam": 0.4,
            "mu": 0.4,
            "terminal_factor": 1.0,
            "threshold": 0.01,
            "shared_rows": "kelp",
        },
    ),
}
BOW = {
    "@architectures": "spacy.TextCatBOW.v3",
    "exclusive_classes": True,
    "length": 65536,
    "ngram_size": 2,
    "no_output_layer": True,
    "nO": 32,
}
SPACY_BOW = {
    "@architectures": "spacy.TextCatBOW.v3",
    "exclusive_classes": True,
    "ngram_size": 1,
    "no_output_layer": False,
    "length": 262144,
}
MD_TOK2VEC = {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "tok2vec"}
SPACY_ENSEMBLE = {"@architectures": "spacy.TextCatEnsemble.v2", "tok2vec": MD_TOK2VEC, "linear_model": SPACY_BOW}
SIZES = (500, 1000, 2000, 4000)
CURVE = (100, 300, 1000, None)
SHIPPED = "SVM decisions CSPTK-CLCT (n-gram cosine 0.5) + SPTK-LCT"  # configs/qc_textcat.cfg


def textcat(kernel_features=None, text_features=None, hidden_width=64) -> dict:
    return {
        "@architectures": "spacy_convkernels.KernelTextCat.v1",
        "exclusive_classes": True,
        "hidden_width": hidden_width,
        "kernel_features": kernel_features,
        "text_features": text_features,
    }


def svm(family: str, **settings) -> dict:
    representation, kernel = KERNELS[family]
    return {
        "@architectures": "spacy_convkernels.KernelSVMFeatures.v1",
        "representation": representation,
        "kernel": kernel,
        "layer_norm": True,
        **settings,
    }


def vectors(width: int) -> dict:
    return {"@architectures": "spacy_convkernels.KernelFeatures.v1", "nO": width}


def several(*blocks) -> dict:
    return {"@architectures": "spacy_convkernels.KernelBlocks.v1", "*": {f"block{i}": b for i, b in enumerate(blocks)}}


def reuse_training_grams() -> None:
    """Compute the symmetric Gram of one set of trees under one kernel configuration once per
    process: the SVM rows of a kernel differ in C, budget, text weight or the layers above,
    not in the Gram of the training trees (the same values, computed once). Every kernel of
    this benchmark with vectors has the md pipeline's, so the key leaves them out."""
    plain, memo = Kernel.gram, {}

    def gram(self, X, Y=None, **settings):
        if Y is not None or isinstance(X, Prepared) or len(X) < 1000:
            return plain(self, X, Y, **settings)
        params = {name: value for name, value in self.get_params().items() if name != "vectors"}
        key = (type(self).__name__, repr(sorted(params.items())), tuple(map(str, X)), settings.get("normalize", True))
        if key not in memo:
            memo[key] = plain(self, X, Y, **settings)
        return memo[key].copy()

    Kernel.gram = gram


class Bench:
    def __init__(self, data: Path, epochs: int, patience: int):
        self.config = load_config(CONFIG, overrides={"paths.md_model": str(MD_MODEL)}, interpolate=True)
        self.split = split_questions(data)
        self.epochs, self.patience = epochs, patience
        self.md = spacy.load(MD_MODEL, exclude=["ner", "senter"])
        self.md.add_pipe("kernel_trees", config={"representations": ["grct", "lct", "clct"]})
        start = time.perf_counter()
        self.docs = {
            name: list(self.md.pipe([text for text, _ in rows], batch_size=256)) for name, rows in self.split.items()
        }
        self.parse_seconds = time.perf_counter() - start
        self.labels = {name: np.array([label for _, label in rows]) for name, rows in self.split.items()}

    def kernel_vectors(self, family: str, size: int, landmark_init: str, seed: int, train=None):
        """Nyström vectors of every doc (kernel_vectors, landmarks among the training docs),
        the seconds to pick the landmarks and to annotate, and the landmarks' mass on dev."""
        representation, kernel = KERNELS[family]
        nlp = spacy.blank("en", vocab=self.md.vocab)
        config = {
            "representation": representation,
            "kernel": kernel,
            "n_components": size,
            "landmark_init": landmark_init,
            "random_state": seed,
        }
        component = nlp.add_pipe("kernel_vectors", config=config)
        start = time.perf_counter()
        component.initialize(lambda: [Example(d, d) for d in (train or self.docs["train"])], nlp=nlp)
        fitted = time.perf_counter()
        found = {
            name: np.stack([d._.kernel_vector for d in component.pipe([d.copy() for d in docs])])
            for name, docs in self.docs.items()
        }
        annotated = time.perf_counter()
        mass = float(np.mean(np.sum(found["dev"].astype(np.float64) ** 2, axis=1)))
        return nlp, found, fitted - start, annotated - fitted, mass

    def textcat(self, model: dict, seed: int, vectors=None, train=None):
        """Train a kernel_textcat with ``model``: its pipeline, dev and test accuracy at the
        best dev epoch, that epoch and the training seconds (initialization included)."""
        fix_random_seed(seed)
        nlp = spacy.blank("en", vocab=self.md.vocab)
        component = nlp.add_pipe("kernel_textcat", name="textcat", config={"model": model})
        train = train if train is not None else list(range(len(self.docs["train"])))
        examples = {
            "train": self._examples("train", vectors, train),
            "dev": self._examples("dev", vectors),
            "test": self._examples("test", vectors),
        }
        settings = registry.resolve(
            {"optimizer": self.config["training"]["optimizer"], "batcher": self.config["training"]["batcher"]}
        )
        dropout = self.config["training"]["dropout"]
        start = time.perf_counter()
        optimizer = nlp.initialize(lambda: examples["train"], sgd=settings["optimizer"])
        best, since, rng = (-1.0, 0, None), 0, random.Random(seed)
        for epoch in range(1, self.epochs + 1):
            order = examples["train"][:]
            rng.shuffle(order)
            for batch in settings["batcher"](order):
                component.update(batch, sgd=optimizer, drop=dropout)
            dev = self._accuracy(component, examples["dev"])
            if dev > best[0]:
                best, since = (dev, epoch, component.model.to_bytes()), 0
            else:
                since += 1
                if since >= self.patience:
                    break
        seconds = time.perf_counter() - start
        component.model.from_bytes(best[2])
        return nlp, best[0], self._accuracy(component, examples["test"]), best[1], seconds

    def _examples(self, name: str, vectors=None, rows=None):
        examples = []
        rows = range(len(self.docs[name])) if rows is None else rows
        for i in rows:
            doc = self.docs[name][i].copy()
            if vectors is not None:
                doc._.kernel_vector = vectors[name][i]
            reference = doc.copy()
            reference.cats = {c: float(c == self.labels[name][i]) for c in CLASSES}
            examples.append(Example(doc, reference))
        return examples

    @staticmethod
    def _accuracy(component, examples) -> float:
        scores = np.asarray(component.predict([e.predicted for e in examples]))
        predicted = np.array(component.labels)[scores.argmax(axis=1)]
        gold = np.array([max(e.reference.cats, key=e.reference.cats.get) for e in examples])
        return 100.0 * np.mean(predicted == gold)

    def grams(self, family: str, text_weight: float = 0.0, train=None):
        """The exact Grams train x train and (dev + test) x train of a kernel on the docs'
        trees (plus ``text_weight`` times the n-gram cosine fitted on the training docs)."""
        representation, params = KERNELS[family]
        kernel = bind_pipeline_vectors(registry.resolve({"k": params})["k"], self.md.vocab)
        train = train if train is not None else list(range(len(self.docs["train"])))
        docs = [self.docs["train"][i] for i in train]
        held = self.docs["dev"] + self.docs["test"]
        X = [doc_tree(d, representation) for d in docs]
        K, H = kernel.gram(X), kernel.gram([doc_tree(d, representation) for d in held], kernel.prepare(X))
        if text_weight:
            text = NgramCosine(2).fit([doc_words(d) for d in docs])
            K += text_weight * text.gram([doc_words(d) for d in docs])
            H += text_weight * text.gram([doc_words(d) for d in held], [doc_words(d) for d in docs])
        return K, H

    def exact_svm(self, K, H, train=None, grid=(1.0, 3.0, 10.0, 30.0)):
        """(dev, test accuracy, C) of the fair one-vs-all SVMs on precomputed Grams, C chosen on dev."""
        y = self.labels["train"] if train is None else self.labels["train"][train]
        n_dev = len(self.docs["dev"])
        best = None
        for C in grid:
            predicted = fair_one_vs_all(K, y, H, C=C)
            dev = 100.0 * np.mean(predicted[:n_dev] == self.labels["dev"])
            test = 100.0 * np.mean(predicted[n_dev:] == self.labels["test"])
            if best is None or dev > best[0]:
                best = (dev, test, C)
        return best

    def linear_svm(self, features: dict, grid=(0.1, 1.0, 10.0, 100.0)):
        """(dev, test accuracy, C) of a linear SVM on the features of each split, C chosen on dev."""
        best = None
        for C in grid:
            model = LinearSVC(C=C, max_iter=20000).fit(features["train"], self.labels["train"])
            dev = 100.0 * np.mean(model.predict(features["dev"]) == self.labels["dev"])
            test = 100.0 * np.mean(model.predict(features["test"]) == self.labels["test"])
            if best is None or dev > best[0]:
                best = (dev, test, C)
        return best

    def tfidf_svm(self, train=None, grid=(0.1, 0.3, 1.0, 3.0, 10.0)):
        """(dev, test accuracy, C) of TF-IDF unigrams and bigrams and a linear SVM, C chosen on dev."""
        train = train if train is not None else list(range(len(self.docs["train"])))
        words = {name: [doc_words(d) for d in docs] for name, docs in self.docs.items()}
        vectorizer = TfidfVectorizer(
            lowercase=False, token_pattern=None, tokenizer=str.split, ngram_range=(1, 2), sublinear_tf=True
        )
        X = vectorizer.fit_transform([words["train"][i] for i in train])
        best = None
        for C in grid:
            model = LinearSVC(C=C, max_iter=20000).fit(X, self.labels["train"][train])
            dev = 100.0 * np.mean(model.predict(vectorizer.transform(words["dev"])) == self.labels["dev"])
            test = 100.0 * np.mean(model.predict(vectorizer.transform(words["test"])) == self.labels["test"])
            if best is None or dev > best[0]:
                best = (dev, test, C)
        return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    add_outputs(parser, "qc_textcat", report_only=True)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--patience", type=int, default=4)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--groups", nargs="+", default=["baselines", "exact", "svm", "several", "both", "nystroem"])
    parser.add_argument("--kernels", nargs="+", choices=list(KERNELS), default=list(KERNELS))
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    args = parser.parse_args()
    results = ResultsFile(args.results, draw=lambda rows: write_docs(rows, args.docs / "qc_textcat.md"))
    if args.report_only:
        return results.draw(results)
    record = results.record

    reuse_training_grams()
    bench = Bench(args.data, args.epochs, args.patience)
    results["parse"] = {"seconds": bench.parse_seconds, "questions": sum(len(d) for d in bench.docs.values())}

    def run(group: str, name: str, model_of, vectors_of=None, train_of=None, **extra):
        """Train ``model_of(seed)`` once per seed (``vectors_of(seed)``: kernel_vectors'
        vectors; ``train_of(seed)``: the rows of the training questions to use)."""
        for seed in args.seeds:
            key = f"{group} | {name} | seed {seed}"
            if key in results:
                continue
            found = vectors_of(seed) if vectors_of else None
            train = train_of(seed) if train_of else None
            vectors = found[1] if found else None
            _, dev, test, epoch, seconds = bench.textcat(model_of(seed), seed, vectors=vectors, train=train)
            annotations = {"landmarks_s": found[2], "annotate_s": found[3], "mass": found[4]} if found else {}
            record(key, dev=dev, test=test, epoch=epoch, train_s=seconds, **annotations, **extra)

    def shipped(seed: int) -> dict:
        """The textcat model of configs/qc_textcat.cfg, its blocks seeded."""
        model = copy.deepcopy(bench.config["components"]["textcat"]["model"])
        for block in model["kernel_features"]["*"].values():
            block["random_state"] = seed
        return model

    def nystroem_rows(family, size):
        """Uniform landmarks' Nyström vectors under a linear and a hidden-layer textcat, and a LinearSVC."""
        found, group, name = {}, "nystroem", f"{family} Nyström M={size} uniform"

        def vectors_of(seed):
            return found.setdefault(seed, bench.kernel_vectors(family, size, "uniform", seed))

        for hidden in (None, 256):
            run(
                group,
                f"{name}, textcat " + ("linear" if hidden is None else f"hidden {hidden}"),
                lambda seed, hidden=hidden: textcat(vectors(size), hidden_width=hidden),
                vectors_of=vectors_of,
            )
        for seed in args.seeds:
            key = f"{group} | {name}, LinearSVC | seed {seed}"
            if key not in results:
                dev, test, C = bench.linear_svm(vectors_of(seed)[1])
                record(key, dev=dev, test=test, C=C, epoch=0, train_s=0.0, mass=vectors_of(seed)[4])

    if "baselines" in args.groups:
        run("baselines", "spaCy BOW", lambda seed: SPACY_BOW)
        run("baselines", "spaCy ensemble (md tok2vec)", lambda seed: SPACY_ENSEMBLE)
        run("baselines", "KernelTextCat text only (BOW)", lambda seed: textcat(text_features=BOW))
        if "baselines | TF-IDF + linear SVM" not in results:
            dev, test, C = bench.tfidf_svm()
            record("baselines | TF-IDF + linear SVM", dev=dev, test=test, C=C)
    if "exact" in args.groups:
        for family in KERNELS:
            for weight in (0.0, 0.5):
                key = f"exact | {family}" + (f" + {weight} n-gram cosine" if weight else "")
                if key not in results:
                    start = time.perf_counter()
                    dev, test, C = bench.exact_svm(*bench.grams(family, weight))
                    record(key, dev=dev, test=test, C=C, seconds=time.perf_counter() - start)
    if "svm" in args.groups:
        run(
            "svm",
            "CSPTK-CLCT SVM decisions, n-gram cosine 0.5",
            lambda seed: textcat(svm("CSPTK-CLCT", text_weight=0.5, random_state=seed)),
        )
        for family in KERNELS:
            run("svm", f"{family} SVM decisions", lambda seed, f=family: textcat(svm(f, random_state=seed)))
        variants = {"n-gram cosine 0.5, max_support 2500": {"text_weight": 0.5, "max_support": 2500}}
        for variant, settings in variants.items():
            model_of = lambda seed, s=settings: textcat(svm("CSPTK-CLCT", random_state=seed, **s))  # noqa: E731
            run("svm", f"CSPTK-CLCT SVM decisions, {variant}", model_of)
        model_of = lambda seed: textcat(svm("CSPTK-CLCT", text_weight=0.5, random_state=seed), hidden_width=None)  # noqa: E731
        run("svm", "CSPTK-CLCT SVM decisions, n-gram cosine 0.5, no hidden layer", model_of)
    if "several" in args.groups:
        run(
            "several",
            "SVM decisions CSPTK-CLCT + PTK-GRCT",
            lambda seed: textcat(several(svm("CSPTK-CLCT", random_state=seed), svm("PTK-GRCT", random_state=seed))),
        )
        run("several", SHIPPED, shipped)
        found = {}
        run(
            "several",
            "SVM decisions CSPTK-CLCT (n-gram cosine 0.5) + PTK-GRCT Nyström M=2000",
            lambda seed: textcat(several(svm("CSPTK-CLCT", text_weight=0.5, random_state=seed), vectors(2000))),
            vectors_of=lambda seed: found.setdefault(seed, bench.kernel_vectors("PTK-GRCT", 2000, "uniform", seed)),
        )
    if "both" in args.groups:
        run("both", "CSPTK-CLCT SVM decisions + BOW", lambda seed: textcat(svm("CSPTK-CLCT", random_state=seed), BOW))
        run(
            "both",
            "CSPTK-CLCT SVM decisions, n-gram cosine 0.5, + BOW",
            lambda seed: textcat(svm("CSPTK-CLCT", text_weight=0.5, random_state=seed), BOW),
        )
    if "nystroem" in args.groups:
        for family in args.kernels:
            for size in args.sizes:
                nystroem_rows(family, size)
    if "curve" in args.groups:
        learning_curve(bench, args.seeds, run, shipped, record, results)


def learning_curve(bench: Bench, seeds, run, shipped, record, results) -> None:
    """Each method on random draws of 100, 300, 1,000 and all training questions (one draw per seed)."""
    n = len(bench.docs["train"])

    def draw(size, seed):
        return sorted(np.random.default_rng(seed).choice(n, size, replace=False).tolist()) if size else None

    grams = None
    for size in CURVE:
        label = f"{size or n} questions"
        if size is None:  # all the training questions: the rows of the other groups, the same runs
            for seed in seeds:
                for row, same in (
                    ("shipped kernel textcat", f"several | {SHIPPED}"),
                    ("spaCy BOW", "baselines | spaCy BOW"),
                ):
                    if f"{same} | seed {seed}" in results:
                        results[f"curve {label} | {row} | seed {seed}"] = results[f"{same} | seed {seed}"]
        run(f"curve {label}", "shipped kernel textcat", shipped, train_of=lambda seed, s=size: draw(s, seed))
        run(f"curve {label}", "spaCy BOW", lambda seed: SPACY_BOW, train_of=lambda seed, s=size: draw(s, seed))
        for seed in seeds:
            rows = draw(size, seed)
            key = f"curve {label} | exact CSPTK-CLCT SVM | seed {seed}"
            if key not in results:
                grams = grams or bench.grams("CSPTK-CLCT")
                K, H = grams if rows is None else (grams[0][np.ix_(rows, rows)], grams[1][:, rows])
                dev, test, C = bench.exact_svm(K, H, train=rows)
                record(key, dev=dev, test=test, C=C, epoch=0, train_s=0.0)
            key = f"curve {label} | TF-IDF + linear SVM | seed {seed}"
            if key not in results:
                dev, test, C = bench.tfidf_svm(train=rows)
                record(key, dev=dev, test=test, C=C, epoch=0, train_s=0.0)


def write_docs(results: dict, path: Path) -> None:
    """docs/results/qc_textcat.md's tables: per model, mean ± sd over seeds; the single runs."""
    rows: dict[tuple, list] = {}
    single = {}
    for key, r in results.items():
        parts = key.split(" | ")
        if len(parts) == 3:
            rows.setdefault((parts[0], parts[1]), []).append(r)
        elif len(parts) == 2:
            single[tuple(parts)] = r
    cells = []
    for (group, name), runs in rows.items():
        dev, test, epochs = (
            pm(r["dev"] for r in runs),
            pm(r["test"] for r in runs),
            "/".join(str(r["epoch"]) for r in runs),
        )
        mass = f"{statistics.mean(r['mass'] for r in runs):.3f}" if "mass" in runs[0] else ""
        cells.append(
            [group, name, len(runs), dev, test, epochs, f"{statistics.mean(r['train_s'] for r in runs):.0f}", mass]
        )
    one = [(group, name, f"{r['dev']:.1f}", f"{r['test']:.1f}", r["C"]) for (group, name), r in single.items()]
    fill_page(
        path,
        {
            "seeded": table("group|model|n|dev %|test %|best epoch|training s|dev mass".split("|"), cells),
            "single": table(["group", "model", "dev %", "test %", "C"], one),
        },
    )


if __name__ == "__main__":
    main()
