"""TREC question classification from raw text: 1-best trees against k-best forests.

    python bench/qc_forest.py [--data ../shared/data/trec-qc-kelp] [--results docs/results/qc_forest.json] [--docs docs]
        [--report-only]

The questions are parsed by en_core_web_md. Baselines: the parser's 1-best GRCT tree (first
sentence with a tree) with SST and PTK. Forests: the 1-, 2-, 4- and 8-best parses of a beam of
width 8 packed into a GRCT forest, with the forest kernel (Zhang et al. 2009), the parses
weighed by their beam probabilities (temperature 1) or alike (temperature inf).

Exact kernels, normalized Grams, one-vs-all C-SVM with KeLP's fairness weights (as
``qc_classification.py``, the classes' SVMs on threads). Every choice (lam, PTK's terminal factor, C) is made on a dev
split of train (every 10th question) with SVMs trained on the other 9/10; the chosen
configuration is retrained on the whole train (5,452) and tested once on the 500 test
questions. Speed: kernel evaluations per second on one thread, Gram (unnormalized, upper
triangle) of the first 1,000 training questions, the same sentences for every row.
Forest sizes: nodes and hyper-edges per question against k, and the trees each forest
holds (its derivations, more than k where parses recombine).
"""

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import spacy
from common import fill_page, questions, svm_accuracy, table, write_json
from locations import DATA, MD_MODEL, add_outputs

from spacy_convkernels.kernels import ForestKernel, PartialTreeKernel, SubsetTreeKernel
from spacy_convkernels.structures import beam_forests, span_to_tree

LAMS = (0.1, 0.4)
CS = (1.0, 10.0)
KS = (1, 2, 4, 8)
BEAM = 8
SPEED_N = 1000


def first(items):
    """The first structure that is not None (a question the parser splits: its first sentence)."""
    return next(x for x in items if x is not None)


def derivations(forest) -> int:
    """The number of trees a forest holds."""
    count = np.ones(forest.n_nodes, dtype=object)
    seen = set()
    for head, tails, _ in forest.edges:
        if head not in seen:
            seen.add(head)
            count[head] = 0
        count[head] += math.prod(count[t] for t in tails)
    return int(sum(count[r] for r, _ in forest.roots))


class CachedBeams:
    """The parser with the beams of ``docs`` computed once, for every k and temperature."""

    def __init__(self, parser, docs):
        self.moves, self.postprocesses = parser.moves, parser.postprocesses
        self.beams = parser.beam_parse(docs, beam_width=BEAM)

    def beam_parse(self, docs, beam_width):
        assert beam_width == BEAM and len(docs) == len(self.beams)
        return self.beams


def structures(docs, parser):
    """name -> one structure per question: the 1-best GRCT, and the forests per (k, temperature)."""
    out = {"tree": [first(span_to_tree(s, "grct") for s in doc.sents) for doc in docs]}
    start = time.perf_counter()
    parser = CachedBeams(parser, docs)
    print(f"beams of width {BEAM}: {time.perf_counter() - start:.1f} s", flush=True)
    for temperature in (1.0, math.inf):
        for k in KS:
            if k == 1 and temperature != 1.0:
                continue
            start = time.perf_counter()
            forests = beam_forests(parser, docs, k=k, beam_width=BEAM, temperature=temperature)
            out[f"forest k={k} T={temperature}"] = [first(f) for f in forests]
            print(f"forests k={k} T={temperature}: {time.perf_counter() - start:.1f} s", flush=True)
    return out


def candidates():
    """(family, structures name, kernel) of every configuration tried."""
    rows = [("SST 1-best", "tree", SubsetTreeKernel(lam=lam)) for lam in LAMS]
    rows += [
        ("PTK 1-best", "tree", PartialTreeKernel(lam, mu=0.4, terminal_factor=tf)) for lam in LAMS for tf in (1.0, 5.0)
    ]
    for temperature in (1.0, math.inf):
        for k in KS:
            if k == 1 and temperature != 1.0:
                continue
            name = f"forest k={k} T={temperature}"
            rows += [(f"FK {k}-best, T={temperature:g}", name, ForestKernel(lam=lam)) for lam in LAMS]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "trec-qc-kelp")
    add_outputs(parser, "qc_forest", report_only=True)
    parser.add_argument("--limit", type=int, default=0, help="first N training and N/5 test questions (a quick run)")
    args = parser.parse_args()
    if not args.report_only:
        compute(args)
    write_docs(json.loads(args.results.read_text()), args.docs / "qc_forest.md")


