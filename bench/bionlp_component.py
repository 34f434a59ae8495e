"""The relation_extractor component on BioNLP-ST 2013 GE: kernel features only, tok2vec only,
both; exact-kernel SVM decisions alone and with tok2vec.

    python bench/bionlp_component.py [--data ../shared/data/bionlp-st-2013-ge/original-data]
        [--model ../shared/models/en_core_web_md-3.8.0] [--lexicon DIR] [--epochs 12]
        [--n-components 300] [--svm-c 10] [--variants both,kernel,tok2vec,svm,svm+tok2vec]
        [--json bench/bionlp_component.json]

Documents as bench/bionlp_candidates.py reads them: gold proteins given, parsed by the md
model; triggers from the lexicon's trigger patterns (``--lexicon``, built from train by
``python -m spacy_convkernels lexicon``), else the gold trigger spans. The component
(``InteractionCandidates.v1`` with its default role sets and distance, paths in the
``--path`` representation; kernel features: Nystroem vectors of the subsequence path
kernel, lam = 0.5, ``--n-components``
landmarks by kernel k-means++ among the training candidates, or, in the ``svm``
variants, the decisions of one SVM per label over the same kernel, C = ``--svm-c`` (10:
the C that ``bench/bionlp_relations.py`` chose for this kernel on its split of train),
out-of-fold (5 folds) on the training candidates; tok2vec features: the
pooled rows of its own ``spacy.Tok2Vec.v2`` with the md vectors) is trained on 80 % of
the train documents; the epoch and the decision threshold are the ones of best
candidate-level F1 on the other 20 % (a split of train); then it is evaluated on devel.

Per variant: the positive class at candidate level (a candidate is positive when a gold
interaction has its trigger and participants; predicted positive when its best label
scores at least the threshold), F1 (precision, recall), the component's own ``score``
(typed interactions, ``Equiv`` variants once, gold interactions no candidate reaches
counted as missed), training and evaluation wall times; with ``--lexicon``, the speed
from raw devel text to scored interactions (the md parser, the lexicon's protein and
trigger rulers, the trained component: ``nlp.pipe``, documents per second).
"""

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np
from bionlp_candidates import LEXICON_TRIGGERS, add_corpus_arguments, load_parser, parsed_documents
from spacy.training import Example
from spacy.util import fix_random_seed, minibatch

from spacy_convkernels.corpora.lexicon import add_lexicon
from spacy_convkernels.structures.relations import GoldRelations

ROOT = Path(__file__).resolve().parent.parent
THRESHOLDS = np.round(np.arange(0.1, 0.91, 0.05), 2)
VARIANTS = {  # name: (kernel features, tok2vec features)
    "both": ("nystroem", True),
    "kernel": ("nystroem", False),
    "tok2vec": (None, True),
    "svm": ("svm", False),
    "svm+tok2vec": ("svm", True),
}


def kernel_block(kernel: str | None, *, n_components: int, svm_c: float) -> dict | None:
    """The config of the kernel features: Nystroem vectors, SVM decisions or none."""
    path_kernel = {"@misc": "spacy_convkernels.SubsequencePathKernel.v1", "lam": 0.5, "vectors": None}
    if kernel == "nystroem":
        return {
            "@architectures": "spacy_convkernels.CandidateKernelFeatures.v1",
            "structure": "path",
            "n_components": n_components,
            "landmark_init": "kmeans++",
            "kernel": path_kernel,
        }
    if kernel == "svm":
        return {"@architectures": "spacy_convkernels.CandidateKernelSVM.v1", "C": svm_c, "kernel": path_kernel}
    return None


