"""End-to-end speed of a trained pipeline: raw text to its annotations.

    python bench/pipeline_speed.py training/qc/model-best corpus/qc/test.spacy [--runs 3] [--batch-size 256]
    python bench/pipeline_speed.py training/bionlp/model-best ../shared/data/bionlp-st-2013-ge/original-data/devel \
        [--disable kernel_relations ner]

Loads the pipeline, takes the texts of the DocBin's docs (or of a folder's ``.txt``
files, such as a BioNLP standoff corpus), runs ``nlp.pipe`` over them (after a warm-up
of 50 texts) and prints texts per second for each run, and, when the DocBin's docs have
``cats``, the accuracy of the top category. ``--disable`` leaves components out, to time
the rest.
"""

import argparse
import time
from pathlib import Path

import spacy
from spacy.tokens import DocBin


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("docbin", type=Path, help="a .spacy DocBin or a folder of .txt files")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--disable", nargs="*", default=[], help="components left out, to time the rest")
    args = parser.parse_args()

    nlp = spacy.load(args.model, disable=args.disable)
    if args.docbin.is_dir():
        gold, texts = [], [path.read_text(encoding="utf-8") for path in sorted(args.docbin.glob("*.txt"))]
    else:
        gold = list(DocBin().from_disk(args.docbin).get_docs(nlp.vocab))
        texts = [doc.text for doc in gold]
    list(nlp.pipe(texts[:50]))
    for _ in range(args.runs):
        start = time.perf_counter()
        predicted = list(nlp.pipe(texts, batch_size=args.batch_size))
        print(f"{len(texts) / (time.perf_counter() - start):.1f} texts/s ({len(texts)} texts)", flush=True)
    if not gold or not gold[0].cats:
        return
    correct = sum(max(p.cats, key=p.cats.get) == max(g.cats, key=g.cats.get) for p, g in zip(predicted, gold))
    print(f"accuracy {100 * correct / len(gold):.1f} % on {len(gold)} questions")


if __name__ == "__main__":
    main()
