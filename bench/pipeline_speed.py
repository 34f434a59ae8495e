"""End-to-end speed of a trained text-classification pipeline: raw text to label.

    python bench/pipeline_speed.py training/qc/model-best corpus/qc/test.spacy [--runs 3] [--batch-size 256]

Loads the pipeline, takes the texts of the DocBin's docs, runs ``nlp.pipe`` over them
(after a warm-up of 50 texts) and prints questions per second for each run, and the
accuracy of the top category against the DocBin's ``cats``.
"""

import argparse
import time
from pathlib import Path

import spacy
from spacy.tokens import DocBin


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("docbin", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()

    nlp = spacy.load(args.model)
    gold = list(DocBin().from_disk(args.docbin).get_docs(nlp.vocab))
    texts = [doc.text for doc in gold]
    list(nlp.pipe(texts[:50]))
    for _ in range(args.runs):
        start = time.perf_counter()
        predicted = list(nlp.pipe(texts, batch_size=args.batch_size))
        print(f"{len(texts) / (time.perf_counter() - start):.0f} questions/s", flush=True)
    correct = sum(max(p.cats, key=p.cats.get) == max(g.cats, key=g.cats.get) for p, g in zip(predicted, gold))
    print(f"accuracy {100 * correct / len(gold):.1f} % on {len(gold)} questions")


if __name__ == "__main__":
    main()
