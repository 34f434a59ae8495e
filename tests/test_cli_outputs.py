"""The command line never loses a user's data: an output that is an input, lies in an
input folder or is another output is refused before any work; a failed, interrupted or
terminated run, or one on a full disk, leaves every earlier output byte-identical and no
partial or temporary file; special files (devices, FIFOs, standard output) are written
into, never replaced; a rewritten output keeps its permissions."""

import contextlib
import errno
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import spacy
from data_paths import CORPORA, require_extra
from interrupts import default_sigint, python_sigint

from spacy_convkernels.cli import _Terminated, _terminating_signals, main
from spacy_convkernels.errors import InvalidParameterError, OutputFileError
from spacy_convkernels.utils import outputs as outputs_module
from spacy_convkernels.utils.outputs import check_outputs, pipeline_path, replacing, replacing_all

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
    (tmp_path / "texts.txt").write_text("A text.\n", encoding="utf-8")
    (tmp_path / "model" / "sub").mkdir(parents=True)  # a pipeline folder: refused before it is loaded
    (tmp_path / "model" / "meta.json").write_text("{}", encoding="utf-8")
    (tmp_path / "model" / "sub" / "cfg").write_text("{}", encoding="utf-8")
    (tmp_path / "rel.jsonl").write_text("", encoding="utf-8")
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
        (["lexicon", "{w}/standoff", "{w}/standoff"], "is in the input folder {w}/standoff (train)"),
        (
            ["convert", "--format", "standoff", "{w}/standoff/", "{w}/standoff/PMC-2626671-00-TIAB.txt"],
            "output {w}/standoff/PMC-2626671-00-TIAB.txt is in the input folder {w}/standoff (input)",
        ),
        (
            ["trees", "{w}/texts.txt", "--model", "{w}/model/", "-o", "{w}/model/meta.json"],
            "--output {w}/model/meta.json is in the input folder {w}/model (--model)",
        ),
        (["trees", "{w}/texts.txt", "--model", "{w}/model", "-o", "{w}/model/sub/cfg"], "is in the input folder"),
        (["trees", "{w}/texts.txt", "--model", "{w}/model", "-o", "{w}/model/new/x.txt"], "is in the input folder"),
        (["trees", "{w}/texts.txt", "--model", "{w}/model", "-o", "{w}/to_meta.json"], "is in the input folder"),
        (["trees", "{w}/texts.txt", "--model", "{w}/model", "-o", "{w}/hard_meta.json"], "is in the input folder"),
        (["trees", "{w}/texts.txt", "--model", "{w}/to_model", "-o", "{w}/model/meta.json"], "is in the input folder"),
        (
            ["evaluate", "relations", "{w}/model/", "{w}/rel.jsonl", "--output", "{w}/model/meta.json"],
            "--output {w}/model/meta.json is in the input folder {w}/model (model)",
        ),
        (["lexicon", "{w}/standoff", "{w}/lex", "--model", "{w}/lex"], "is in the input folder {w}/lex (--model)"),
    ],
)
def test_an_output_over_an_input_is_refused_before_any_work(workspace, capsys, command, message):
    (workspace / "to_meta.json").symlink_to(workspace / "model" / "meta.json")
    os.link(workspace / "model" / "meta.json", workspace / "hard_meta.json")
    (workspace / "to_model").symlink_to(workspace / "model")
    (workspace / "lex").mkdir()
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


def test_pipeline_path_finds_a_folder_or_an_installed_package(tmp_path, monkeypatch):
    import spacy_convkernels

    monkeypatch.chdir(tmp_path)  # not the source tree, where spacy_convkernels is a folder

    assert pipeline_path(str(tmp_path)) == tmp_path
    assert pipeline_path("spacy_convkernels") == Path(spacy_convkernels.__file__).parent
    assert pipeline_path("no_such_package_xyz") is None and pipeline_path("en/core") is None
    assert pipeline_path(None) is None


