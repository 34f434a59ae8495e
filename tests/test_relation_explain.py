"""Explaining a relation decision (issue 63, point 4): the support vectors' shares of each
SVM decision, their sentences and gold labels, the fragments shared, on one HTML page."""

import pytest
import spacy
from relation_samples import PATH_SVM, model_config, pair_examples, parsed, parsed_in
from spacy.language import Language
from spacy.tokens import DocBin, Span

from spacy_convkernels.cli import main
from spacy_convkernels.components.relation_explain import ANY_RELATION, to_html
from spacy_convkernels.components.relation_scores import Relation
from spacy_convkernels.errors import InvalidParameterError, ModelFileError
from spacy_convkernels.kernels.path_explain import PathExplanation
from spacy_convkernels.ml.kernel_blocks import blocks_of


def trained(svm_config: dict):
    """A blank pipeline with kernel_relations initialized on the pair examples."""
    nlp = spacy.blank("en")
    config = dict(model_config("EntityPairCandidates", tok2vec=False), kernel_features=svm_config)
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    examples = pair_examples(nlp)
    nlp.initialize(lambda: examples)
    return nlp, extractor


@pytest.fixture(scope="module", params=[0.0, 0.5], ids=["path", "path+text"])
def pipeline(request):
    return trained({**PATH_SVM, "text_weight": request.param})


def test_the_shares_sum_to_the_decision_and_the_decision_is_the_svms(pipeline):
    """The documented call (docs/relations.md): the toy pipeline's explanation, its shares and page."""
    nlp, extractor = pipeline
    doc = parsed_in(nlp)
    (block,) = blocks_of(extractor.model.get_ref("kernel_features"))
    candidates = extractor.model.attrs["candidates"](doc)
    decisions = block.predict(([doc], [candidates]))
    for row, candidate in enumerate(candidates):
        explanation = extractor.explain(doc, candidate.key, labels=list(extractor.labels), top=1000)
        outputs = [d.output for d in explanation.decisions]
        assert outputs == [ANY_RELATION, "ACTIVATES", "PHOSPHORYLATES"]
        for decision in explanation.decisions:
            column = [*extractor.labels, ANY_RELATION].index(decision.output)
            assert decision.value == pytest.approx(decisions[row, column], abs=1e-5)  # the SVM's own decision
            total = sum(s.contribution for s in decision.support) + decision.intercept
            assert decision.rest == pytest.approx(0.0, abs=1e-12)
            assert total == pytest.approx(decision.value, rel=1e-9, abs=1e-9)
            if decision.value:
                shares = sum(s.share for s in decision.support) + decision.intercept / decision.value
                assert shares == pytest.approx(1.0, rel=1e-9)
            for s in decision.support:
                assert s.contribution == pytest.approx(s.coefficient * (s.kernel_value + s.text_value))
        assert set(explanation.scores) == set(extractor.labels)


def test_a_proposed_participant_lowers_the_explained_scores_as_the_docs():
    nlp = spacy.blank("en")
    config = model_config("EntityPairCandidates", tok2vec=False, kernel_features=PATH_SVM)
    config["candidates"] |= {"proposals_key": "proposals", "proposal_margin": 0.25}
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    nlp.initialize(lambda: pair_examples(nlp))
    doc = parsed_in(nlp)
    doc.ents = doc.ents[:2]  # MEK1 is a proposal, beside the entities RAS and RAF
    doc.spans["proposals"] = [Span(doc, 6, 7, "Protein")]
    stored = extractor(doc.copy())._.kernel_rel
    for key in [(0, 2), (2, 6), (6, 0)]:
        explanation = extractor.explain(doc, key)
        assert explanation.scores == pytest.approx(stored[key])
        assert explanation.margin == (0.25 if 6 in key else 0.0)
        assert ("lowered by 0.25" in to_html(explanation)) == (6 in key)


def test_the_support_vectors_are_named_by_their_sentence_spans_and_gold_labels(pipeline):
    nlp, extractor = pipeline
    doc = parsed_in(nlp)
    explanation = extractor.explain(doc, (0, 2), top=3)
    assert [d.output for d in explanation.decisions] == [ANY_RELATION, "ACTIVATES"]  # the best label by default
    assert explanation.spans == (("head", 0, 3), ("child", 14, 17))
    gate = explanation.decisions[0]
    assert len(gate.support) == min(3, gate.n_support) and gate.support
    contributions = [abs(s.contribution) for s in gate.support]
    assert contributions == sorted(contributions, reverse=True)
    for s in gate.support:
        assert s.text == doc[:].text  # the sentence, without its trailing space
        head, child = (s.text[start:end] for _, start, end in s.spans)
        gold = {("RAS", "RAF"): ("ACTIVATES",), ("RAF", "MEK1"): ("PHOSPHORYLATES",)}.get((head, child), ())
        assert s.labels == gold
        assert (s.coefficient > 0) == bool(s.labels)  # the gate's positive class: any relation
        assert isinstance(s.fragments, PathExplanation)
        assert s.fragments.value == pytest.approx(s.kernel_value)


