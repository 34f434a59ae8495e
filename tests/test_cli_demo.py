"""python -m spacy_convkernels demo (and the README's start), and the help of every command."""

import os
import re
import shutil
import subprocess
import sys

import pytest
import spacy
from data_paths import ROOT, need_shared
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.util import load_config

from spacy_convkernels.cli import COMMANDS, demo_steps, main
from spacy_convkernels.components.relation_evaluation import evaluate_relations, relation_component
from spacy_convkernels.components.relation_extractor import RelationExtractor
from spacy_convkernels.configs import config_path
from spacy_convkernels.corpora import read_standoff
from spacy_convkernels.data.samples import DOCUMENTS, PARSES, TRAINING_DOCUMENTS
from spacy_convkernels.structures.relations import GoldRelations

SECTIONS = ["1. Trees", "2. Kernel values", "3. Nystroem vectors", "4. KLSH codes", "5. Text classifier"]
SECTIONS += ["6. Relation extraction"]
PARSE = ["TAG", "POS", "MORPH", "LEMMA", "DEP", "HEAD", "SENT_START"]


def start_block() -> list[str]:
    """The commands of the README's first fenced block (after cloning: install, demo, all
    the tests)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```sh\n(.*?)^```", text, re.M | re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]


def without_times(text: str) -> list[str]:
    return [re.sub(r"\(\d+\.\d+ s\)|in \d+\.\d+ s", "", line) for line in text.splitlines()[1:]]


def settings(block: dict, prefix: str = "") -> dict:
    """The settings of a config block, flattened (``model.candidates.max_distance``: 4)."""
    found = {}
    for key, value in block.items():
        found |= settings(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key: value}
    return found


@Language.component("test_cli_demo_stored_parse")
def stored_parse(doc: Doc) -> Doc:
    """The stored parse of the Doc's text (the parser of the held-out documents, for evaluate_relations)."""
    parsed = {d.text: d for d in DocBin().from_disk(PARSES).get_docs(doc.vocab)}[doc.text]
    assert [t.text for t in parsed] == [t.text for t in doc]
    return doc.from_array(PARSE, parsed.to_array(PARSE))