def test_outputs_of_a_run_are_put_in_place_together_or_not_at_all(workspace, capsys):
    """``convert q.klp c.spacy --dev bad/dev.spacy`` with ``bad`` a file: c.spacy untouched."""
    assert main(["convert", str(workspace / "small.klp.gz"), str(workspace / "c.spacy")]) == 0
    (workspace / "bad").write_text("a file, not a folder", encoding="utf-8")
    before = snapshot(workspace)
    command = ["convert", str(workspace / "small.klp.gz"), str(workspace / "c.spacy")]
    assert main([*command, "--dev", str(workspace / "bad" / "dev.spacy"), "--dev-every", "3"]) == 1
    err = capsys.readouterr().err.strip()
    assert f"cannot write --dev {workspace}/bad/dev.spacy" in err and "\n" not in err, err
    assert snapshot(workspace) == before


@pytest.mark.slow
def test_lexicon_on_a_full_disk_keeps_both_earlier_files(workspace, capsys, monkeypatch):
    """The disk fills while triggers.jsonl, the last file, is written: proteins.jsonl keeps its earlier bytes too."""
    from spacy_convkernels.corpora import lexicon

    out = workspace / "lex"
    assert main(["lexicon", str(workspace / "standoff"), str(out), "--min-count", "2"]) == 0
    before = snapshot(workspace)

    class Full:
        def __init__(self, path, *args, **kwargs):
            self.file = open(path, *args, **kwargs)
            self.full = "triggers" in Path(path).name

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def writelines(self, lines):
            if self.full:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.file.writelines(lines)

    monkeypatch.setattr(lexicon, "open", Full, raising=False)
    assert main(["lexicon", str(workspace / "standoff"), str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert "No space left on device" in err and f"{out}/proteins.jsonl" in err and "\n" not in err, err
    assert snapshot(workspace) == before


def test_replacing_all_removes_every_temporary_and_names_what_was_replaced(tmp_path, monkeypatch):
    a, b, blocker = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "file"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    with pytest.raises(OutputFileError, match="cannot write b .*: File exists"):
        with replacing_all({"a": a, "b": blocker / "b.txt"}):
            pass
    blocker.unlink()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(KeyboardInterrupt):
        with replacing_all({"a": a, "b": b, "none": None}) as temporaries:
            assert set(temporaries) == {"a", "b"}
            temporaries["a"].write_text("A", encoding="utf-8")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    replace = os.replace

    def second_fails(source, target):
        if Path(target).name == "b.txt":
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        replace(source, target)

    monkeypatch.setattr(os, "replace", second_fails)
    with pytest.raises(OutputFileError, match=f"cannot put b {b} in place: .*link.* \\(a {a} already replaced\\)"):
        with replacing_all({"a": a, "b": b}) as temporaries:
            temporaries["a"].write_text("A", encoding="utf-8")
            temporaries["b"].write_text("B", encoding="utf-8")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.txt"]


def test_a_rewritten_output_keeps_its_mode_and_a_link_stays_a_link(workspace):
    target = workspace / "G.npy"
    target.chmod(0o600)
    assert main(["gram", str(workspace / "trees.txt"), str(target), "--quiet"]) == 0
    assert np.load(target).shape == (2, 2) and stat.S_IMODE(target.stat().st_mode) == 0o600
    link = workspace / "link.npy"
    link.symlink_to("G.npy")
    target.chmod(0o640)
    assert main(["gram", str(workspace / "small.klp.gz"), str(link), "--quiet"]) == 0
    assert link.is_symlink() and os.readlink(link) == "G.npy"
    assert np.load(target).shape == (60, 60) and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not list(workspace.glob(".*"))


def test_a_fifo_is_written_into_not_replaced(workspace):
    expected = workspace / "expected.txt"
    assert main(["trees", str(workspace / "parses.spacy"), "-o", str(expected), "--quiet"]) == 0
    fifo = workspace / "trees.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main(["trees", str(workspace / "parses.spacy"), "-o", str(fifo), "--quiet"]) == 0
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received == [expected.read_bytes()] and len(received[0]) > 1000
    assert not list(workspace.glob(".*"))


@pytest.mark.slow
def test_a_character_device_is_written_into_not_replaced(workspace, tmp_path_factory, monkeypatch, capsys):
    """A /dev/null made in the workspace when root may make one (so that a failure could
    not replace the machine's), else /dev/null itself (which a user cannot replace)."""
    device = workspace / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError:
        if os.geteuid() == 0:
            pytest.skip("root here, and a device node cannot be made: /dev/null itself is not risked")
        device = Path("/dev/null")
    spacy.blank("en")  # the first pipeline imports torch, whose inductor makes a folder in TMPDIR
    scratch = tmp_path_factory.mktemp("tmpdir")
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # TMPDIR, for this process
    assert main(["convert", str(workspace / "small.klp.gz"), str(device)]) == 0, capsys.readouterr().err
    assert stat.S_ISCHR(os.lstat(device).st_mode) and os.lstat(device).st_rdev == os.makedev(1, 3)
    assert list(scratch.iterdir()) == []  # the temporary file is gone


@contextlib.contextmanager
def standard_output(descriptor: int):
    """This process's file descriptor 1 made ``descriptor`` (a pipe's end, a file opened by
    a shell's ``>>``) while the block runs, ``sys.stdout`` writing to it, as a new process
    started with it would have them: a stray print lands among the bytes."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(descriptor, 1)
    try:
        with open(1, "w", closefd=False) as stdout, contextlib.redirect_stdout(stdout):
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


@pytest.mark.parametrize("spelling", ["/dev/stdout", "link"])
def test_standard_output_gets_the_bytes(workspace, spelling):
    """``-o /dev/stdout`` (or a link to it) writes to standard output: a pipe, or a file the
    shell opened for appending, whose earlier lines stay."""
    if spelling == "/dev/stdout" and os.geteuid() == 0:
        pytest.skip("root: a failure would replace the machine's /dev/stdout; the link tests the same code")
    expected = workspace / "expected.txt"
    assert main(["trees", str(workspace / "parses.spacy"), "-o", str(expected), "--quiet"]) == 0
    output = "/dev/stdout"
    if spelling == "link":
        output = str(workspace / "out.txt")
        os.symlink("/dev/stdout", output)
    command = ["trees", str(workspace / "parses.spacy"), "-o", output, "--quiet"]
    read_end, write_end = os.pipe()
    received = []
    reader = threading.Thread(target=lambda: received.append(os.fdopen(read_end, "rb").read()), daemon=True)
    reader.start()
    with standard_output(write_end):
        os.close(write_end)
        assert main(command) == 0
    reader.join(timeout=60)
    assert received == [expected.read_bytes()]
    log = workspace / "log.txt"
    log.write_bytes(b"earlier\n")
    with open(log, "ab") as appended, standard_output(appended.fileno()):
        assert main(command) == 0
    assert log.read_bytes() == b"earlier\n" + expected.read_bytes()
    assert not list(workspace.glob(".*"))


@pytest.mark.slow
def test_a_docbin_to_standard_output_is_not_mixed_with_the_summary(workspace, capfdbinary):
    """``convert X /dev/stdout > c.spacy`` (through a link here; this process's standard
    output is the file capfdbinary opened, as a shell's ``>`` opens one): the summary line
    goes to standard error, standard output holds the DocBin alone."""
    expected = workspace / "expected.spacy"
    assert main(["convert", str(workspace / "small.klp.gz"), str(expected)]) == 0
    link = workspace / "out.spacy"
    link.symlink_to("/dev/stdout")
    capfdbinary.readouterr()
    assert main(["convert", str(workspace / "small.klp.gz"), str(link)]) == 0
    out, err = capfdbinary.readouterr()
    assert out == expected.read_bytes() and b"60 questions to" in err
    assert link.is_symlink() and not list(workspace.glob(".*"))


def limit_file_size(size: int, *, ignore_sigxfsz: bool = True):
    """``preexec_fn``: files larger than ``size`` bytes cannot be written (a full disk
    without root); with SIGXFSZ ignored a write past the limit fails with EFBIG."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        if ignore_sigxfsz:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return limit


def slow(*values):
    """One case of a parametrized test, in the slow lane."""
    return pytest.param(*values, marks=pytest.mark.slow)


# every command writing a file: the limit set on this process for the run of main (the
# test below sets it on a new process, where SIGXFSZ keeps its default action)
FILE_SIZE_CASES = [
    (["gram", "{w}/small.klp.gz", "{w}/G.npy", "--quiet"], "output {w}/G.npy"),
    (["nystroem", "transform", "{w}/m.npz", "{w}/small.klp.gz", "{w}/v.npy", "--quiet"], "output {w}/v.npy"),
    (["convert", "{w}/small.klp.gz", "{w}/c.spacy", "--dev", "{w}/d.spacy"], "output {w}/c.spacy"),
    (["trees", "{w}/parses.spacy", "-o", "{w}/t.txt", "--quiet"], "--output {w}/t.txt"),
    (["lexicon", "{w}/standoff", "{w}/lex"], "{w}/lex/proteins.jsonl"),
    (["nystroem", "fit", "{w}/small.klp.gz", "{w}/m.npz", "--n-components", "5", "--quiet"], "model {w}/m.npz"),
    (["explain", "(S (NP a) (VP b))", "(S (NP a))", "-o", "{w}/e.html"], "--output {w}/e.html"),
    slow(["plot", "heatmap", "{w}/small.klp.gz", "{w}/h.pdf"], "output {w}/h.pdf"),  # matplotlib's PDF writer
]


@pytest.mark.slow  # two runs of a new process
def test_a_file_size_limit_in_a_new_process_is_one_line_not_a_core_dump(workspace):
    """As on a full disk, in a new process whose SIGXFSZ keeps its default action (a core
    dump), as a shell leaves it: status 1, one line naming the output, earlier outputs and
    inputs byte-identical, no temporary file."""
    command = [sys.executable, "-m", "spacy_convkernels", "gram", f"{workspace}/small.klp.gz", f"{workspace}/G.npy"]
    assert subprocess.run([*command, "--quiet"], capture_output=True).returncode == 0  # the earlier output
    before = snapshot(workspace)
    done = subprocess.run(
        [*command, "--quiet"], capture_output=True, text=True, preexec_fn=limit_file_size(600, ignore_sigxfsz=False)
    )
    err = done.stderr.strip()
    assert done.returncode == 1, err
    assert "File too large" in err and f"output {workspace}/G.npy" in err and "\n" not in err, err
    assert snapshot(workspace) == before


@pytest.mark.parametrize("command, output", FILE_SIZE_CASES)
def test_a_file_size_limit_in_this_process_is_one_line_and_leaves_the_earlier_outputs(
    workspace, capsys, command, output
):
    """As on a full disk: status 1, one line naming the output, earlier outputs and inputs
    byte-identical, no temporary file. The limit (SIGXFSZ ignored) is set on this process
    for the run of ``main``, then lifted (the soft limit goes back up to the hard one)."""
    if command[0] == "plot":
        require_extra("matplotlib", "plot")
    command = [part.format(w=workspace) for part in command]
    assert main(command) == 0  # the earlier outputs
    before = snapshot(workspace)
    capsys.readouterr()
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (600, hard))
    try:
        status = main(command)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
    err = capsys.readouterr().err.strip()
    assert status == 1, err
    assert "File too large" in err and output.format(w=workspace) in err and "\n" not in err, err
    assert snapshot(workspace) == before


@pytest.mark.skipif(
    shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode,
    reason="no unprivileged mount namespace here (unshare -rm), so no private tmpfs",
)
@pytest.mark.slow  # a new process in a new mount namespace
def test_gram_on_a_full_tmpfs_is_one_line_not_a_bus_error(tmp_path):
    """A 4 MB tmpfs (in a private mount namespace) and a 17 MB Gram: without the space
    reserved before mapping, the first write to the map was SIGBUS (exit 135)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    trees = tmp_path / "trees.txt"
    trees.write_text("(S (A x) (B y))\n" * 1500, encoding="utf-8")
    python = f"{sys.executable} -m spacy_convkernels"
    script = (
        f"mount -t tmpfs -o size=4m none {disk} && echo earlier > {disk}/G.npy && "
        f"{python} gram {trees} {disk}/G.npy --quiet; echo status=$?; ls -A {disk}; cat {disk}/G.npy"
    )
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True)
    assert done.stdout.split() == ["status=1", "G.npy", "earlier"], (done.stdout, done.stderr)
    err = done.stderr.strip()
    assert f"cannot write output {disk}/G.npy: No space left on device" in err and "\n" not in err, err


@pytest.mark.slow
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_run_leaves_the_earlier_output_and_no_temporary_file(workspace, number):
    """SIGTERM or SIGHUP in the middle of a long Gram: exit 128 + the signal, the earlier
    G.npy byte-identical, no temporary file."""
    many = workspace / "many.txt"
    wide = "(S " + " ".join(f"(A{i % 7} (B{i % 5} x))" for i in range(60)) + ")"
    many.write_text((wide + "\n") * 3000, encoding="utf-8")
    before = snapshot(workspace)
    command = [sys.executable, "-m", "spacy_convkernels", "gram", str(many), str(workspace / "G.npy"), "--quiet"]
    # the signal's default action in the command, also when this run ignores it (under nohup,
    # whose ignored SIGHUP the command keeps, by design): set before exec, which keeps it
    default_action = (
        f"import os, signal; signal.signal({int(number)}, signal.SIG_DFL); os.execv({command[0]!r}, {command!r})"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", default_action],
        stderr=subprocess.PIPE,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    deadline = time.monotonic() + 120
    while not list(workspace.glob(".G.npy.*")) and time.monotonic() < deadline:  # the Gram has started
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.05)
    time.sleep(0.5)
    assert process.poll() is None, "the Gram finished before the signal; make it larger"
    process.send_signal(number)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + number, err
    assert f"terminated by {signal.Signals(number).name}" in err.decode()
    assert snapshot(workspace) == before


def _signal_myself(number: int) -> None:
    """Send ``number`` to this process and give Python a few bytecodes to run its handler."""
    os.kill(os.getpid(), number)
    for _ in range(100):
        pass


def test_a_signal_that_a_finalizer_swallows_still_terminates_quietly(capsys):
    """Python runs the handler wherever the main thread is: inside ``__del__`` its exception
    would be printed as "Exception ignored" and the run would go on (tools/fuzz.py sigterm)."""

    class SignalledWhenFreed:
        def __del__(self):
            _signal_myself(signal.SIGTERM)

    went_on = []
    with pytest.raises(_Terminated):
        with _terminating_signals():
            SignalledWhenFreed()  # freed at once
            went_on.append(True)
    assert went_on == [True] and capsys.readouterr().err == ""


def test_a_signal_that_python_wraps_in_another_error_still_terminates():
    """A handler's exception inside ``__set_name__`` reaches the caller as a RuntimeError."""

    class SignalledWhenNamed:
        def __set_name__(self, owner, name):
            _signal_myself(signal.SIGTERM)

    with pytest.raises(_Terminated) as raised:
        with _terminating_signals():

            class Owner:
                field = SignalledWhenNamed()

    assert isinstance(raised.value.__cause__, RuntimeError)


def test_no_temporary_file_is_left_when_a_signal_comes_as_it_is_made(tmp_path, monkeypatch):
    """A temporary file is listed for removal before it is made (tools/fuzz.py sigterm found
    one left when the signal came between the two). A signal delivered to another thread
    (OpenMP's) runs its handler in the main thread whatever it blocks: no signal mask helps."""
    make = outputs_module._make_temporary

    def made_then_interrupted(output):
        make(output)
        _signal_myself(signal.SIGINT)

    monkeypatch.setattr(outputs_module, "_make_temporary", made_then_interrupted)
    with python_sigint(), pytest.raises(KeyboardInterrupt):
        with replacing(tmp_path / "out.txt"):
            pass
    assert list(tmp_path.iterdir()) == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