def test_a_relation_is_explained_by_its_spans_and_a_bad_key_or_label_is_refused(pipeline):
    nlp, extractor = pipeline
    doc = parsed_in(nlp)
    relation = Relation("PHOSPHORYLATES", 0.9, {"head": doc[2:3], "child": doc[6:7]})
    explanation = extractor.explain(doc, relation, labels=[relation.label])
    assert explanation.spans == (("head", doc[2].idx, doc[2].idx + 3), ("child", doc[6].idx, doc[6].idx + 4))
    assert explanation.decisions[1].output == relation.label
    with pytest.raises(InvalidParameterError, match=r"no candidate of this Doc has the key \(0, 7\)"):
        extractor.explain(doc, (0, 7))
    with pytest.raises(InvalidParameterError, match="no label INHIBITS"):
        extractor.explain(doc, (0, 2), labels=["INHIBITS"])


def test_origins_are_saved_with_the_model_and_checked_when_loaded(pipeline, tmp_path):
    nlp, extractor = pipeline
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    doc = parsed_in(loaded)
    again = loaded.get_pipe("kernel_relations").explain(doc, (0, 2))
    first = extractor.explain(parsed_in(nlp), (0, 2))
    assert again.decisions == first.decisions
    (block,) = blocks_of(loaded.get_pipe("kernel_relations").model.get_ref("kernel_features"))
    encoder = block.attrs["encoder"]
    encoder.support_origins = ["{not json"] * len(encoder.support_origins)
    with pytest.raises(ModelFileError, match="saved origin is damaged"):
        loaded.get_pipe("kernel_relations").explain(doc, (0, 2))


def test_the_page_is_one_escaped_file(pipeline, tmp_path):
    nlp, extractor = pipeline
    doc = parsed_in(nlp)
    explanation = extractor.explain(doc, (2, 6), top=2)
    page = to_html(explanation, title="<script>alert(1)</script>")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<mark" in page and "PHOSPHORYLATES" in page and "src=" not in page and "href=" not in page
    assert page.count("<table>") == len(explanation.decisions)


@Language.component("test_relation_explain_parse")
def copy_the_sample_parse(doc):
    """The parse of the pair examples' sentence (a stand-in for a parser)."""
    sample = parsed()
    assert [t.text for t in doc] == [t.text for t in sample]
    for token, source in zip(doc, sample):
        token.head, token.dep_, token.tag_, token.pos_, token.lemma_ = (
            doc[source.head.i],
            source.dep_,
            source.tag_,
            source.pos_,
            source.lemma_,
        )
    return doc


def test_the_command_explains_a_pair_of_a_corpus_document(tmp_path, capsys):
    """The documented command (docs/relations.md, docs/guide/cli.md): the command on a saved toy pipeline."""
    nlp = spacy.blank("en")
    nlp.add_pipe("test_relation_explain_parse")
    config = dict(model_config("EntityPairCandidates", tok2vec=False), kernel_features=PATH_SVM)
    nlp.add_pipe("kernel_relations", config={"model": config})
    nlp.initialize(lambda: pair_examples(nlp))
    nlp.to_disk(tmp_path / "model")
    reference = parsed()
    reference._.kernel_rel = {(0, 2): {"ACTIVATES": 1.0}, (2, 6): {"PHOSPHORYLATES": 1.0}}
    DocBin(docs=[reference], store_user_data=True).to_disk(tmp_path / "gold.spacy")
    page = tmp_path / "why.html"
    arguments = ["explain-relation", str(tmp_path / "model"), str(tmp_path / "gold.spacy"), "-o", str(page)]
    assert main([*arguments, "--head", "RAF", "--child", "MEK1", "--top", "2"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("RAF / MEK1: ") and "  any relation: decision" in printed
    assert "  PHOSPHORYLATES: decision" in printed and "[PHOSPHORYLATES] RAS activates RAF" in printed
    assert "<mark" in page.read_text(encoding="utf-8")
    assert main([*arguments, "--head", "RAF", "--child", "nobody"]) == 1
    assert "no candidate pair 'RAF' / 'nobody' in the document; its entities: MEK1, RAF, RAS" in capsys.readouterr().err
    assert main([*arguments[:-2], "-o", str(page)]) == 0  # an explicit -o replaces; the best candidate
