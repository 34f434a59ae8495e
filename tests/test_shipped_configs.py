"""The training configs are installed with the package, and the ``config`` command lists
them and writes one out, byte for byte, as a user of the wheel gets them."""

import pytest
import srsly
from data_paths import ROOT
from spacy.util import load_config

from spacy_convkernels.cli import main
from spacy_convkernels.configs import config_path, names, project_names, project_path, summary
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


def test_project_lists_the_projects_and_writes_one_out(tmp_path, capsys):
    assert project_names() == ["relations"]
    assert main(["project"]) == 0
    assert capsys.readouterr().out.split()[:1] == ["relations"]
    assert main(["project", "relations", "-o", str(tmp_path / "mine")]) == 0
    for name in ("project.yml", "README.md"):
        assert (tmp_path / "mine" / name).read_bytes() == (project_path("relations") / name).read_bytes()
    assert main(["project", "relations"]) == 1
    assert "-o/--output is required" in capsys.readouterr().err


def test_the_relations_project_is_a_weasel_project_whose_workflows_train_a_shipped_config(tmp_path):
    from weasel.util import load_project_config

    project = load_project_config(project_path("relations"))
    commands = {command["name"]: command for command in project["commands"]}
    assert project["workflows"]["all"] == ["config", "train", "evaluate", "curve", "package"]
    assert set(project["workflows"]["all-spacy"]) <= set(commands)
    assert project["vars"]["config"] in names()
    raw = srsly.read_yaml(project_path("relations") / "project.yml")
    for command in raw["commands"]:  # weasel joins two list items that are each a variable into one
        deps = [dep.startswith("${") and dep.endswith("}") for dep in command.get("deps", [])]
        assert not any(a and b for a, b in zip(deps, deps[1:])), command["name"]
    assert "spacy_convkernels config" in commands["config"]["script"][0]
