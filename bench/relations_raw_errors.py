"""Where a raw-text relations pipeline loses CoNLL04's relations, and two relation-aware
decodings of its entities' types, on a relations JSONL split (docs/results/relations.md,
"The entity finder, an informed choice").

    python bench/relations_raw_errors.py MODEL ../shared/data/conll04/test.jsonl
    python bench/relations_raw_errors.py MODEL ../shared/data/conll04/dev.jsonl --retype signatures \\
        --margins 0 0.2 0.4 0.5 0.58 0.6
    python bench/relations_raw_errors.py MODEL ../shared/data/conll04/dev.jsonl --retype gazetteer \\
        --train ../shared/data/conll04/train.jsonl
    python bench/relations_raw_errors.py MODEL ../shared/data/conll04/dev.jsonl --keep --margins 0 0.1 0.2 0.3 0.5 1

Without ``--retype``: each gold relation by what the pipeline's entities make of it (both
found exactly and typed right; found, typed right, an end off; a type wrong; an entity
missing) and the share of each that the pipeline predicts (relations are matched on their
entities' first characters and the label). ``--retype signatures``: each pair also scored
with both entities retyped to each label's signature (its most frequent (head type, child
type) in ``--train``), the label predicted when that score minus a margin reaches its
threshold; micro P/R/F for each margin. ``--retype gazetteer``: an entity whose name the
training entities' gazetteer knows (:func:`~spacy_convkernels.corpora.lexicon.entity_gazetteer`)
takes its label before the relations are scored. ``--keep``: the gazetteer's names
proposed beside the ``ner`` where it found nothing, a pair with one kept when it clears
its threshold by each margin (relation-aware keeping, as ``configs/bionlp_relations.cfg``
does on GE).
"""

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import spacy
from locations import DATA
from spacy.tokens import Span

from spacy_convkernels.corpora import read_relations_jsonl
from spacy_convkernels.corpora.lexicon import entity_gazetteer


def gold(row: dict) -> set:
    return {(r["head_span"]["start"], r["child_span"]["start"], r["label"]) for r in row["relations"]}


def micro(found: list[tuple[set, set]]) -> str:
    right = sum(len(p & g) for p, g in found)
    predicted, total = sum(len(p) for p, _ in found), sum(len(g) for _, g in found)
    precision, recall = right / max(predicted, 1), right / total
    return f"P {precision:.3f} R {recall:.3f} F {2 * precision * recall / max(precision + recall, 1e-9):.3f}"


def losses(nlp, pipe, rows: list[dict]) -> None:
    kinds, predicted = Counter(), Counter()
    for row, doc in zip(rows, nlp.pipe(r["text"] for r in rows)):
        ents = {e.start_char: e for e in doc.ents}
        found = {(r.head.start_char, r.child.start_char, r.label) for r in pipe.relations(doc)}
        for relation in row["relations"]:
            head, child = relation["head_span"], relation["child_span"]
            pair = [ents.get(head["start"]), ents.get(child["start"])]
            if None in pair:
                kind = "an entity missing"
            elif [e.label_ for e in pair] != [head["label"], child["label"]]:
                kind = "found, a type wrong"
            elif [e.end_char for e in pair] != [head["end"], child["end"]]:
                kind = "found, typed right, an end off"
            else:
                kind = "found exactly, typed right"
            kinds[kind] += 1
            predicted[kind] += (head["start"], child["start"], relation["label"]) in found
    total = sum(kinds.values())
    for kind, n in kinds.most_common():
        print(f"{kind:32s} {n:4d} ({n / total:.1%}), predicted {predicted[kind]} ({predicted[kind] / n:.1%})")


