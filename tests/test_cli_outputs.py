"""The command line never loses a user's data: an output that is an input (or another
output) is refused before any work, and a failed or interrupted run leaves an earlier
output byte-identical and no partial file."""

import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from data_paths import CORPORA
from interrupts import default_sigint

from spacy_convkernels.cli import main
from spacy_convkernels.errors import InvalidParameterError
from spacy_convkernels.outputs import check_outputs, replacing

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
STANDOFF = CORPORA / "bionlp-st-2013-ge-sample"
PARSES = CORPORA / "sample-parses" / "parses.spacy"


def snapshot(directory) -> dict:
    """Every file under ``directory`` and its bytes."""
    return {path.relative_to(directory): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()}


@pytest.fixture
def workspace(tmp_path):
    shutil.copy(SAMPLE, tmp_path / "small.klp.gz")
    shutil.copytree(STANDOFF, tmp_path / "standoff")
    shutil.copy(PARSES, tmp_path / "parses.spacy")
    assert main(["gram", str(tmp_path / "small.klp.gz"), str(tmp_path / "G.npy"), "--quiet"]) == 0
    (tmp_path / "trees.txt").write_text("(S (NP a) (VP b))\n(S (NP c))\n", encoding="utf-8")
    assert (
        main(
            ["nystroem", "fit", str(tmp_path / "trees.txt"), str(tmp_path / "m.npz"), "--n-components", "2", "--quiet"]
        )
        == 0
    )
    return tmp_path


@pytest.mark.parametrize(
    "command, message",
    [
        (["trees", "{w}/trees.txt", "--model", "en_core_web_sm", "-o", "{w}/trees.txt"], "is the input input"),
        (["trees", "{w}/parses.spacy", "-o", "{w}/./parses.spacy"], "is the input input"),
        (["gram", "{w}/trees.txt", "{w}/trees.txt"], "output {w}/trees.txt is the input input"),
        (["gram", "{w}/trees.txt", "{w}/G.npy", "--against", "{w}/G.npy"], "is the input --against"),
        (["convert", "{w}/small.klp.gz", "{w}/small.klp.gz"], "is the input input"),
        (["convert", "{w}/small.klp.gz", "{w}/out.spacy", "--dev", "{w}/out.spacy"], "are the same file"),
        (["convert", "{w}/small.klp.gz", "{w}/out.spacy", "--dev", "{w}/./out.spacy"], "are the same file"),
        (
            ["convert", "--format", "standoff", "{w}/standoff", "{w}/o.spacy", "--dev", "{w}/o.spacy"],
            "are the same file",
        ),
        (["convert", "{w}/small.klp.gz", "{w}/standoff"], "is a directory"),
        (["nystroem", "fit", "{w}/trees.txt", "{w}/trees.txt"], "is the input input"),
        (["nystroem", "transform", "{w}/m.npz", "{w}/trees.txt", "{w}/m.npz"], "is the input model"),
        (["explain", "0", "1", "--corpus", "{w}/trees.txt", "-o", "{w}/trees.txt"], "is the input --corpus"),
        (["lexicon", "{w}/standoff", "{w}/standoff"], "is inside the input train {w}/standoff"),
    ],
)
def test_an_output_over_an_input_is_refused_before_any_work(workspace, capsys, command, message):
    before = snapshot(workspace)
    command = [part.format(w=workspace) for part in command]
    assert main(command) == 1
    err = capsys.readouterr().err.strip()
    assert message.format(w=workspace) in err and "\n" not in err, err
    assert snapshot(workspace) == before


def test_a_failed_run_leaves_the_earlier_output_as_it_was(workspace, capsys):
    before = snapshot(workspace)
    bad_vectors = workspace / "vectors.txt"
    bad_vectors.write_text("not vectors\n", encoding="utf-8")
    command = ["gram", str(workspace / "small.klp.gz"), str(workspace / "G.npy"), "--kernel", "sptk"]
    assert main([*command, "--vectors", str(bad_vectors), "--representation", "lct", "--quiet"]) == 1
    assert "vectors.txt" in capsys.readouterr().err
    overflow = ["gram", str(workspace / "small.klp.gz"), str(workspace / "G.npy"), "--lam", "1e200", "--no-normalize"]
    assert main([*overflow, "--quiet"]) == 1
    assert "overflow" in capsys.readouterr().err
    after = snapshot(workspace)
    del after[bad_vectors.relative_to(workspace)]
    assert after == before  # G.npy untouched, no temporary file left


@pytest.mark.slow
def test_an_interrupted_run_leaves_the_earlier_output_and_no_partial_file(workspace):
    """Ctrl-C (SIGINT) in the middle of a long Gram: exit 130, the earlier G.npy intact, no temporary file."""
    many = workspace / "many.txt"
    wide = "(S " + " ".join(f"(A{i % 7} (B{i % 5} x))" for i in range(60)) + ")"
    many.write_text((wide + "\n") * 3000, encoding="utf-8")
    before = snapshot(workspace)
    process = subprocess.Popen(
        [sys.executable, "-m", "spacy_convkernels", "gram", str(many), str(workspace / "G.npy"), "--quiet"],
        stderr=subprocess.PIPE,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 120
    while not list(workspace.glob(".G.npy.*")) and time.monotonic() < deadline:  # the Gram has started
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.05)
    time.sleep(0.5)
    assert process.poll() is None, "the Gram finished before the interruption; make it larger"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert snapshot(workspace) == before


def test_outputs_are_written_under_their_own_name(workspace):
    target = workspace / "v.bin"
    assert main(["nystroem", "transform", str(workspace / "m.npz"), str(workspace / "trees.txt"), str(target)]) == 0
    assert target.exists() and not (workspace / "v.bin.npy").exists()
    assert np.load(target).shape == (2, 2)
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def test_replacing_renames_on_success_only(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("earlier", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with replacing(target) as temporary:
            temporary.write_text("partial", encoding="utf-8")
            raise RuntimeError("failed")
    assert target.read_text(encoding="utf-8") == "earlier" and sorted(tmp_path.iterdir()) == [target]
    with replacing(target) as temporary:
        assert temporary.parent == tmp_path and temporary.suffix == ".txt"
        temporary.write_text("new", encoding="utf-8")
    assert target.read_text(encoding="utf-8") == "new" and sorted(tmp_path.iterdir()) == [target]


def test_check_outputs_sees_links_and_spellings(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("x", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(source)
    with pytest.raises(InvalidParameterError, match="is the input"):
        check_outputs(inputs={"input": source}, outputs={"output": tmp_path / "link.txt"})
    with pytest.raises(InvalidParameterError, match="same file"):
        check_outputs(inputs={}, outputs={"a": tmp_path / "new.txt", "b": tmp_path / "sub" / ".." / "new.txt"})
    check_outputs(inputs={"input": source, "--labels": None}, outputs={"output": tmp_path / "other.txt"})


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
