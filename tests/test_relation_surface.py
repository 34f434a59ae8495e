"""The spaCy surface of ``kernel_relations`` (issue 35, point 5): what a user of explosion's
``rel_component`` tutorial expects of a relation component. Tiny models and Docs built
here; no download, nothing from ../shared."""

import json

from relation_samples import parsed
from spacy.tokens import Doc

from spacy_convkernels.extensions import install_extensions
from spacy_convkernels.pair_scores import PairScores


def test_writes_into_the_relations_persist():
    install_extensions("doc._.kernel_rel", "doc._.kernel_interactions")
    doc = parsed()
    doc._.kernel_rel[(0, 2)] = {"ACTIVATES": 0.5}  # on a Doc never scored
    doc._.kernel_rel[(0, 2)]["ACTIVATES"] = 0.9
    doc._.kernel_rel.setdefault((2, 6), {})["PHOSPHORYLATES"] = 0.8
    assert doc._.kernel_rel == {(0, 2): {"ACTIVATES": 0.9}, (2, 6): {"PHOSPHORYLATES": 0.8}}
    restored = Doc(doc.vocab).from_bytes(doc.to_bytes())  # msgpack gives back string keys
    restored._.kernel_rel[(0, 2)]["ACTIVATES"] = 0.1
    del restored._.kernel_rel[(2, 6)]
    assert restored._.kernel_rel == {(0, 2): {"ACTIVATES": 0.1}}
    doc._.kernel_interactions = [{"interaction": "Binding", "scores": {"Binding": 0.2}, "spans": {"theme": [0, 1]}}]
    restored = Doc(doc.vocab).from_bytes(doc.to_bytes())
    restored._.kernel_interactions[0]["scores"]["Binding"] = 0.7
    assert restored._.kernel_interactions[0]["scores"] == {"Binding": 0.7}


def test_to_json_round_trips_through_json_dumps():
    install_extensions("doc._.kernel_rel", "doc._.kernel_interactions")
    doc = parsed()
    doc._.kernel_rel = {(0, 2): {"ACTIVATES": 0.9}, (6, 2): {"ACTIVATES": 0.1}}
    doc._.kernel_interactions = [{"interaction": "Binding", "scores": {"Binding": 0.2}, "spans": {"theme": [0, 1]}}]
    text = json.dumps(doc.to_json(underscore=["kernel_rel", "kernel_interactions"]))
    data = json.loads(text)
    assert data["_"]["kernel_rel"] == {"0,2": {"ACTIVATES": 0.9}, "6,2": {"ACTIVATES": 0.1}}
    back = Doc(doc.vocab).from_json(data)
    assert back._.kernel_rel == doc._.kernel_rel and back._.kernel_interactions == doc._.kernel_interactions
    scores = PairScores(data["_"]["kernel_rel"])  # the JSON form read back without a Doc
    assert scores == doc._.kernel_rel and sorted(scores) == [(0, 2), (6, 2)]
    assert [(head, child) for (head, child), _ in scores.items()] == [(0, 2), (6, 2)]