def compute(args) -> None:
    """Parse, build the structures, choose on dev, test once; the figures to ``--results``."""

    train = questions(args.data / "train_5500.coarse.klp.gz")
    test = questions(args.data / "TREC_10.coarse.klp.gz")
    if args.limit:
        train, test = train[: args.limit], test[: args.limit // 5]
    dev = np.array([i % 10 == 9 for i in range(len(train))])
    y_train = np.array([label for _, label in train])
    y_test = np.array([label for _, label in test])
    md = spacy.load(MD_MODEL, exclude=["ner", "senter"])
    start = time.perf_counter()
    docs = list(md.pipe([text for text, _ in train + test], batch_size=256))
    parse_seconds = time.perf_counter() - start
    made = structures(docs, md.get_pipe("parser"))
    n = len(train)

    sizes = {}
    for name, items in made.items():
        if name == "tree":
            sizes[name] = {"nodes": float(np.mean([t.n_nodes for t in items]))}
        else:
            sizes[name] = {
                "nodes": float(np.mean([f.n_nodes for f in items])),
                "edges": float(np.mean([f.n_edges for f in items])),
                "trees": float(np.mean([derivations(f) for f in items])),
                "max_trees": max(derivations(f) for f in items),
            }
    print(json.dumps(sizes, indent=1), flush=True)

    speed = {}
    for family, name, kernel in candidates():
        if kernel.lam != 0.4 or family in speed or (family.startswith("PTK") and kernel.terminal_factor != 1.0):
            continue
        sample = made[name][:SPEED_N]
        start = time.perf_counter()
        kernel.gram(sample, normalize=False, n_jobs=1)
        seconds = time.perf_counter() - start
        speed[family] = len(sample) * (len(sample) + 1) / 2 / seconds
        print(f"speed {family}: {speed[family]:.0f} evaluations/s", flush=True)

    results = {}
    for index, (family, name, kernel) in enumerate(candidates()):
        items = made[name]
        start = time.perf_counter()
        K_train = kernel.gram(items[:n])
        gram_seconds = time.perf_counter() - start
        fit, held = np.flatnonzero(~dev), np.flatnonzero(dev)
        K_fit, K_held = K_train[np.ix_(fit, fit)], K_train[np.ix_(held, fit)]
        for C in CS:
            accuracy = svm_accuracy(K_fit, y_train[fit], K_held, y_train[held], C=C)
            key = f"{family} | {kernel!r} | C={C}"
            results[key] = {
                "family": family,
                "index": index,
                "name": name,
                "dev": accuracy,
                "C": C,
                "gram_seconds": gram_seconds,
            }
            print(key, f"dev {accuracy:.2f}", flush=True)

    chosen = {}
    for family in dict.fromkeys(f for f, _, _ in candidates()):
        key = max((k for k, v in results.items() if v["family"] == family), key=lambda k: results[k]["dev"])
        _, name, kernel = candidates()[results[key]["index"]]
        C = results[key]["C"]
        items = made[name]
        accuracy = svm_accuracy(kernel.gram(items[:n]), y_train, kernel.gram(items[n:], items[:n]), y_test, C=C)
        chosen[family] = {"configuration": f"{kernel!r}, C={C}", "dev": results[key]["dev"], "test": accuracy}
        print("chosen", family, chosen[family], flush=True)

    figures = {"parse_seconds": parse_seconds, "n_train": n, "n_test": len(test), "sizes": sizes, "speed": speed}
    write_json(args.results, {**figures, "chosen": chosen, "candidates": results})


def write_docs(results: dict, path: Path):
    """docs/results/qc_forest.md's tables and sizes from the results."""
    sst = results["speed"]["SST 1-best"]
    sizes = [
        ("1-best GRCT tree", f"{s['nodes']:.1f}", "", "", "")
        if name == "tree"
        else (name, f"{s['nodes']:.1f}", f"{s['edges']:.1f}", f"{s['trees']:.2f}", s["max_trees"])
        for name, s in results["sizes"].items()
    ]
    parts = {
        "questions": [f"{results['n_train']:,} training and {results['n_test']} test questions."],
        "accuracy": table(
            ["structures, kernel", "chosen on dev", "dev accuracy %", "test accuracy %"],
            [(f, r["configuration"], f"{r['dev']:.2f}", f"{r['test']:.1f}") for f, r in results["chosen"].items()],
        ),
        "cost": table(
            ["structures, kernel", "evaluations / s", "cost per evaluation vs SST"],
            [(family, f"{rate:,.0f}", f"{sst / rate:.2f}x") for family, rate in results["speed"].items()],
        ),
        "sizes": table(["structures", "nodes", "hyper-edges", "trees (mean)", "trees (max)"], sizes),
        "candidates": table(
            ["candidate", "dev %", "Gram train x train (s)"],
            [(key, f"{r['dev']:.2f}", f"{r['gram_seconds']:.1f}") for key, r in results["candidates"].items()],
        ),
    }
    fill_page(path, parts)


if __name__ == "__main__":
    main()
