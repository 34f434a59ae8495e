"""``python -m spacy debug data`` runs on every shipped config (issue 35, point 5): the
configs initialize as ``spacy train`` does, their frozen md components left as sourced
(``spacy_convkernels.SkipFrozen.v1`` and ``EnableFrozen.v1``), and write out what
spaCy's ``nlp.initialize()`` cannot interpolate (a learn-rate schedule's total_steps).
The commands run in this process (tests/spacy_cli.py)."""

import inspect
import re
import shlex

import pytest
import spacy
from data_paths import CORPORA, ROOT, require_extra
from kelp_parses import QC_SAMPLE
from spacy.language import Language
from spacy_cli import spacy_command
from tiny_bert import write_tiny_bert

from spacy_convkernels.cli import main
from spacy_convkernels.cli.convert import convert
from spacy_convkernels.configs import config_path, names
from spacy_convkernels.errors import InvalidParameterError

CONFIGS = names()
RELATIONS_SAMPLE = CORPORA / "relations-sample" / "relations.jsonl"
GE_SAMPLE = CORPORA / "bionlp-st-2013-ge-sample"


class InitializedOnce:
    """A component that refuses a second initialization, as a sourced one should get none."""

    def __init__(self):
        self.initialized = False

    def __call__(self, doc):
        return doc

    def initialize(self, get_examples=None, *, nlp=None):
        if self.initialized:
            raise InvalidParameterError("initialized twice")
        self.initialized = True


@Language.factory("test_initialized_once")
def make_initialized_once(nlp, name):
    return InitializedOnce()


def test_initialize_leaves_the_frozen_components_as_spacy_train_does():
    callbacks = {
        "before_init": {"@callbacks": "spacy_convkernels.SkipFrozen.v1"},
        "after_init": {"@callbacks": "spacy_convkernels.EnableFrozen.v1"},
    }
    nlp = spacy.blank("en", config={"training": {"frozen_components": ["trained"]}, "initialize": callbacks})
    nlp.add_pipe("test_initialized_once", name="trained").initialized = True  # as sourced from a trained pipeline
    nlp.add_pipe("test_initialized_once", name="other")
    nlp.initialize()  # as spacy debug data does; then spacy train would
    assert nlp.pipe_names == ["trained", "other"] and not nlp.disabled
    assert nlp.get_pipe("other").initialized


def data_overrides(config: str, tmp_path) -> list[str]:
    """Small data for ``config``: the bundled samples."""
    if config.startswith("qc_"):
        convert(QC_SAMPLE, tmp_path / "train.spacy", dev=tmp_path / "dev.spacy")
        return ["--paths.train", str(tmp_path / "train.spacy"), "--paths.dev", str(tmp_path / "dev.spacy")]
    if config.startswith("bionlp_"):
        assert main(["lexicon", str(GE_SAMPLE), str(tmp_path / "lexicon")]) == 0
        overrides = ["--paths.train", str(GE_SAMPLE), "--paths.lexicon", str(tmp_path / "lexicon")]
        return overrides + ["--corpora.train.split", "all", "--corpora.dev.split", "all"]  # one article
    return ["--paths.train", str(RELATIONS_SAMPLE), "--paths.dev", str(RELATIONS_SAMPLE)]


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("config", CONFIGS)
def test_spacy_debug_data_runs_on_every_shipped_config(config, md_model, tmp_path):
    overrides = ["--paths.md_model", str(md_model), *data_overrides(config, tmp_path)]
    if "transformer" in config:
        require_extra("spacy_transformers", "transformers")
        overrides += ["--paths.transformer", str(write_tiny_bert(tmp_path / "bert"))]
    _, printed = spacy_command(["debug", "data", str(config_path(config)), *overrides])
    # it reaches its summary; with a sample this small it reports "Low number of examples" and exits 1
    assert "Pipeline can be initialized with data" in printed and "Summary" in printed, printed
    if "relations" in config:  # what a relation user needs, from kernel_relations' initialize
        reader = "BioNLPStandoff" if config.startswith("bionlp_") else "RelationsJsonl"
        assert f"kernel_relations: training data (read by spacy_convkernels.{reader}.v1): " in printed, printed
        assert "per document" in printed and "per label, the positive candidates" in printed
        assert re.search(r"kernel_relations: the candidates reach [\d,]+ of the references' [\d,]+ gold", printed)


@pytest.mark.slow
def test_the_documented_category_check_checks_the_text_categories(tmp_path, monkeypatch):
    """spaCy's debug data checks cats only for a factory named textcat (or
    textcat_multilabel): docs/relations.md says so, and its commands run those checks."""
    import spacy.cli.debug_data

    assert '"textcat" in factory_names' in inspect.getsource(spacy.cli.debug_data)  # what the docs say spaCy does
    docs = (ROOT / "docs" / "relations.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- test: category checks [^>]*-->\n```sh\n(.*?)```", docs, re.S).group(1)
    convert(QC_SAMPLE, tmp_path / "corpus" / "qc" / "train.spacy", dev=tmp_path / "corpus" / "qc" / "dev.spacy")
    monkeypatch.chdir(tmp_path)
    outputs = []
    for line in block.splitlines():
        arguments = shlex.split(line)
        assert arguments[:3] == ["python", "-m", "spacy"], line
        outputs.append(spacy_command(arguments[3:])[1])
    assert "Text Classification (Exclusive Classes)" in outputs[-1] and "6 label(s)" in outputs[-1], outputs[-1]
