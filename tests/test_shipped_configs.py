"""The training configs are installed with the package, and the ``config`` command lists
them and writes one out, byte for byte, as a user of the wheel gets them."""

import pytest
from data_paths import ROOT
from spacy.util import load_config

from spacy_convkernels.cli import main
from spacy_convkernels.configs import config_path, names, summary
from spacy_convkernels.errors import InvalidParameterError

SOURCE = ROOT / "spacy_convkernels" / "configs"


def test_every_config_of_the_source_tree_is_a_shipped_config():
    assert names() == sorted(path.stem for path in SOURCE.glob("*.cfg"))
    assert {"relations", "bionlp_relations", "qc_textcat"} <= set(names())


@pytest.mark.parametrize("name", names())
def test_each_config_says_in_one_line_what_it_trains_and_how_to_write_it_out(name):
    assert summary(name) and not summary(name).startswith("#")
    assert f"python -m spacy_convkernels config {name} -o {name}.cfg" in config_path(name).read_text()
    load_config(config_path(name))  # a valid spaCy config


def test_config_lists_the_configs_with_their_summaries(capsys):
    assert main(["config"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert [row.split()[0] for row in rows] == names()
    assert all(summary(name) in row for name, row in zip(names(), rows))


def test_config_writes_one_out_or_prints_it(tmp_path, capsys):
    output = tmp_path / "relations.cfg"
    assert main(["config", "relations", "-o", str(output)]) == 0
    assert output.read_bytes() == config_path("relations").read_bytes()
    assert main(["config", "relations"]) == 0
    assert capsys.readouterr().out == config_path("relations").read_text()


def test_an_unknown_config_names_the_shipped_ones(capsys):
    assert main(["config", "relation"]) == 1
    assert "no shipped config named 'relation'; the configs: bionlp_relations" in capsys.readouterr().err
    with pytest.raises(InvalidParameterError, match="no shipped config named"):
        config_path("../relations")


def test_an_output_without_a_config_is_refused(tmp_path, capsys):
    assert main(["config", "-o", str(tmp_path / "x.cfg")]) == 1
    assert "name the config to write" in capsys.readouterr().err
    assert not (tmp_path / "x.cfg").exists()
