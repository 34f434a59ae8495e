"""Scores where spaCy users look (issue 61, point 5): ``evaluate relations`` with each
label's support and threshold, ``--threshold``, and warnings on widened spans and on labels
the model does not know; the scores under the span keys ``spacy evaluate --spans-key``
prints; ``plot relations``; and the settings initialize refuses."""

import json

import pytest
import spacy
from data_paths import require_extra
from relation_samples import KERNEL, parsed, trained_pair_pipeline
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import load_model_from_config
from spacy_cli import spacy_command

from spacy_convkernels.cli import main
from spacy_convkernels.components.relation_scores import SPANS_KEY, score_relations
from spacy_convkernels.components.relation_training import check_entity_sources
from spacy_convkernels.errors import CorpusWarning, InvalidParameterError, MissingAnnotationError

TEXT = parsed().text
RAS, RAF, MEK1 = ((TEXT.index(word), TEXT.index(word) + len(word)) for word in ("RAS", "RAF", "MEK1"))


@Language.component("test_relation_evaluation_parse")
def parse(doc):
    """The sample's parse of the sample's text, as a pipeline's parser would give it."""
    assert doc.text == TEXT
    return Doc(doc.vocab).from_bytes(parsed().to_bytes())


def record(*relations, spans=(RAS, RAF, MEK1)) -> dict:
    def where(span):
        return {"start": span[0], "end": span[1]}

    return {
        "text": TEXT,
        "spans": [{**where(span), "label": "Protein"} for span in spans],
        "relations": [{"head_span": where(h), "child_span": where(c), "label": label} for h, c, label in relations],
    }


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A saved pipeline: the sample's parse, then a kernel_relations trained on its pairs."""
    nlp, _, _, _ = trained_pair_pipeline(steps=5, kernel_features=KERNEL)
    nlp.add_pipe("test_relation_evaluation_parse", first=True)
    path = tmp_path_factory.mktemp("model") / "pipeline"
    nlp.to_disk(path)
    return path


def corpus(folder, *records) -> str:
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


SAME = record((RAS, RAF, "ACTIVATES"), (RAF, MEK1, "PHOSPHORYLATES"))


@pytest.mark.slow
def test_evaluate_relations_prints_each_labels_support_and_threshold(model, tmp_path, capsys):
    output = tmp_path / "scores.json"
    assert main(["evaluate", "relations", str(model), corpus(tmp_path, SAME, SAME), "-o", str(output), "--quiet"]) == 0
    printed = capsys.readouterr().out.splitlines()
    scores = json.loads(output.read_text())
    header = printed.index(next(line for line in printed if line.split()[:1] == ["label"]))
    assert printed[header].split() == ["label", "precision", "recall", "F1", "support", "threshold"]
    rows = {line.split()[0]: line.split()[1:] for line in printed[header + 1 :]}
    assert set(rows) == {"ACTIVATES", "PHOSPHORYLATES"}
    for label, cells in rows.items():
        figures = scores["rel_f_per_type"][label]
        assert cells == [f"{figures[k]:.3f}" for k in "prf"] + ["2", f"{scores['thresholds'][label]:.3f}"]
    assert scores["rel_support_per_type"] == {"ACTIVATES": 2, "PHOSPHORYLATES": 2}
    assert scores["thresholds"] == pytest.approx(spacy.load(model).get_pipe("kernel_relations").thresholds)


@pytest.mark.slow
def test_evaluate_relations_scores_at_the_thresholds_asked_for(model, tmp_path, capsys):
    data = corpus(tmp_path, SAME)

    def scored(*options):
        output = tmp_path / "scores.json"
        assert main(["evaluate", "relations", str(model), data, "-o", str(output), "--quiet", *options]) == 0
        return json.loads(output.read_text())

    assert scored("--threshold", "1")["rel_micro_p"] == 0.0  # no score reaches 1
    everything = scored("--threshold", "0")
    assert everything["rel_micro_r"] == 1.0 and everything["thresholds"] == {"ACTIVATES": 0.0, "PHOSPHORYLATES": 0.0}
    one = scored("--threshold", "1", "--threshold", "ACTIVATES=0")
    assert one["thresholds"] == {"ACTIVATES": 0.0, "PHOSPHORYLATES": 1.0}
    assert one["rel_f_per_type"]["ACTIVATES"]["r"] == 1.0 and one["rel_f_per_type"]["PHOSPHORYLATES"]["r"] == 0.0
    for bad, message in [("2", "must be a number in [0, 1]"), ("BINDS=0.5", "the model has no label 'BINDS'")]:
        assert main(["evaluate", "relations", str(model), data, "--quiet", "--threshold", bad]) == 1
        assert message in capsys.readouterr().err


@pytest.mark.slow
def test_evaluate_relations_warns_of_widened_spans_and_unknown_labels(model, tmp_path):
    widened = record((RAS, RAF, "ACTIVATES"), spans=((0, 2), RAF, MEK1))  # "RA", inside the token RAS
    widened["relations"][0]["head_span"] = {"start": 0, "end": 2}
    with pytest.warns(CorpusWarning, match="1 annotated spans begin or end inside a token"):
        assert main(["evaluate", "relations", str(model), corpus(tmp_path, SAME, widened), "--quiet"]) == 0
    unknown = record((RAS, RAF, "ACTIVATES"), (RAS, MEK1, "BINDS"))
    with pytest.warns(
        CorpusWarning, match="gold relations of labels kernel_relations does not know, .*: BINDS \\(1\\)"
    ):
        assert main(["evaluate", "relations", str(model), corpus(tmp_path, unknown), "--quiet"]) == 0
    only_unknown = corpus(tmp_path, record((RAS, MEK1, "BINDS")))
    with pytest.warns(
        CorpusWarning, match=r"shares no relation label with kernel_relations \(the corpus: BINDS \(1\);"
    ):
        assert main(["evaluate", "relations", str(model), only_unknown, "--quiet"]) == 0