def model_config(
    triggers_key: str, *, path: str, kernel: str | None, tok2vec: bool, n_components: int, svm_c: float
) -> dict:
    return {
        "@architectures": "spacy_convkernels.RelationModel.v1",
        "hidden_width": 64,
        "candidates": {
            "@misc": "spacy_convkernels.InteractionCandidates.v1",
            "triggers_key": triggers_key,
            "path": path,
        },
        "kernel_features": kernel_block(kernel, n_components=n_components, svm_c=svm_c),
        "tok2vec_features": {
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
        if tok2vec
        else None,
    }


def candidate_truths(extractor, examples) -> tuple[np.ndarray, np.ndarray]:
    """(best label score, whether positive) of every candidate of the examples."""
    docs = [eg.predicted for eg in examples]
    scores = extractor.model.ops.to_numpy(extractor.predict(docs))
    truth = []
    for eg, candidates in zip(examples, (extractor.model.attrs["candidates"](d) for d in docs)):
        gold = GoldRelations(eg.reference)
        truth += [bool(gold.labels(c, eg.predicted)) for c in candidates]
    best = scores.max(axis=1) if scores.shape[1] else np.zeros(len(scores))
    return best, np.asarray(truth, dtype=bool)


def prf(predicted: np.ndarray, truth: np.ndarray) -> tuple[float, float, float]:
    right = int((predicted & truth).sum())
    p = right / max(int(predicted.sum()), 1)
    r = right / max(int(truth.sum()), 1)
    return (2 * p * r / (p + r) if p + r else 0.0), p, r


def run(
    nlp_base,
    name,
    train,
    held_out,
    devel,
    *,
    triggers_key,
    lexicon,
    path,
    epochs,
    n_components,
    svm_c,
    batch_size,
    learn_rate,
    **blocks,
) -> dict:
    fix_random_seed(0)
    nlp = nlp_base
    if "relation_extractor" in nlp.pipe_names:
        nlp.remove_pipe("relation_extractor")
    config = {"model": model_config(triggers_key, path=path, n_components=n_components, svm_c=svm_c, **blocks)}
    extractor = nlp.add_pipe("relation_extractor", config=config)
    start = time.perf_counter()
    extractor.initialize(lambda: train)
    optimizer = extractor.create_optimizer()
    optimizer.learn_rate = learn_rate
    best = (-1.0, 0, 0.5, None)
    for epoch in range(1, epochs + 1):
        random.Random(epoch).shuffle(train)
        for batch in minibatch(train, size=batch_size):
            extractor.update(batch, sgd=optimizer, drop=0.1)
        scores, truth = candidate_truths(extractor, held_out)
        f, threshold = max((prf(scores >= t, truth)[0], t) for t in THRESHOLDS)
        print(f"  {name} epoch {epoch}: held-out F1 {f:.3f} at threshold {threshold}", flush=True)
        if f > best[0]:
            best = (f, epoch, float(threshold), extractor.model.to_bytes())
    train_seconds = time.perf_counter() - start
    extractor.model.from_bytes(best[3])
    extractor.cfg["threshold"] = best[2]
    start = time.perf_counter()
    scores, truth = candidate_truths(extractor, devel)
    f, p, r = prf(scores >= best[2], truth)
    docs = list(extractor.pipe(eg.predicted.copy() for eg in devel))
    component = extractor.score([Example(doc, eg.reference) for doc, eg in zip(docs, devel)])
    devel_seconds = time.perf_counter() - start
    raw = raw_text_speed(nlp, lexicon, [eg.reference.text for eg in devel]) if lexicon else None
    return {
        "variant": name,
        "path": path,
        "epoch": best[1],
        "threshold": best[2],
        "held_out_f1": best[0],
        "f1": f,
        "precision": p,
        "recall": r,
        "component": {k: component[k] for k in ("rel_micro_p", "rel_micro_r", "rel_micro_f")},
        "train_seconds": train_seconds,
        "devel_seconds": devel_seconds,
        "raw_text_documents_per_second": raw,
    }


def raw_text_speed(nlp, lexicon: Path, texts: list[str]) -> float:
    """Documents per second from raw text to scored interactions: the pipeline with the
    lexicon's protein and trigger rulers before the trained component."""
    add_lexicon(nlp, lexicon, before="relation_extractor")
    try:
        start = time.perf_counter()
        for _ in nlp.pipe(texts, batch_size=16):
            pass
        return len(texts) / (time.perf_counter() - start)
    finally:
        nlp.remove_pipe("protein_ruler")
        nlp.remove_pipe("trigger_ruler")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_arguments(parser)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--n-components", type=int, default=300)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--svm-c", type=float, default=10.0, help="C of the SVM variants")
    parser.add_argument("--path", default="tuples", help="the path representation: tuples, features or separate")
    parser.add_argument("--batch-size", type=int, default=2, help="documents per update")
    parser.add_argument("--learn-rate", type=float, default=0.002)
    parser.add_argument("--limit", type=int, help="use only the first documents of each set (a quick check)")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "bionlp_component.json")
    args = parser.parse_args()
    nlp = load_parser(args.model, args.lexicon)
    triggers_key = LEXICON_TRIGGERS if args.lexicon else "triggers"
    train_docs = parsed_documents(args.data / "train", nlp, args.cache)[: args.limit]
    devel_docs = parsed_documents(args.data / "devel", nlp, args.cache)[: args.limit]
    if args.lexicon:  # cached documents may have been parsed without it
        ruler = nlp.get_pipe("trigger_ruler")
        train_docs, devel_docs = list(ruler.pipe(train_docs)), list(ruler.pipe(devel_docs))
        nlp.remove_pipe("trigger_ruler")
    order = random.Random(0).sample(range(len(train_docs)), len(train_docs))
    cut = int(0.8 * len(order))
    train = [Example(train_docs[i], train_docs[i]) for i in order[:cut]]
    held_out = [Example(train_docs[i], train_docs[i]) for i in order[cut:]]
    devel = [Example(doc, doc) for doc in devel_docs]
    print(f"train {len(train)} / held-out {len(held_out)} / devel {len(devel)} documents; triggers: {triggers_key}")
    results = []
    for name in args.variants.split(","):
        kernel, tok2vec = VARIANTS[name]
        result = run(
            nlp,
            name,
            train,
            held_out,
            devel,
            triggers_key=triggers_key,
            lexicon=args.lexicon,
            path=args.path,
            epochs=args.epochs,
            n_components=args.n_components,
            svm_c=args.svm_c,
            batch_size=args.batch_size,
            learn_rate=args.learn_rate,
            kernel=kernel,
            tok2vec=tok2vec,
        )
        results.append(result)
        print(json.dumps(result), flush=True)
    runs = {(r["variant"], r["path"]): r for r in results}
    if args.json.exists() and json.loads(args.json.read_text())["triggers"] == triggers_key:
        kept = [r for r in json.loads(args.json.read_text())["results"] if (r["variant"], r["path"]) not in runs]
        results = kept + results
    args.json.write_text(json.dumps({"triggers": triggers_key, "results": results}, indent=1) + "\n")
    print(f"{'variant':>8}  {'F1 (P, R) candidates':>26}  {'component micro F1 (P, R)':>28}  train s")
    for r in results:
        c = r["component"]
        print(
            f"{r['variant']:>8}  {r['f1']:.3f} ({r['precision']:.3f}, {r['recall']:.3f})  "
            f"{c['rel_micro_f']:.3f} ({c['rel_micro_p']:.3f}, {c['rel_micro_r']:.3f})  {r['train_seconds']:.0f}"
        )


if __name__ == "__main__":
    main()
