"""Relation-aware decoding on GE from raw text (docs/results/relations.md, "The entity
finder, an informed choice"): proteins kept by the interactions they take part in.

    python bench/bionlp_kept_by_relations.py MODEL [MODEL ...] --lexicon LEXICON \\
        [--margins 0 0.1 0.2 0.3 0.5] [--results docs/results/relations_ge_kept.json]

MODEL: a pipeline trained from configs/bionlp_relations.cfg (``bench/bionlp_config.py``);
LEXICON: the one it was trained with (``lexicon --dev-articles 0.2``), whose protein names
leave out the held-out fifth. On GE the proteins have one type and an event's type is
already the relation component's decision (it scores every type for every trigger), so
what relations can decide of the entities is which are kept: a ``span_ruler`` before the
relation component proposes what the ``ner`` missed, from the lexicon's protein names, or
its names and gene-like shapes, and the component's candidates take them as the shipped
config does (``proposals_key``; kept only by an interaction that clears its threshold by
``proposal_margin``, each margin of ``--margins`` in turn). Typed and candidate F1 from
raw text for each margin, on the held-out fifth of train (which decides) and on devel
(read after), against the pipeline as it is.
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
from spacy_convkernels.structures.relations import proposed_participants

FIGURES = ("rel_micro_f", "rel_micro_p", "rel_micro_r", "rel_untyped_f")
OWN_PROPOSALS = "protein_proposals"  # the config's own ruler (since issue 63), left out: the ner alone


def scores(pipe, examples: list, proposals_key: str | None, margin: float) -> dict:
    """The figures of ``pipe`` (the relation component) on ``examples``, its candidates
    taking the proposals of ``proposals_key`` at ``margin`` (None: the ``ner``'s proteins alone)."""
    candidates = pipe.model.attrs["candidates"]
    candidates.options["proposals_key"], candidates.proposal_margin = proposals_key, margin
    for example in examples:
        pipe(example.predicted)
    decisions = Decisions(examples, single_label=pipe.cfg["single_label"], labels=pipe.labels)
    figures = decisions.scores_at(pipe.thresholds)
    return {key: round(float(figures[key]), 4) for key in FIGURES}


def with_proposals(model: Path):
    """The pipeline of ``model`` without its own proposals (the ``ner`` alone) and with a
    ``span_ruler`` before its relation component, whose patterns each source sets."""
    nlp = spacy.load(model, exclude=[OWN_PROPOSALS])
    pipe = relation_component(nlp)
    nlp.add_pipe("span_ruler", name="proposals", before=pipe.name, config={"phrase_matcher_attr": "LOWER"})
    return nlp


def measure(nlp, documents, sources: dict[str, list], margins: list[float]) -> dict:
    """The figures of ``nlp`` (:func:`with_proposals`) on ``documents`` from raw text, its
    ``ner`` alone and with each source of proposed proteins at each margin: the pipeline
    runs once per source, its relation component once per margin."""
    pipe, ruler = relation_component(nlp), nlp.get_pipe("proposals")
    given = pipe.model.attrs["candidates"].options["participants_key"]
    references = list(read_standoff(documents, nlp))
    row: dict = {}
    for source, patterns in sources.items():
        ruler.clear()
        ruler.add_patterns(patterns)
        examples = evaluated_examples(nlp, references, entities="predicted")
        if not row:
            row["ner alone"] = scores(pipe, examples, None, 0.0)
        kept = [proposed_participants(e.predicted, given_key=given, proposals_key=ruler.key) for e in examples]
        row[source] = {
            "proposed": sum(map(len, kept)),
            "margins": {str(margin): scores(pipe, examples, ruler.key, margin) for margin in margins},
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
    patterns = read_lexicon(args.lexicon)["proteins"]
    sources = {"names": [p for p in patterns if isinstance(p["pattern"], str)], "names and shapes": patterns}
    rows = []
    for model in args.models:
        nlp = with_proposals(model)
        for corpus, documents in (("held-out fifth", held_out), ("devel", args.data / "devel")):
            row = {"model": str(model), "corpus": corpus, **measure(nlp, documents, sources, args.margins)}
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