def signatures(train: Path) -> dict[str, tuple[str, str]]:
    """Each label's most frequent (head type, child type) in the training relations."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for line in train.read_text(encoding="utf-8").splitlines():
        for r in json.loads(line)["relations"]:
            counts[r["label"]][(r["head_span"]["label"], r["child_span"]["label"])] += 1
    return {label: found.most_common(1)[0][0] for label, found in counts.items()}


def retyped_by_signatures(nlp, pipe, rows: list[dict], train: Path, margins: list[float]) -> None:
    signature = signatures(train)
    thresholds = pipe.thresholds
    scored = []  # (own scores, retyped scores, gold) per document
    with nlp.select_pipes(disable=[pipe.name]):
        docs = list(nlp.pipe(r["text"] for r in rows))
    for row, doc in zip(rows, docs):
        doc = pipe(doc)
        own = {(doc[h].idx, doc[c].idx, label): v for (h, c), s in doc._.kernel_rel.items() for label, v in s.items()}
        ents, retyped = list(doc.ents), {}
        for label, (head_type, child_type) in signature.items():
            for i, head in enumerate(ents):
                for j, child in enumerate(ents):
                    if i == j or (head.label_, child.label_) == (head_type, child_type):
                        continue
                    copy = doc.copy()
                    types = {i: head_type, j: child_type}
                    copy.ents = [Span(copy, e.start, e.end, label=types.get(k, e.label_)) for k, e in enumerate(ents)]
                    score = pipe(copy)._.kernel_rel.get((head.start, child.start), {}).get(label)
                    if score is not None:
                        retyped[(head.start_char, child.start_char, label)] = score
        scored.append((own, retyped, gold(row)))
    own_only = [({k for k, v in own.items() if v >= thresholds[k[2]]}, g) for own, _, g in scored]
    print(f"the pipeline's types: {micro(own_only)}")
    for margin in margins:
        found = [
            (
                {k for k, v in own.items() if v >= thresholds[k[2]]}
                | {k for k, v in re.items() if v >= thresholds[k[2]] + margin},
                g,
            )
            for own, re, g in scored
        ]
        print(f"retyped to the labels' signatures, margin {margin}: {micro(found)}")


def retyped_by_gazetteer(nlp, pipe, rows: list[dict], train: Path) -> None:
    names = {}
    for pattern in entity_gazetteer(read_relations_jsonl(train, nlp), tokenizer=nlp.tokenizer):
        words = pattern["pattern"]
        names[words if isinstance(words, str) else " ".join(t["LOWER"] for t in words)] = pattern["label"]
    with nlp.select_pipes(disable=[pipe.name]):
        docs = list(nlp.pipe(r["text"] for r in rows))
    for retype in (False, True):
        found, changed = [], 0
        for row, doc in zip(rows, docs):
            doc = doc.copy()
            if retype:
                labels = [names.get(" ".join(t.lower_ for t in e), e.label_) for e in doc.ents]
                changed += sum(label != e.label_ for label, e in zip(labels, doc.ents))
                doc.ents = [Span(doc, e.start, e.end, label=label) for label, e in zip(labels, doc.ents)]
            doc = pipe(doc)
            found.append(({(r.head.start_char, r.child.start_char, r.label) for r in pipe.relations(doc)}, gold(row)))
        print(
            f"{'retyped by the gazetteer' if retype else 'the pipeline' + chr(39) + 's types'}: {micro(found)}"
            + (f" ({changed} entities retyped)" if retype else "")
        )


def kept_by_relations(nlp, pipe, rows: list[dict], train: Path, margins: list[float]) -> None:
    """The training entities' names proposed beside the ``ner`` (a ``span_ruler`` after
    it), a pair with one kept when its score clears the threshold by ``margin``
    (``proposals_key`` and ``proposal_margin`` of the component's candidates)."""
    ruler = nlp.add_pipe(
        "span_ruler",
        name="proposals",
        before=pipe.name,
        config={"spans_key": "proposals", "phrase_matcher_attr": "LOWER"},
    )
    ruler.add_patterns(entity_gazetteer(read_relations_jsonl(train, nlp), tokenizer=nlp.tokenizer))
    with nlp.select_pipes(disable=[pipe.name]):
        docs = list(nlp.pipe(r["text"] for r in rows))
    candidates = pipe.model.attrs["candidates"]
    for margin in [None, *margins]:
        candidates.options["proposals_key"] = None if margin is None else "proposals"
        candidates.proposal_margin = margin or 0.0
        found = []
        for row, doc in zip(rows, docs):
            doc = pipe(doc.copy())
            found.append(({(r.head.start_char, r.child.start_char, r.label) for r in pipe.relations(doc)}, gold(row)))
        print(f"{'the ner alone' if margin is None else f'names proposed, margin {margin}'}: {micro(found)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="a raw-text relations pipeline (ner, kernel_relations)")
    parser.add_argument("split", type=Path, help="a relations JSONL split")
    decoding = parser.add_mutually_exclusive_group()
    decoding.add_argument("--retype", choices=["signatures", "gazetteer"])
    decoding.add_argument("--keep", action="store_true", help="the training names proposed, kept by relations")
    parser.add_argument(
        "--train", type=Path, default=DATA / "conll04" / "train.jsonl", help="names, signatures (--retype, --keep)"
    )
    parser.add_argument(
        "--margins",
        type=float,
        nargs="+",
        default=[0.0, 0.2, 0.4, 0.5, 0.58, 0.6],
        help="(--retype signatures, --keep)",
    )
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    pipe = nlp.get_pipe("kernel_relations")
    rows = [json.loads(line) for line in args.split.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.keep:
        kept_by_relations(nlp, pipe, rows, args.train, args.margins)
    elif args.retype == "signatures":
        retyped_by_signatures(nlp, pipe, rows, args.train, args.margins)
    elif args.retype == "gazetteer":
        retyped_by_gazetteer(nlp, pipe, rows, args.train)
    else:
        losses(nlp, pipe, rows)


if __name__ == "__main__":
    main()
