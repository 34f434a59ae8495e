"""configs/relations.cfg and configs/bionlp_relations.cfg train with ``spacy train`` on the
bundled samples, ``spacy evaluate`` runs on the result (issue 16 point 6), and ``evaluate
relations`` gives the last dev scores of training (issue 27 point 3)."""

import json
import subprocess
import sys

import pytest
import spacy
from data_paths import CORPORA, ROOT, need_shared

from spacy_convkernels.cli import main
from spacy_convkernels.ml.kernel_blocks import blocks_of

STEPS = ["--training.max_steps", "4", "--training.eval_frequency", "2"]


def train(config: str, output, *overrides: str) -> None:
    model = need_shared("models/en_core_web_md-3.8.0")
    command = [sys.executable, "-m", "spacy", "train", str(ROOT / "configs" / config), "--output", str(output)]
    command += ["--paths.md_model", str(model), *STEPS, *overrides]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "kernel_relations" in result.stdout


def evaluate(pipeline, data) -> dict:
    metrics = pipeline.parent / "metrics.json"
    command = [sys.executable, "-m", "spacy", "evaluate", str(pipeline), str(data), "--output", str(metrics)]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(metrics.read_text())


def evaluate_relations(pipeline, corpus, *options: str) -> dict:
    """The scores of ``python -m spacy_convkernels evaluate relations``, from its --output."""
    scores = pipeline.parent / "relations.json"
    command = ["evaluate", "relations", str(pipeline), str(corpus), "--output", str(scores), "--quiet"]
    assert main([*command, *options]) == 0
    return json.loads(scores.read_text())


def micro(scores: dict) -> dict:
    return {key: scores[key] for key in ("rel_micro_p", "rel_micro_r", "rel_micro_f")}


def last_dev_scores(pipeline) -> dict:
    """The micro figures of the last evaluation on the dev corpus during ``spacy train``."""
    return micro(json.loads((pipeline / "meta.json").read_text())["performance"])


def convert(source, target, kind: str) -> None:
    command = [sys.executable, "-m", "spacy_convkernels", "convert", str(source), str(target), "--format", kind]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
@pytest.mark.shared
def test_relations_config_trains_well_and_evaluates(tmp_path):
    sample = CORPORA / "relations-sample" / "relations.jsonl"
    steps = ["--training.max_steps", "40", "--training.eval_frequency", "10"]
    train("relations.cfg", tmp_path / "out", "--paths.train", str(sample), "--paths.dev", str(sample), *steps)
    nlp = spacy.load(tmp_path / "out" / "model-best")
    assert set(nlp.get_pipe("kernel_relations").labels) == {"ACTIVATES", "BINDS", "INHIBITS", "PHOSPHORYLATES"}
    kinds = [block.name for block in blocks_of(nlp.get_pipe("kernel_relations").model.get_ref("kernel_features"))]
    assert kinds == ["candidate_kernel_svm"]  # the SVM decisions of the GE config (PK, separate positions)
    # the sample's relations learned: model-best's score on the dev corpus (the sample, entities given)
    assert json.loads((tmp_path / "out" / "model-best" / "meta.json").read_text())["performance"]["rel_micro_f"] >= 0.8
    convert(sample, tmp_path / "sample.spacy", "relations-jsonl")
    assert "rel_micro_f" in evaluate(tmp_path / "out" / "model-best", tmp_path / "sample.spacy")
    # the command scores the dev corpus as training did (the gold entities given), from either file
    last = tmp_path / "out" / "model-last"
    assert micro(evaluate_relations(last, sample)) == last_dev_scores(last)
    assert micro(evaluate_relations(last, tmp_path / "sample.spacy")) == last_dev_scores(last)


PROTEINS = ("RAS", "RAF", "MEK1")


@pytest.mark.slow
@pytest.mark.shared
def test_bionlp_config_trains_on_the_sample_and_scores_raw_text(tmp_path):
    sample = CORPORA / "bionlp-st-2013-ge-sample"
    training_set = need_shared("data/bionlp-st-2013-ge/original-data/train")
    assert main(["lexicon", str(training_set), str(tmp_path / "lexicon")]) == 0  # the sample has no "activates"
    overrides = ["--paths.train", str(sample), "--paths.lexicon", str(tmp_path / "lexicon")]
    overrides += ["--corpora.train.split", "all", "--corpora.dev.split", "all"]  # the sample is one article
    train("bionlp_relations.cfg", tmp_path / "out", *overrides)
    nlp = spacy.load(tmp_path / "out" / "model-best")
    assert {"Gene_expression", "Positive_regulation"} <= set(nlp.get_pipe("kernel_relations").labels)
    assert "Protein" in nlp.get_pipe("ner").labels  # trained in the same run, on the reference's proteins
    raw = nlp("RAS activates RAF, which phosphorylates MEK1.")  # raw text: ner's proteins, the lexicon's triggers
    assert all(0.0 <= r["score"] <= 1.0 for r in raw._.kernel_interactions)
    doc = nlp.make_doc(raw.text)  # the proteins given, as the shared task gives them
    doc.ents = [doc.char_span(doc.text.index(name), doc.text.index(name) + len(name), "Protein") for name in PROTEINS]
    for name, component in nlp.pipeline:
        doc = doc if name == "ner" else component(doc)
    found = {(r["trigger"], tuple(r["participants"].items())) for r in doc._.kernel_interactions}
    assert {("activates", (("catalyst", "RAS"), ("theme", "RAF"))), ("phosphorylates", (("theme", "MEK1"),))} <= found
    assert all(0.0 <= r["score"] <= 1.0 for r in doc._.kernel_interactions)
    convert(sample, tmp_path / "sample.spacy", "standoff")
    metrics = evaluate(tmp_path / "out" / "model-best", tmp_path / "sample.spacy")
    assert 0.0 <= metrics["rel_micro_f"] <= 1.0
    # training's dev scores are raw-text ones: the dev corpus gives no proteins, ner finds them
    last = tmp_path / "out" / "model-last"
    assert micro(evaluate_relations(last, sample, "--entities", "predicted")) == last_dev_scores(last)
    gold_proteins = evaluate_relations(last, sample)
    with_gold_triggers = evaluate_relations(last, tmp_path / "sample.spacy", "--triggers", "gold")
    assert 0.0 <= gold_proteins["rel_micro_f"] <= 1.0 and 0.0 <= with_gold_triggers["rel_micro_f"] <= 1.0
