"""Seconds and memory to initialize the relation component's SVM block against the number
of training candidates: ``CandidateKernelSVM.v1`` as configs/relations.cfg's block sets it
(the subsequence path kernel on the paths of its ``structure``, plus a tree weight times
its tree kernel, the SPTK with md's vectors, on the candidates' path-enclosed trees, plus
a text weight times the n-gram cosine of the candidates' texts; the weights and C from
its lists by 5-fold cross-validation grouped by document); ``max_train`` 15,000 unless
told; ``--tree-weight 0``: no tree kernel, as the figures before 2026-12-06;
``--tree-weight 0 --text-weight 0``: the path kernel alone, as those before 2026-11-30.

    python bench/relations_initialize.py --lexicon LEXICON [--sizes 1000 3000 10000 20000 40000 all]
        [--max-train 15000] [--results docs/results/relations_initialize.json]

The candidates are real: every ordered entity pair of CoNLL04 (train, dev and test, gold
entities) and every interaction candidate of BioNLP-ST 2013 GE train and devel (gold
proteins, the lexicon's triggers), parsed by the md model, their documents shuffled
(seed 0) and taken in that order until a size is reached; labels are the union of the
two corpora's. The figure is the wall time of the block's initialize (the Gram, the
cross-validated fits, the final SVMs, the out-of-fold decisions), and the peak resident
memory of the process so far (it only grows), on all cores.

First, the Gram of the first ``--rate-candidates`` (3,000) candidates under the path
kernel and under the PTK (lam = mu = 0.4) on the same candidates' path-enclosed LCT
trees: kernel evaluations per second (the upper triangle counted), one thread and every
core, the median of 3 runs.
"""

import argparse
import os
import random
import resource
import statistics
import time
from pathlib import Path

import numpy as np
import spacy
from bionlp_candidates import LEXICON_TRIGGERS, add_lexicon_triggers, parsed_documents
from common import write_json
from locations import DATA, MD_MODEL
from spacy.util import registry
from thinc.api import Config

from spacy_convkernels.components.registered_kernels import bind_pipeline_vectors, model_kernels
from spacy_convkernels.configs import config_path
from spacy_convkernels.corpora import read_relations_jsonl
from spacy_convkernels.ml.kernel_encoders import MAX_TRAIN
from spacy_convkernels.structures.relations import GoldRelations

SHIPPED = Config().from_disk(config_path("relations"), interpolate=False)
BLOCK = SHIPPED["components"]["kernel_relations"]["model"]["kernel_features"]


def corpus(args) -> tuple[list[tuple], object]:
    """(doc, candidates, their gold labels) of every document of the two corpora, and the md vocab."""
    pairs = registry.misc.get("spacy_convkernels.EntityPairCandidates.v1")(path="separate")
    interactions = registry.misc.get("spacy_convkernels.InteractionCandidates.v1")(
        triggers_key=LEXICON_TRIGGERS, path="separate"
    )
    md = spacy.load(args.model, exclude=["ner"])
    conll = DATA / "conll04"
    docs = [d for split in ("train", "dev", "test") for d in read_relations_jsonl(conll / f"{split}.jsonl", md)]
    found = [(doc, pairs) for doc in md.pipe(docs)]
    for split in ("train", "devel"):
        ge_docs = add_lexicon_triggers(parsed_documents(args.data / split, md), args.lexicon)
        found += [(doc, interactions) for doc in ge_docs]
    documents = []
    for doc, generate in found:
        gold = GoldRelations(doc)
        candidates = generate(doc)
        documents.append((doc, candidates, [gold.labels(c, doc) for c in candidates]))
    random.Random(0).shuffle(documents)
    return documents, md.vocab


def gram_rates(documents: list[tuple], n: int) -> None:
    """Print the Gram rates of the path kernel and the PTK on the first ``n`` candidates."""
    candidates = [c for _, found, _ in documents for c in found][:n]
    kernels = {
        "path kernel on the paths": (
            registry.misc.get("spacy_convkernels.SubsequencePathKernel.v1")(lam=0.5),
            [c.path for c in candidates],
        ),
        "PTK on the path-enclosed trees": (
            registry.misc.get("spacy_convkernels.PartialTreeKernel.v1")(lam=0.4, mu=0.4),
            [c.tree for c in candidates],
        ),
    }
    evaluations = n * (n + 1) / 2
    for name, (kernel, structures) in kernels.items():
        rates = []
        for n_jobs in (1, os.cpu_count()):
            seconds = []
            for _ in range(3):
                start = time.perf_counter()
                kernel.gram(structures, n_jobs=n_jobs)
                seconds.append(time.perf_counter() - start)
            rates.append(evaluations / statistics.median(seconds))
        print(f"{name}: {rates[0]:,.0f} evaluations/s on one thread, {rates[1]:,.0f} on {os.cpu_count()} cores")


def initialize(documents: list[tuple], labels: list[str], vocab, **settings) -> float:
    """Seconds to initialize the shipped block with ``settings`` in place of its own
    (``max_train``, ``text_weight``, ``tree_weight``), its kernels given the md vectors."""
    section = {**BLOCK, **settings}
    if not max(np.atleast_1d(section["tree_weight"])):
        section["tree_kernel"] = None
    block = registry.resolve({"block": section})["block"]
    for kernel in model_kernels(block):
        bind_pipeline_vectors(kernel, vocab)
    docs = [doc for doc, _, _ in documents]
    candidates = [c for _, c, _ in documents]
    Y = np.array([[label in gold for label in labels] for _, _, golds in documents for gold in golds], dtype="f")
    start = time.perf_counter()
    block.initialize(X=(docs, candidates), Y=Y)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "bionlp-st-2013-ge" / "original-data")
    parser.add_argument("--model", type=Path, default=MD_MODEL)
    parser.add_argument("--lexicon", type=Path, required=True)
    parser.add_argument("--sizes", nargs="+", default=["1000", "3000", "10000", "20000", "40000", "all"])
    parser.add_argument("--rate-candidates", type=int, default=3000)
    parser.add_argument("--max-train", type=int, default=MAX_TRAIN, help="0 for none")
    parser.add_argument("--text-weight", type=float, nargs="+", default=BLOCK["text_weight"])
    parser.add_argument("--tree-weight", type=float, nargs="+", default=BLOCK["tree_weight"])
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    documents, vocab = corpus(args)
    total = sum(len(c) for _, c, _ in documents)
    labels = sorted({label for _, _, golds in documents for gold in golds for label in gold})
    print(f"{total:,} candidates of {len(documents):,} documents, {len(labels)} labels", flush=True)
    gram_rates(documents, args.rate_candidates)
    rows = []
    for size in args.sizes:
        wanted = total if size == "all" else int(size)
        taken, n = [], 0
        for document in documents:
            if n >= wanted:
                break
            taken.append(document)
            n += len(document[1])
        seconds = initialize(
            taken,
            labels,
            vocab,
            max_train=args.max_train or None,
            text_weight=args.text_weight,
            tree_weight=args.tree_weight,
        )
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows.append(
            {
                "candidates": n,
                "documents": len(taken),
                "max_train": args.max_train,
                "text_weight": args.text_weight,
                "tree_weight": args.tree_weight,
                "seconds": round(seconds, 1),
                "peak_rss_mb": round(peak),
            }
        )
        print(
            f"{n:,} candidates ({len(taken):,} documents): initialize {seconds:.1f} s, peak RSS {peak:,.0f} MB",
            flush=True,
        )
    if args.results is not None:
        write_json(args.results, rows)


if __name__ == "__main__":
    main()
