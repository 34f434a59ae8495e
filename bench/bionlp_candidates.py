"""Candidate interactions of BioNLP-ST 2013 GE train and devel, and how many are positive.

    python bench/bionlp_candidates.py [--data ../shared/data/bionlp-st-2013-ge/original-data]
        [--model ../shared/models/en_core_web_md-3.8.0] [--lexicon DIR] [--cache DIR] [--max-distance 4]

Each document is read by the standoff reader (gold proteins given, as in the shared
task) and parsed by the model (its NER left out, so the proteins stay the entities).
Triggers are the gold trigger spans, and, with ``--lexicon`` (the output of ``python -m
spacy_convkernels lexicon``), the spans its trigger patterns find. Per set and trigger
source: sentences, gold interactions, candidates (per role set), positive candidates
(a gold interaction with the same trigger and participants), and the gold interactions
some candidate finds (the recall the candidates allow).
"""

import argparse
from collections import Counter
from pathlib import Path

import spacy
from locations import DATA, MD_MODEL
from spacy.tokens import DocBin

from spacy_convkernels.corpora import read_standoff
from spacy_convkernels.corpora.lexicon import read_lexicon
from spacy_convkernels.extensions import install_extensions
from spacy_convkernels.structures.relations import ROLE_SETS, GoldRelations, dependency_interactions

LEXICON_TRIGGERS = "lexicon_triggers"


def parsed_documents(folder: Path, nlp, cache: Path | None = None) -> list:
    """The documents of ``folder`` (in order of file name) read with gold proteins and parsed
    by ``nlp`` (the md pipeline without its NER), kept in ``cache`` (a DocBin per folder)
    when given; a cache of other texts is an error."""
    stored = cache / f"{folder.name}.spacy" if cache else None
    if stored is not None and stored.exists():
        install_extensions("doc._.kernel_interactions")
        docs = list(DocBin().from_disk(stored).get_docs(nlp.vocab))
        if [doc.text for doc in docs] != [path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.txt"))]:
            raise SystemExit(f"{stored} does not hold the documents of {folder}; delete it to parse anew")
        return docs
    docs = list(nlp.pipe(read_standoff(folder, nlp), batch_size=16))
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        DocBin(docs=docs, store_user_data=True).to_disk(stored)
    return docs


def count(docs, triggers_key: str, max_distance: int) -> Counter:
    counts = Counter()
    for doc in docs:
        gold = GoldRelations(doc)
        found = set()
        counts["sentences"] += sum(1 for _ in doc.sents)
        counts["gold interactions"] += len(doc._.kernel_interactions)
        for candidate in dependency_interactions(doc, triggers_key=triggers_key, max_distance=max_distance):
            roles = tuple(role for role, _, _ in candidate.spans[1:])
            labels = gold.labels(candidate, doc)
            counts["candidates"] += 1
            counts[f"candidates {'+'.join(roles)}"] += 1
            counts["positive"] += bool(labels)
            counts[f"positive {'+'.join(roles)}"] += bool(labels)
            if labels:
                found.add(candidate.spans)
        counts["gold found"] += _found(doc, found)
    return counts


def _found(doc, spans: set) -> int:
    """The gold interactions matched by some positive candidate (by token spans)."""
    hits = 0
    for item in doc._.kernel_interactions:
        roles = {("theme" if r == "theme2" else r, tuple(s)) for r, s in item["spans"].items() if r != "trigger"}
        trigger = item["spans"]["trigger"]
        hits += any(
            {(("theme" if r == "theme2" else r), (a, b)) for r, a, b in c[1:]} == roles
            and c[0][1] < trigger[1]
            and trigger[0] < c[0][2]
            for c in spans
        )
    return hits


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the GE scripts: the data, the parser, the lexicon, the cache."""
    parser.add_argument("--data", type=Path, default=DATA / "bionlp-st-2013-ge" / "original-data")
    parser.add_argument("--model", type=Path, default=MD_MODEL)
    parser.add_argument("--lexicon", type=Path, help="folder with triggers.jsonl (python -m spacy_convkernels lexicon)")
    parser.add_argument("--cache", type=Path, help="folder keeping the parsed documents")


def add_lexicon_triggers(docs: list, lexicon: Path) -> list:
    """``docs``, each given ``doc.spans[LEXICON_TRIGGERS]``: the spans of the trigger patterns of ``lexicon``."""
    vocab = docs[0].vocab if docs else None
    ruler = spacy.blank("en", vocab=vocab).add_pipe(
        "span_ruler", config={"spans_key": LEXICON_TRIGGERS, "phrase_matcher_attr": "LOWER"}
    )
    ruler.add_patterns(read_lexicon(lexicon)["triggers"])
    return [ruler(doc) for doc in docs]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_arguments(parser)
    parser.add_argument("--max-distance", type=int, default=4)
    args = parser.parse_args()
    nlp = spacy.load(args.model, exclude=["ner"])
    for split in ("train", "devel"):
        docs = parsed_documents(args.data / split, nlp, args.cache)
        if args.lexicon:
            docs = add_lexicon_triggers(docs, args.lexicon)
        for key in ("triggers",) + ((LEXICON_TRIGGERS,) if args.lexicon else ()):
            counts = count(docs, key, args.max_distance)
            print(f"== {split}, triggers: {key}, max distance {args.max_distance}")
            for name in ("sentences", "gold interactions", "candidates", "positive", "gold found"):
                print(f"{name:>30}: {counts[name]}")
            for roles in ROLE_SETS:
                name = "+".join(roles)
                print(f"{name:>30}: {counts[f'candidates {name}']} candidates, {counts[f'positive {name}']} positive")


if __name__ == "__main__":
    main()
