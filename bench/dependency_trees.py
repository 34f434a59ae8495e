"""Sentences per second turning dependency parses into the five tree representations.

    python bench/dependency_trees.py [--conllu ../shared/data/ud-english-ewt/en_ewt-ud-train.conllu]

Reads the treebank once (not timed), then converts every sentence into GRCT, LCT, LOCT,
CGRCT and CLCT, on one core: as Tree objects (``span_to_trees``) and as the bracket
strings the ``kernel_trees`` component writes. Prints the median of the runs.
"""

import argparse
import statistics
import time
from pathlib import Path

from locations import DATA

from spacy_convkernels.corpora import read_conllu
from spacy_convkernels.structures import REPRESENTATIONS, span_to_trees


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conllu", type=Path, default=DATA / "ud-english-ewt" / "en_ewt-ud-train.conllu")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    sentences = [sentence for doc in read_conllu(args.conllu) for sentence in doc.sents]
    tokens = sum(len(s) for s in sentences)
    print(
        f"{args.conllu.name}: {len(sentences):,} sentences, {tokens:,} tokens; "
        f"representations {', '.join(REPRESENTATIONS)}; one core, median of {args.runs} runs"
    )

    def as_trees():
        for sentence in sentences:
            span_to_trees(sentence)

    def as_strings():
        for sentence in sentences:
            {name: str(tree) for name, tree in span_to_trees(sentence).items()}

    for name, work in (("Tree objects", as_trees), ("bracket strings", as_strings)):
        seconds = []
        for _ in range(args.runs):
            start = time.perf_counter()
            work()
            seconds.append(time.perf_counter() - start)
        median = statistics.median(seconds)
        print(f"{name:<16} {len(sentences) / median:>10,.0f} sentences/s  ({median:.2f} s)")


if __name__ == "__main__":
    main()
