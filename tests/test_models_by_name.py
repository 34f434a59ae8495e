"""The configs name spaCy's en_core_web_md by its package name, as spaCy users install it
(issue 27, point 6); this repository passes its ../shared folder as an override."""

from pathlib import Path

import pytest
from spacy.util import load_config

from spacy_convkernels.configs import config_path, names

CONFIGS = [config_path(name) for name in names()]


def test_there_are_configs():
    assert {path.name for path in CONFIGS} >= {"qc_textcat.cfg", "relations.cfg", "bionlp_relations.cfg"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda path: path.name)
def test_config_names_the_md_model_by_package(path: Path):
    config = load_config(path, interpolate=False)
    assert config["paths"]["md_model"] == "en_core_web_md"
    assert "../shared" not in path.read_text(encoding="utf-8").split("[paths]")[1]  # settings, not comments


def test_the_override_reaches_every_source_and_the_vectors():
    config = load_config(config_path("qc_textcat"), overrides={"paths.md_model": "/models/md"}, interpolate=True)
    sources = {settings["source"] for settings in config["components"].values() if "source" in settings}
    assert sources == {"/models/md"} and config["initialize"]["vectors"] == "/models/md"