@pytest.mark.slow
def test_demo_summarizes_every_step_on_the_bundled_samples(monkeypatch, capsys):
    trained, batches = [], []
    relations, update = demo_steps._relations, Language.update

    def spy_relations(*args, **kwargs):
        trained.append(relations(*args, **kwargs))

    def spy_update(nlp, examples, **kwargs):
        batches.append(len(examples))
        return update(nlp, examples, **kwargs)

    monkeypatch.setattr(demo_steps, "_relations", spy_relations)
    monkeypatch.setattr(Language, "update", spy_update)
    assert main(["demo", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "parsed by en_core_web_md 3.8.0 (parses stored with the package" in out.splitlines()[0]
    positions = [out.index(section) for section in SECTIONS]
    assert positions == sorted(positions) and out.rstrip().splitlines()[-1].startswith("Done in")
    assert "GRCT: (SYNT##root" in out and "60 x 60 Gram" in out and "60 x 20 from 20 landmarks" in out
    assert re.search(r"held-out accuracy \d+/15 \(always \w+, the majority class: \d+/15\)", out)
    (nlp,) = trained
    relations_step_trained_the_component(out.split("6. Relation extraction")[1], nlp, batches)


def relations_step_trained_the_component(out: str, nlp: Language, batches: list[int]) -> None:
    """The demo's step 6 trained the kernel_relations of the shipped GE config with
    nlp.update and printed its scorer's figures on the held-out documents and predictions
    at or above its threshold."""
    config = load_config(config_path("bionlp_relations"), interpolate=True)
    pipe = relation_component(nlp)
    assert nlp.pipe_names == ["kernel_relations"] and isinstance(pipe, RelationExtractor)
    shipped = settings(config["components"]["kernel_relations"])
    assert shipped.pop("factory") == "kernel_relations"
    assert shipped.items() <= settings(nlp.config["components"]["kernel_relations"]).items()
    encoders = [node.attrs["encoder"] for node in pipe.model.walk() if "encoder" in node.attrs]
    assert encoders and all(encoder.fitted for encoder in encoders) and pipe.cfg["chosen_threshold"] is not None
    assert set(pipe.labels) >= {"Binding", "Gene_expression", "Positive_regulation"}
    training = len(list(read_standoff(TRAINING_DOCUMENTS)))
    size = config["training"]["batcher"]["size"]
    assert training == 18 and batches == [size] * (training // size) * demo_steps.REFIT_EPOCHS
    epochs = re.search(r"(\d+) epochs of nlp\.update \(the config's refit\), loss by epoch: ([\d ]+)\n", out)
    assert int(epochs[1]) == demo_steps.REFIT_EPOCHS == len(epochs[2].split())

    references = list(read_standoff(DOCUMENTS, nlp))
    nlp.add_pipe("test_cli_demo_stored_parse", first=True)
    expected = evaluate_relations(nlp, references, entities="gold", triggers="gold")
    gold = sum(len(GoldRelations(reference).units()) for reference in references)
    printed = re.search(r"precision (\S+), recall (\S+), F1 (\S+) \((\d+) gold interactions\)", out)
    assert printed.groups() == (*(f"{expected[f'rel_micro_{x}']:.2f}" for x in "prf"), str(gold))
    counts = re.search(r"(\d+) predicted \((.*), chosen at .*\), (\d+) right; (\d+) of the (\d+) gold", out)
    predicted, right, missed = int(counts[1]), int(counts[3]), int(counts[4])
    thresholds = pipe.thresholds
    low, high = f"{min(thresholds.values()):.2f}", f"{max(thresholds.values()):.2f}"
    assert counts[2] == (f"score >= {low}" if low == high else f"each label at or above its threshold, {low} to {high}")
    assert int(counts[5]) == gold and predicted > 0
    assert f"{right / predicted:.2f}" == printed[1] and f"{(gold - missed) / gold:.2f}" == printed[2]
    shown = re.findall(r"^   (\d\.\d\d) (right|wrong)  (\w+), (.*): '\.\.\. .*\[(.+)\].* \.\.\.'$", out, re.M)
    assert len(shown) == min(demo_steps.PREDICTIONS_SHOWN, predicted)
    for score, _, label, _, _ in shown:
        assert label in pipe.labels and float(score) >= round(thresholds[label], 2) - 0.005


@pytest.mark.shared
def test_stored_parses_are_the_md_models(capsys):
    """With the md model parsing live, every figure is the same as with the stored parses."""
    model = need_shared("models/en_core_web_md-3.8.0")
    assert main(["demo"]) == 0
    stored = capsys.readouterr().out
    assert main(["demo", "--model", str(model)]) == 0
    live = capsys.readouterr().out
    assert "(en_core_web_md 3.8.0)" in live.splitlines()[0]
    assert without_times(live) == without_times(stored)


def test_the_readme_starts_with_install_demo_and_tests():
    install, demo, tests = start_block()  # the exact lines: tests/test_readme.py
    assert "pip install -e" in install and tests.startswith("python -m pytest -n 2")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for marker in ("slow", "shared"):  # registered (and --strict-markers rejects any other)
        assert re.search(rf'^    "{marker}: ', pyproject, re.M) and "--strict-markers" in pyproject
    assert demo == "spacy-convkernels demo"
    assert re.search(r'^\[project\.scripts\]\nspacy-convkernels = "spacy_convkernels\.cli:main"$', pyproject, re.M)


@pytest.mark.slow
def test_the_readme_demo_command_runs():
    """The README's demo line, run as the installed script where there is one (CI installs
    it), else as the module the script calls; either way on this source tree."""
    program, *arguments = start_block()[1].split()
    script = shutil.which(program)
    if script is None and os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{program} is not installed, though CI=true installs the package")
    command = [script, *arguments] if script else [sys.executable, "-m", "spacy_convkernels", *arguments]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=ROOT.parent)
    assert result.returncode == 0, result.stderr[-2000:]
    assert all(section in result.stdout for section in SECTIONS)


@pytest.mark.slow
def test_demo_bad_options_are_one_line_and_status_1(tmp_path, capsys):
    spacy.blank("en").to_disk(tmp_path / "blank")
    cases = [
        (["--model", str(tmp_path / "absent")], "Can't find model"),
        (["--model", str(tmp_path / "blank")], "has no parser"),
        (["--n-process", "0"], "--n-process must be positive, or -1 for every core; got 0"),
        (["--n-jobs", "0"], "n_jobs must be a non-zero integer or None, got 0"),
    ]
    for options, message in cases:
        assert main(["demo", *options]) == 1
        captured = capsys.readouterr()
        err = captured.err.strip()
        assert err.startswith("spacy-convkernels demo: error:") and message in err and "\n" not in err
        assert "Kernel values" not in captured.out  # stopped before the work


@pytest.mark.parametrize(
    "command",
    [[name] for name in COMMANDS]
    + [["nystroem", "fit"], ["nystroem", "transform"], ["evaluate", "qc"], ["evaluate", "bionlp"]],
    ids=" ".join,
)
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*command, "--help"])
    assert stopped.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: spacy-convkernels {' '.join(command)}") and "python -m spacy_convkernels" in out


def test_no_command_or_an_unknown_one_is_a_usage_error(capsys):
    for argv in ([], ["frobnicate"]):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2 and "usage: spacy-convkernels" in capsys.readouterr().err
