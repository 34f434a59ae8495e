"""Precision and recall of the protein gazetteer and trigger lexicon on BioNLP-ST 2013 GE devel.

    python bench/bionlp_lexicon.py [--data ../shared/data/bionlp-st-2013-ge/original-data]
        [--min-count 1] [--min-precision 0.1] [--protein-min-precision 0.5] [--sweep]

Builds the lexicon (:func:`spacy_convkernels.corpora.lexicon.build_lexicon`) from the train
documents, puts it in a blank English pipeline (:func:`add_lexicon`), runs it on the raw
devel texts and compares ``doc.spans["proteins"]`` and ``doc.spans["triggers"]`` with the
devel gold (tokens of the same tokenizer): micro precision, recall and F1 of spans
matched by exact token span (and label: ``Protein``, or the event type), by overlap
(a predicted span is right if it overlaps a gold span of its label; a gold span is found if
a predicted span of its label overlaps it), and for triggers by exact span ignoring the
type. Rows: the given options with and without the shape patterns; ``--sweep`` adds rows
for other thresholds.
"""

import argparse
from pathlib import Path

import spacy
from locations import DATA

from spacy_convkernels.corpora import read_standoff
from spacy_convkernels.corpora.lexicon import KEYS, add_lexicon, build_lexicon


def scores(pairs, *, overlap=False, typed=True) -> tuple[float, float, float]:
    """Micro precision, recall, F1 over (predicted spans, gold spans) pairs of documents."""
    right = found = predicted = gold = 0
    for guesses, truths in pairs:
        guesses = {(s.start, s.end, s.label_ if typed else "") for s in guesses}
        truths = {(s.start, s.end, s.label_ if typed else "") for s in truths}
        predicted, gold = predicted + len(guesses), gold + len(truths)
        if overlap:
            right += sum(any(_overlaps(g, t) for t in truths) for g in guesses)
            found += sum(any(_overlaps(g, t) for g in guesses) for t in truths)
        else:
            right += len(guesses & truths)
            found += len(guesses & truths)
    precision, recall = right / max(predicted, 1), found / max(gold, 1)
    return precision, recall, 2 * precision * recall / max(precision + recall, 1e-12)


def _overlaps(a, b) -> bool:
    return a[2] == b[2] and a[0] < b[1] and b[0] < a[1]


def evaluate(train, devel, **options) -> dict:
    """The figures of one lexicon built from ``train`` with ``options``, on ``devel``."""
    lexicon = build_lexicon(train, **options)
    nlp = spacy.blank("en")
    add_lexicon(nlp, lexicon)
    predicted = list(nlp.pipe(doc.text for doc in devel))
    pairs = {key: [(p.spans[key], g.spans[key]) for p, g in zip(predicted, devel)] for key in KEYS}
    return {
        "patterns": {key: len(lexicon[key]) for key in KEYS},
        "proteins exact": scores(pairs["proteins"]),
        "proteins overlap": scores(pairs["proteins"], overlap=True),
        "triggers exact": scores(pairs["triggers"]),
        "triggers overlap": scores(pairs["triggers"], overlap=True),
        "triggers untyped": scores(pairs["triggers"], typed=False),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "bionlp-st-2013-ge" / "original-data")
    parser.add_argument("--min-count", type=int, default=1)
    parser.add_argument("--min-precision", type=float, default=0.1)
    parser.add_argument("--protein-min-precision", type=float, default=0.5)
    parser.add_argument("--sweep", action="store_true", help="also rows for other thresholds")
    args = parser.parse_args()
    nlp = spacy.blank("en")
    train = list(read_standoff(args.data / "train", nlp))
    devel = list(read_standoff(args.data / "devel", nlp))
    gold = {key: sum(len(doc.spans[key]) for doc in devel) for key in KEYS}
    print(
        f"train {len(train)} documents, devel {len(devel)} documents: {gold['proteins']} proteins, "
        f"{gold['triggers']} triggers"
    )
    base = {
        "min_count": args.min_count,
        "min_precision": args.min_precision,
        "protein_min_precision": args.protein_min_precision,
    }
    rows = [{**base, "shapes": True}, {**base, "shapes": False}]
    if args.sweep:
        rows += [{**base, "shapes": True, "min_count": n} for n in (2, 3) if n != args.min_count]
        rows += [{**base, "shapes": True, "min_precision": p} for p in (0.0, 0.05, 0.2, 0.3, 0.5)]
        rows += [{**base, "shapes": True, "protein_min_precision": p} for p in (0.0, 0.2, 0.8)]
    columns = ["proteins exact", "proteins overlap", "triggers exact", "triggers overlap", "triggers untyped"]
    print("options | patterns (proteins, triggers) | " + " | ".join(f"{c}: P R F" for c in columns))
    for options in rows:
        figures = evaluate(train, devel, **options)
        cells = [" ".join(f"{x:.3f}" for x in figures[c]) for c in columns]
        described = ", ".join(f"{k}={v}" for k, v in options.items())
        patterns = figures["patterns"]
        print(f"{described} | {patterns['proteins']}, {patterns['triggers']} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
