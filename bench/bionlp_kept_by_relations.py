"""Relation-aware decoding on GE from raw text (docs/results/relations.md, "The entity
finder, an informed choice"): proteins kept by the interactions they take part in.

    python bench/bionlp_kept_by_relations.py MODEL [MODEL ...] --lexicon LEXICON \\
        [--margins 0 0.1 0.2 0.3 0.5] [--results docs/results/relations_ge_kept.json]

MODEL: a pipeline trained from configs/bionlp_relations.cfg (``bench/bionlp_config.py``);
LEXICON: the one it was trained with (``lexicon --dev-articles 0.2``), whose protein names
leave out the held-out fifth. On GE the proteins have one type and an event's type is
already the relation component's decision (it scores every type for every trigger), so
what relations can decide of the entities is which are kept: an ``entity_ruler`` after the
``ner`` proposes what the ``ner`` missed (where it found nothing), from the lexicon's
protein names, or its names and gene-like shapes, and such a proposal is kept only in the
interactions that reach their threshold with ``margin`` to spare (its candidates' scores
lowered by ``margin``); the ``ner``'s own proteins are scored as before. Typed and candidate F1 from raw text for each
margin, on the held-out fifth of train (which decides) and on devel (read after), against
the pipeline as it is.
"""

import argparse
import json
from pathlib import Path

import numpy as np
import spacy
from common import write_json
from locations import DATA

from spacy_convkernels.components.relation_evaluation import evaluated_examples, relation_component
from spacy_convkernels.components.relation_scores import Decisions
from spacy_convkernels.corpora.lexicon import read_lexicon
from spacy_convkernels.corpora.standoff import read_standoff, split_articles

FIGURES = ("rel_micro_f", "rel_micro_p", "rel_micro_r", "rel_untyped_f")
OWN_PROPOSALS = "protein_proposals"  # the config's own ruler (since issue 63), left out: the ner alone


def scores(nlp, examples: list, margin: float = 0.0, proposed: list[set] | None = None) -> dict:
    """The figures of ``examples`` at the component's thresholds, the scores of every
    interaction with a participant in ``proposed`` (per example, token spans) lowered by ``margin``."""
    component = relation_component(nlp)
    for example, extra in zip(examples, proposed or []):
        for record in example.predicted._.kernel_interactions or []:
            original = record.setdefault("original", dict(record["scores"]))
            taken = any(tuple(span) in extra for role, span in record["spans"].items() if role != "trigger")
            record["scores"] = {label: value - margin * taken for label, value in original.items()}
    decisions = Decisions(examples, single_label=component.cfg["single_label"], labels=component.labels)
    figures = decisions.scores_at(component.thresholds)
    return {key: round(float(figures[key]), 4) for key in FIGURES}


def with_gazetteer(model: Path, patterns: list[dict]):
    """The pipeline of ``model`` with an ``entity_ruler`` of ``patterns`` after its
    ``ner``, adding a match only where the ``ner`` found nothing."""
    nlp = spacy.load(model, exclude=[OWN_PROPOSALS])
    ruler = nlp.add_pipe("entity_ruler", after="ner", config={"phrase_matcher_attr": "LOWER", "overwrite_ents": False})
    ruler.add_patterns(patterns)
    return nlp


def measure(model: Path, documents, lexicon: Path, margins: list[float]) -> dict:
    """The figures of ``model`` on ``documents`` from raw text, its ``ner`` alone and with
    each source of proposed proteins at each margin."""
    nlp = spacy.load(model, exclude=[OWN_PROPOSALS])
    references = list(read_standoff(documents, nlp))
    alone = evaluated_examples(nlp, references, entities="predicted")
    row = {"ner alone": scores(nlp, alone)}
    patterns = read_lexicon(lexicon)["proteins"]
    sources = {
        "names": [p for p in patterns if isinstance(p["pattern"], str)],
        "names and shapes": patterns,
    }
    for source, chosen in sources.items():
        nlp = with_gazetteer(model, chosen)
        union = evaluated_examples(nlp, references, entities="predicted")
        proposed = [
            {(e.start, e.end) for e in u.predicted.ents} - {(e.start, e.end) for e in a.predicted.ents}
            for u, a in zip(union, alone)
        ]
        row[source] = {
            "proposed": sum(map(len, proposed)),
            "margins": {str(margin): scores(nlp, union, margin, proposed) for margin in margins},
        }
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument("--lexicon", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DATA / "bionlp-st-2013-ge" / "original-data")
    parser.add_argument("--margins", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.3, 0.5])
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    held_out = split_articles(args.data / "train", share=0.2, seed=0)[1]
    rows = []
    for model in args.models:
        for corpus, documents in (("held-out fifth", held_out), ("devel", args.data / "devel")):
            row = {"model": str(model), "corpus": corpus, **measure(model, documents, args.lexicon, args.margins)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.results:
        write_json(args.results, rows)
    for corpus in ("held-out fifth", "devel"):
        chosen = [r for r in rows if r["corpus"] == corpus]
        alone = np.mean([r["ner alone"]["rel_micro_f"] for r in chosen])
        print(f"{corpus}: typed F1 from raw text, ner alone {alone:.3f}")
        for source in ("names", "names and shapes"):
            means = [np.mean([r[source]["margins"][str(m)]["rel_micro_f"] for r in chosen]) for m in args.margins]
            print(f"  with {source}: " + ", ".join(f"margin {m} {v:.3f}" for m, v in zip(args.margins, means)))


if __name__ == "__main__":
    main()
