"""Counts and read time of the BioNLP-ST 2013 GE train and devel sets through the standoff reader.

    python bench/bionlp_corpus.py [--data ../shared/data/bionlp-st-2013-ge/original-data] [--runs 3]

For each set: documents, proteins, triggers, events, gold interactions after flattening
(all, per type, how many come from Equiv, the events that give none, and the interactions whose trigger and
participants do not have distinct token spans once widened), misaligned mentions (boundaries inside a
token of spaCy's blank English tokenizer, widened to whole tokens), equivalence,
modification and coreference lines, and the read time (tokenization included), median of
the runs.
"""

import argparse
import statistics
import time
from collections import Counter
from pathlib import Path

import spacy
from locations import DATA

from spacy_convkernels.corpora import read_standoff


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "bionlp-st-2013-ge" / "original-data")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    nlp = spacy.blank("en")
    for split in ("train", "devel"):
        seconds = []
        for _ in range(args.runs):
            counts = Counter()
            start = time.perf_counter()
            docs = list(read_standoff(args.data / split, nlp, counts=counts))
            seconds.append(time.perf_counter() - start)
        equiv = sum(i["equiv"] for doc in docs for i in doc._.kernel_interactions)
        merged = sum(
            len({tuple(v) for v in i["spans"].values()}) < len(i["spans"])
            for doc in docs
            for i in doc._.kernel_interactions
        )
        flattened = sum(len({i["event"] for i in doc._.kernel_interactions}) for doc in docs)
        print(f"== {split} ({args.data / split})")
        for key in ("documents", "proteins", "triggers", "events", "interactions"):
            print(f"{key:>14}: {counts[key]}")
        print(f"{'from Equiv':>14}: {equiv}")
        print(f"{'merged spans':>14}: {merged} (interactions where trigger or participants share one token span)")
        print(f"{'events with none':>14}: {counts['events'] - flattened} (themes reach no protein)")
        for key in sorted(k for k in counts if k.startswith("interactions:")):
            print(f"{key.split(':')[1]:>26}: {counts[key]}")
        for key in ("misaligned", "equiv", "modifications", "coreference"):
            print(f"{key:>14}: {counts[key]}")
        tokens = sum(len(doc) for doc in docs)
        median = statistics.median(seconds)
        print(f"{'read time':>14}: {median:.2f} s ({counts['documents'] / median:.0f} documents/s, {tokens} tokens)")


if __name__ == "__main__":
    main()
