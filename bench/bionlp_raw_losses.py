"""Where the typed score of GE devel goes from raw text: the proteins, the triggers and the
candidates that raw text gives, and the best score a perfect classifier could reach.

    python bench/bionlp_raw_losses.py --lexicon DIR [--cache DIR] [--max-distance 4]
        [--data ../shared/data/bionlp-st-2013-ge/original-data] [--model ../shared/models/en_core_web_md-3.8.0]

Documents as bench/bionlp_candidates.py reads them (parsed by the md model, NER left out).
Settings, each on devel: *gold proteins* (the ``.a1`` given, as the shared task and the
training reader give them) and *raw text* (the lexicon's protein ruler: gazetteer and
gene-like shapes, longest matches), with the lexicon's trigger ruler in both. Per
setting: the protein mentions found (exact token spans against the ``.a1``), the trigger
spans found (a gold trigger overlapped by a lexicon span of its type), the candidates
(``dependency_interactions``, default role sets, ``--max-distance``) and the positive
ones, and the *oracle*: the component's own score (``score_relations``: typed
interactions, ``Equiv`` variants once, gold interactions no candidate reaches missed)
when every candidate gets exactly its gold labels, the ceiling any classifier of these
candidates has. The oracle is also given with a larger ``--max-distance`` and with the
catalyst + theme + theme2 role set, to price those levers.
"""

import argparse

import spacy
from bionlp_candidates import LEXICON_TRIGGERS, add_corpus_arguments, add_lexicon_triggers, parsed_documents
from spacy.training import Example

from spacy_convkernels.components.relation_scores import score_relations
from spacy_convkernels.corpora.lexicon import add_lexicon
from spacy_convkernels.extensions import INTERACTIONS_KEY, install_extensions
from spacy_convkernels.structures.relations import DEFAULT_ROLE_SETS, ROLE_SETS, GoldRelations, dependency_interactions


def protein_ruler(nlp, lexicon):
    """The lexicon's protein ruler (``add_lexicon``'s: longest matches, written to
    ``doc.spans["proteins"]`` and ``doc.ents``) on a blank pipeline of ``nlp``'s vocab."""
    blank = spacy.blank("en", vocab=nlp.vocab)
    add_lexicon(blank, lexicon)
    return blank.get_pipe("protein_ruler")


def raw_copy(doc, ruler):
    """``doc`` as raw text gives it: the ruler's proteins, the lexicon triggers kept."""
    copy = doc.copy()
    triggers = list(copy.spans[LEXICON_TRIGGERS])
    copy.spans.clear()
    copy.ents = []
    copy.user_data.pop(INTERACTIONS_KEY, None)
    copy = ruler(copy)
    copy.spans[LEXICON_TRIGGERS] = triggers
    return copy


def oracle(predicted: list, gold: list, **options) -> tuple[dict, int, int]:
    """(the score of the gold labels given to every candidate, candidates, positive ones)."""
    install_extensions("doc._.kernel_rel", "doc._.kernel_interactions")
    examples, n, positive = [], 0, 0
    for doc, reference in zip(predicted, gold):
        truth = GoldRelations(reference)
        records = []
        for c in dependency_interactions(doc, triggers_key=LEXICON_TRIGGERS, **options):
            labels = truth.labels(c, doc)
            n += 1
            positive += bool(labels)
            records.append({"scores": {label: 1.0 for label in labels}, "spans": {r: [s, e] for r, s, e in c.spans}})
        copy = doc.copy()
        copy.user_data[INTERACTIONS_KEY] = records
        examples.append(Example(copy, reference))
    return score_relations(examples, threshold=0.5), n, positive


def proteins_found(predicted: list, gold: list) -> tuple[float, float]:
    found = predicted_n = gold_n = 0
    for doc, reference in zip(predicted, gold):
        spans = {(s.start_char, s.end_char) for s in doc.spans["proteins"]}
        truth = {(s.start_char, s.end_char) for s in reference.spans["proteins"]}
        found, predicted_n, gold_n = found + len(spans & truth), predicted_n + len(spans), gold_n + len(truth)
    return found / max(predicted_n, 1), found / max(gold_n, 1)


def triggers_found(docs: list) -> tuple[int, int]:
    hit = total = 0
    for doc in docs:
        lexicon = [(s.start_char, s.end_char, s.label_) for s in doc.spans[LEXICON_TRIGGERS]]
        for span in doc.spans["triggers"]:
            total += 1
            hit += any(lab == span.label_ and s < span.end_char and span.start_char < e for s, e, lab in lexicon)
    return hit, total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_arguments(parser)
    parser.add_argument("--max-distance", type=int, default=4)
    args = parser.parse_args()
    if not args.lexicon:
        parser.error("--lexicon is needed")
    nlp = spacy.load(args.model, exclude=["ner"])
    docs = add_lexicon_triggers(parsed_documents(args.data / "devel", nlp, args.cache), args.lexicon)
    ruler = protein_ruler(nlp, args.lexicon)
    raw = [raw_copy(doc, ruler) for doc in docs]
    hit, total = triggers_found(docs)
    print(f"devel: {len(docs)} documents; gold triggers overlapped by a lexicon span of their type: {hit} of {total}")
    p, r = proteins_found(raw, docs)
    print(f"protein ruler, exact spans: precision {p:.3f}, recall {r:.3f}")
    settings = {"gold proteins": docs, "raw text": raw}
    levers = {
        f"max distance {args.max_distance}": {"max_distance": args.max_distance},
        f"max distance {args.max_distance + 2}": {"max_distance": args.max_distance + 2},
        "with catalyst+theme+theme2": {"max_distance": args.max_distance, "role_sets": ROLE_SETS},
    }
    for name, predicted in settings.items():
        for lever, options in levers.items():
            options.setdefault("role_sets", DEFAULT_ROLE_SETS)
            score, n, positive = oracle(predicted, docs, **options)
            print(
                f"{name:>13}, {lever:>26}: {n:>6} candidates, {positive:>5} positive; oracle typed "
                f"P {score['rel_micro_p']:.3f} R {score['rel_micro_r']:.3f} F1 {score['rel_micro_f']:.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
