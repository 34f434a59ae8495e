"""The command line's help: light imports, --version, sub-subcommand help of its own, and
examples that run on the samples installed with the package."""

import contextlib
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
from importlib import metadata
from string import Template

import pytest
from data_paths import ROOT

from spacy_convkernels.approx.nystroem import LANDMARK_INITS
from spacy_convkernels.cli import COMMANDS, kernel_inputs, main, nystroem
from spacy_convkernels.data import SAMPLES, sample_path
from spacy_convkernels.structures.dependency import REPRESENTATIONS

HEAVY = ("spacy", "sklearn", "scipy", "thinc", "numpy", "spacy_convkernels.kernels")
SUBCOMMANDS = [
    ["nystroem", "fit"],
    ["nystroem", "transform"],
    ["evaluate", "relations"],
    ["evaluate", "qc"],
    ["evaluate", "bionlp"],
    ["plot", "heatmap"],
    ["plot", "relations"],
]
WRITING = [["convert"], ["trees"], ["gram"], ["nystroem", "fit"], ["nystroem", "transform"], ["explain"]]
WRITING += [["evaluate", "relations"], ["lexicon"], ["plot", "heatmap"], ["plot", "relations"], ["config"], ["project"]]
WRITING += [["explain-relation"]]
NOT_WRITING = [["demo"], ["evaluate", "qc"], ["evaluate", "bionlp"]]
SAMPLE_VARIABLE = re.compile(r"^(\w+)=\$\(python -m spacy_convkernels demo --sample ([\w-]+)\)$")


def help_text(command: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stopped:
        main([*command, "--help"])
    assert stopped.value.code == 0
    return out.getvalue()


def examples(text: str) -> list[list[str]]:
    """The example command lines of a help text, sample variables replaced by their paths,
    as argument lists after ``python -m spacy_convkernels``."""
    variables, found = {}, []
    for line in text.splitlines():
        line = line.strip()
        if defined := SAMPLE_VARIABLE.match(line):
            variables[defined.group(1)] = str(sample_path(defined.group(2)))
        elif line.startswith("python -m spacy_convkernels "):
            found.append(shlex.split(Template(line).substitute(variables))[3:])
    return found


def test_importing_the_command_line_and_asking_help_import_no_spacy_sklearn_or_engine():
    """In a fresh process: ``import spacy_convkernels.cli``, then every command's help."""
    script = f"""
import contextlib, io, json, sys
from spacy_convkernels.cli import COMMANDS, main
loaded = {{"import": [m for m in {HEAVY!r} if m in sys.modules]}}
for command in [[]] + [[name] for name in COMMANDS] + {SUBCOMMANDS!r} + [["--version"]]:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(command if command == ["--version"] else [*command, "--help"])
        except SystemExit:
            pass
loaded["help"] = [m for m in {HEAVY!r} if m in sys.modules]
print(json.dumps(loaded))
"""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=environment)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"import": [], "help": []}


def test_public_names_still_import_from_the_package_root():
    import spacy_convkernels
    from spacy_convkernels import Tree

    assert Tree is spacy_convkernels.structures.Tree and "Tree" in dir(spacy_convkernels)
    assert all(getattr(spacy_convkernels, name) is not None for name in spacy_convkernels.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Frobnicate'"):
        spacy_convkernels.Frobnicate  # noqa: B018


def test_version_is_the_installed_distributions(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.strip() == f"spacy-convkernels {metadata.version('spacy-convkernels')}"


@pytest.mark.parametrize("command", SUBCOMMANDS, ids=" ".join)
def test_subcommand_help_is_its_own_not_the_parents(command):
    parent, own = help_text(command[:1]), help_text(command)
    first_paragraph = COMMANDS[command[0]].__doc__.split("\n\n")[2]  # after the summary and the examples
    assert first_paragraph.splitlines()[0] in parent and first_paragraph.splitlines()[0] not in own
    assert COMMANDS[command[0]].__doc__.splitlines()[0] not in own
    assert f"python -m spacy_convkernels {' '.join(command)} " in own


def test_every_command_spells_its_output_and_its_seed_one_way():
    """``-o/--output`` on every command that writes, ``--seed`` for every seed; the
    earlier spellings (a positional output, ``--random-state``) in no help."""
    commands = [[name] for name in COMMANDS if name not in ("nystroem", "evaluate", "plot")] + SUBCOMMANDS
    assert sorted(WRITING + NOT_WRITING) == sorted(commands)  # a new command is classified here
    for command in commands:
        text = help_text(command)
        assert bool(re.search(r"-o (\w+), --output \1\s", text)) == (command in WRITING), command
        assert set(re.findall(r"--[\w-]*(?:seed|random)[\w-]*", text)) <= {"--seed"}, command
        positionals = text.split("positional arguments:")[1].split("options:")[0] if "positional" in text else ""
        assert "write" not in positionals, command
    assert "--seed SEED" in help_text(["nystroem", "fit"]) and "--seed SEED" in help_text(["plot", "heatmap"])


def test_choices_spelled_out_for_the_help_equal_the_librarys():
    assert kernel_inputs.REPRESENTATIONS == REPRESENTATIONS
    assert nystroem.LANDMARK_INITS == LANDMARK_INITS


def test_demo_lists_the_installed_samples(capsys):
    assert main(["demo", "--list-samples"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [name for name, *_ in rows] == list(SAMPLES)
    assert all(sample_path(name).exists() and path == str(sample_path(name)) for name, path, _ in rows)
    assert main(["demo", "--sample", "questions"]) == 0
    assert capsys.readouterr().out.strip().endswith("TREC_10.coarse.first60.klp.gz")


@pytest.mark.slow
def test_every_help_example_runs_on_the_installed_samples(tmp_path, monkeypatch, capsys):
    """Every command but the demo, config and project (which read no corpus) has an example on a
    sample; those that need no spaCy model (``--model``, the trained pipeline of
    ``evaluate relations`` and ``explain-relation``) run, in help order, in an empty directory."""
    monkeypatch.chdir(tmp_path)
    ran = set()
    for command in [[name] for name in COMMANDS if name != "demo"] + SUBCOMMANDS:
        text = help_text(command)
        on_a_sample = any(SAMPLE_VARIABLE.match(line.strip()) for line in text.splitlines())
        assert on_a_sample or command in (["config"], ["project"]), command
        for arguments in examples(text):
            trained = arguments[1:2] == ["relations"] or arguments[0] == "explain-relation"  # a trained pipeline
            needs_model = "--model" in arguments or trained
            if needs_model or (arguments[0] == "plot" and importlib.util.find_spec("matplotlib") is None):
                continue
            assert main(arguments) == 0, (arguments, capsys.readouterr().err)
            ran.add(arguments[0])
    assert ran >= set(COMMANDS) - {"demo", "plot", "explain-relation"}  # explain-relation: a trained pipeline