def test_the_scores_are_given_again_under_the_span_keys_spacy_evaluate_prints():
    nlp, extractor, examples, _ = trained_pair_pipeline(steps=5, kernel_features=KERNEL)
    scored = [Example(extractor(example.predicted), example.reference) for example in examples]
    scores = score_relations(scored, threshold=extractor.thresholds)
    for key in ("p", "r", "f"):
        assert scores[f"spans_{SPANS_KEY}_{key}"] == scores[f"rel_micro_{key}"]
    assert scores[f"spans_{SPANS_KEY}_per_type"] == scores["rel_f_per_type"]
    assert extractor.score(scored) == scores
    assert scores["rel_support_per_type"] == {"ACTIVATES": 4, "PHOSPHORYLATES": 4}


@pytest.mark.slow
def test_spacy_evaluate_prints_the_relation_scores_with_spans_key_relations(model, tmp_path):
    data = tmp_path / "test.spacy"
    assert main(["convert", corpus(tmp_path, SAME), "-o", str(data)]) == 0
    code, printed = spacy_command(["evaluate", str(model), str(data), "--spans-key", SPANS_KEY])
    assert code == 0 and "SPAN P" in printed and "SPANS (per type)" in printed, printed
    assert "ACTIVATES" in printed and "PHOSPHORYLATES" in printed


@pytest.mark.slow
def test_plot_relations_draws_each_labels_curve(model, tmp_path, capsys):
    require_extra("matplotlib", "plot")
    image = tmp_path / "curves.png"
    assert main(["plot", "relations", str(model), corpus(tmp_path, SAME), "-o", str(image), "--quiet"]) == 0
    assert image.read_bytes().startswith(b"\x89PNG")
    assert "the precision-recall curves of 2 labels drawn to" in capsys.readouterr().err


# --- what initialize refuses ------------------------------------------------------------------

PIPELINE = """
[paths]
train = "train.jsonl"
dev = "dev.jsonl"

[nlp]
lang = "en"
pipeline = {pipeline}

[components]

[components.ner]
factory = "ner"

[components.entity_ruler]
factory = "entity_ruler"

[components.kernel_relations]
factory = "kernel_relations"

[corpora]

[corpora.train]
@readers = "spacy_convkernels.RelationsJsonl.v1"
path = ${{paths.train}}
give_entities = "{train}"

[corpora.dev]
@readers = "spacy_convkernels.RelationsJsonl.v1"
path = ${{paths.dev}}
give_entities = "{dev}"

[training]
frozen_components = {frozen}
"""


def pipeline(*, components=("ner",), train="span_group", dev="none", frozen=()):
    from spacy.util import Config

    text = PIPELINE.format(
        pipeline=json.dumps([*components, "kernel_relations"]), train=train, dev=dev, frozen=json.dumps(list(frozen))
    )
    return load_model_from_config(Config().from_str(text), auto_fill=True)


def examples_of(nlp, *, ents: bool) -> list[Example]:
    reference = parsed()
    predicted = Doc(nlp.vocab).from_bytes(reference.to_bytes())
    if not ents:  # as a reader of the text gives it: no entity annotation at all
        predicted.set_ents([], default="missing")
    return [Example(predicted, reference)]


@pytest.mark.parametrize(
    "setting, ents, message",
    [
        (
            {},
            True,
            "ner learns doc.ents in this run, but the training Docs were given their entities as doc.ents "
            "(read by spacy_convkernels.RelationsJsonl.v1)",
        ),
        (
            {"dev": "span_group"},
            False,
            "the dev corpus (read by spacy_convkernels.RelationsJsonl.v1) gives the Docs "
            'their entities (give_entities = "span_group"), which ner learns to find',
        ),
        ({"dev": "doc.ents"}, False, 'gives the Docs their entities (give_entities = "doc.ents")'),
        (
            {"components": (), "train": "doc.ents"},
            True,
            'gives the Docs no entities (give_entities = "none") and no component before kernel_relations finds them',
        ),
    ],
)
def test_initialize_refuses_corpora_and_a_pipeline_that_cannot_work_together(setting, ents, message):
    nlp = pipeline(**setting)
    with pytest.raises(InvalidParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_entity_sources("kernel_relations", nlp, examples_of(nlp, ents=ents))


@pytest.mark.parametrize(
    "setting, ents",
    [
        ({}, False),  # the raw-text route: entities as a span group to train on, none on dev
        ({"train": "doc.ents", "dev": "doc.ents", "components": ()}, True),  # the gold-entity route
        ({"train": "doc.ents", "dev": "doc.ents", "frozen": ("ner",)}, True),  # a frozen ner learns nothing
        ({"components": ("entity_ruler",), "train": "doc.ents"}, True),  # a ruler finds the dev entities
    ],
)
def test_initialize_takes_the_settings_that_work(setting, ents):
    nlp = pipeline(**setting)
    check_entity_sources("kernel_relations", nlp, examples_of(nlp, ents=ents))


def test_training_docs_without_entities_name_the_reader_in_use():
    nlp = pipeline(components=(), train="none", dev="doc.ents")
    message = (
        r"the 1 training Docs give no relation candidate; 1 of them have no entities .* \(read by "
        r'spacy_convkernels.RelationsJsonl.v1\): give the entities \(give_entities = "doc.ents"'
    )
    examples = examples_of(nlp, ents=False)
    examples[0].reference._.kernel_rel = {(0, 2): {"ACTIVATES": 1.0}}
    with pytest.raises(MissingAnnotationError, match=message):
        nlp.get_pipe("kernel_relations").initialize(lambda: examples, nlp=nlp)
