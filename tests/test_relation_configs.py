"""The bionlp_relations config trains with ``spacy train`` on the bundled sample, ``spacy
evaluate`` runs on the result (issue 16 point 6), and ``evaluate relations`` gives the last
dev scores of training (issue 27 point 3). The relations and relations_raw_text configs are
trained and evaluated as docs/guide/relations_jsonl.md says (tests/test_doc_examples.py)."""

import json

import pytest
import spacy
from data_paths import CORPORA, need_shared
from spacy_cli import spacy_command

from spacy_convkernels.cli import main
from spacy_convkernels.configs import config_path

STEPS = ["--training.max_steps", "4", "--training.eval_frequency", "2"]


def train(config: str, output, *overrides: str) -> None:
    model = need_shared("models/en_core_web_md-3.8.0")
    command = ["train", str(config_path(config)), "--output", str(output)]
    code, printed = spacy_command([*command, "--paths.md_model", str(model), *STEPS, *overrides])
    assert code == 0 and "kernel_relations" in printed, printed[-3000:]


def evaluate(pipeline, data) -> dict:
    metrics = pipeline.parent / "metrics.json"
    code, printed = spacy_command(["evaluate", str(pipeline), str(data), "--output", str(metrics)])
    assert code == 0, printed[-3000:]
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
    assert main(["convert", str(source), "-o", str(target), "--format", kind]) == 0


PROTEINS = ("RAS", "RAF", "MEK1")


@pytest.mark.slow
@pytest.mark.shared
def test_bionlp_config_trains_on_the_sample_and_scores_raw_text(tmp_path):
    sample = CORPORA / "bionlp-st-2013-ge-sample"
    training_set = need_shared("data/bionlp-st-2013-ge/original-data/train")
    assert main(["lexicon", str(training_set), str(tmp_path / "lexicon")]) == 0  # the sample has no "activates"
    overrides = ["--paths.train", str(sample), "--paths.lexicon", str(tmp_path / "lexicon")]
    overrides += ["--corpora.train.split", "all", "--corpora.dev.split", "all"]  # the sample is one article
    train("bionlp_relations", tmp_path / "out", *overrides)
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


def test_the_raw_text_headers_gazetteer_block_builds_an_entity_ruler(tmp_path):
    """The relations_raw_text config's header tells how to put a gazetteer before its ner:
    its blocks, as written there, build and initialize an entity_ruler (spaCy's
    srsly.read_jsonl.v1, which it named before, gives a generator a ruler refuses)."""
    from spacy.util import load_config_from_str, load_model_from_config

    header = config_path("relations_raw_text").read_text(encoding="utf-8")
    lines = header[header.index("#   [components.entity_ruler]") : header.index('path = "gazetteer.jsonl"')]
    blocks = "\n".join(line.removeprefix("#   ") for line in lines.splitlines()) + 'path = "gazetteer.jsonl"\n'
    (tmp_path / "gazetteer.jsonl").write_text('{"label": "Loc", "pattern": "new york"}\n', encoding="utf-8")
    blocks = blocks.replace('"gazetteer.jsonl"', json.dumps(str(tmp_path / "gazetteer.jsonl")))
    components, initialize = blocks.split("[initialize.components.entity_ruler.patterns]")
    config = (
        '[nlp]\nlang = "en"\npipeline = ["entity_ruler"]\n\n[components]\n\n'
        + components
        + "\n[initialize]\n\n[initialize.components]\n\n[initialize.components.entity_ruler]\n\n"
        + "[initialize.components.entity_ruler.patterns]"
        + initialize
    )
    nlp = load_model_from_config(load_config_from_str(config), auto_fill=True)
    nlp.initialize()
    assert [(e.text, e.label_) for e in nlp("She moved to New York .").ents] == [("New York", "Loc")]
