"""No command loses a user's data through what it reads beside its inputs or through a
link (issue 62, points 1, 2, 5 and two minor cases): a standoff document's siblings and a
vector matrix's keys are inputs too; so is what an input folder's symbolic links lead to;
an output that is a dangling link, or another user's link in a shared folder, is not
followed; an output's name may be as long as the file system takes; a read-only output is
not replaced silently; a full temporary folder is named as the culprit."""

import errno
import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest
from data_paths import CORPORA

from spacy_convkernels.cli import main
from spacy_convkernels.errors import InvalidParameterError, OutputFileError
from spacy_convkernels.utils import outputs as outputs_module
from spacy_convkernels.utils.outputs import check_outputs, replacing, replacing_all

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
VECTORS = CORPORA / "trec-qc-kelp-sample" / "wordspace_md300.first60.txt.gz"
STANDOFF = CORPORA / "bionlp-st-2013-ge-sample"
TIAB = "PMC-2626671-00-TIAB"


def snapshot(directory: Path) -> dict:
    return {p.relative_to(directory): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def workspace(tmp_path):
    shutil.copytree(STANDOFF, tmp_path / "c3")
    (tmp_path / "trees.txt").write_text("(S (NP a) (VP b))\n(S (NP c))\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "given, output",
    [(f"c3/{TIAB}.txt", f"c3/{TIAB}.a2"), (f"c3/{TIAB}.a1", f"c3/{TIAB}.txt"), (f"c3/{TIAB}.a2", f"c3/{TIAB}.a1")],
)
def test_a_standoff_documents_siblings_are_inputs(workspace, capsys, given, output):
    before = snapshot(workspace)
    command = ["convert", "--format", "standoff", str(workspace / given), str(workspace / output)]
    assert main(command) == 1
    assert (
        f"output {workspace / output} is the input input {workspace / output}; it would be" in capsys.readouterr().err
    )
    assert snapshot(workspace) == before


@pytest.mark.slow
def test_a_vector_matrixs_keys_are_an_input(workspace, capsys):
    from spacy_convkernels.kernels.vectors import WordVectors

    table = WordVectors.load(VECTORS)
    np.save(workspace / "v.npy", table.matrix)
    keys = sorted(table.rows, key=table.rows.__getitem__)
    rows = [table.rows[key] for key in keys]
    np.save(workspace / "v.npy", table.matrix[rows])
    (workspace / "v.keys").write_text("\n".join(keys) + "\n", encoding="utf-8")
    before = snapshot(workspace)
    small = workspace / "small.klp.gz"
    shutil.copy(SAMPLE, small)
    before[Path("small.klp.gz")] = small.read_bytes()
    sptk = ["--kernel", "sptk", "--vectors", str(workspace / "v.npy"), "--quiet"]
    keys = str(workspace / "v.keys")
    for command in (["gram", str(small), "-o", keys], ["nystroem", "fit", str(small), keys]):
        assert main([*command, *sptk]) == 1
        assert f"{keys} is the input --vectors {keys}" in capsys.readouterr().err
        assert snapshot(workspace) == before
    assert main(["gram", str(small), "-o", str(workspace / "G.npy"), *sptk]) == 0


def test_a_file_an_input_folder_links_to_is_an_input(workspace, capsys):
    outside, corpus = workspace / "outside", workspace / "corp2"
    outside.mkdir()
    corpus.mkdir()
    for suffix in (".txt", ".a1", ".a2"):
        shutil.copy(workspace / "c3" / f"{TIAB}{suffix}", outside / f"X{suffix}")
        (corpus / f"X{suffix}").symlink_to(Path("..") / "outside" / f"X{suffix}")
    before = snapshot(outside)
    assert main(["convert", "--format", "standoff", str(corpus), str(outside / "X.txt")]) == 1
    assert f"is in the input folder {corpus} (input); it would be overwritten" in capsys.readouterr().err
    assert snapshot(outside) == before


def test_a_model_folder_of_links_into_a_cache_protects_the_cache(workspace, capsys):
    """The layout of the Hugging Face cache: a snapshot folder of links to blobs."""
    blobs, model = workspace / "blobs", workspace / "mdlink"
    (blobs / "vocab").mkdir(parents=True)
    (blobs / "meta.json").write_text("{}", encoding="utf-8")
    (blobs / "vocab" / "strings.json").write_text("[]", encoding="utf-8")
    model.mkdir()
    (model / "meta.json").symlink_to(Path("..") / "blobs" / "meta.json")
    (model / "vocab").symlink_to(Path("..") / "blobs" / "vocab", target_is_directory=True)
    (workspace / "texts.txt").write_text("A text.\n", encoding="utf-8")
    before = snapshot(blobs)
    for output in (blobs / "meta.json", blobs / "vocab" / "strings.json", blobs / "vocab" / "new.txt"):
        assert main(["trees", str(workspace / "texts.txt"), "--model", str(model), "-o", str(output)]) == 1
        assert f"is in the input folder {model} (--model); it would be overwritten" in capsys.readouterr().err
    assert snapshot(blobs) == before and not (blobs / "vocab" / "new.txt").exists()


def test_a_link_cycle_in_an_input_folder_is_walked_once(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    (folder / "a.txt").write_text("x", encoding="utf-8")
    check_outputs(inputs={"input": folder}, outputs={"output": tmp_path / "out.txt"})
    with pytest.raises(InvalidParameterError, match="is in the input folder"):
        check_outputs(inputs={"input": folder}, outputs={"output": folder / "loop" / "a.txt"})


def test_a_dangling_output_link_is_not_followed(workspace, capsys):
    link = workspace / "out.npy"
    link.symlink_to(workspace / "new" / "folders" / "victim.npy")
    assert main(["gram", str(workspace / "trees.txt"), "-o", str(link), "--quiet"]) == 1
    assert f"output {link}: {link} is a symbolic link to {workspace}/new/folders/victim.npy, which does not exist" in (
        capsys.readouterr().err
    )
    assert link.is_symlink() and not (workspace / "new").exists()
    with pytest.raises(InvalidParameterError, match="which does not exist"):
        with replacing(link):
            pass
    folder = workspace / "lexicon"  # a folder on the output's way
    folder.symlink_to(workspace / "nowhere", target_is_directory=True)
    assert main(["lexicon", str(workspace / "c3"), "-o", str(folder)]) == 1
    assert f"{folder} is a symbolic link to {workspace}/nowhere, which does not exist" in capsys.readouterr().err
    assert not (workspace / "nowhere").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="another user's link needs root to make")
def test_another_users_link_in_a_sticky_folder_is_not_followed_even_by_root(workspace, capsys):
    sticky, victim = workspace / "sticky", workspace / "victim.txt"
    sticky.mkdir()
    sticky.chmod(0o1777)
    victim.write_text("precious", encoding="utf-8")
    link = sticky / "out.npy"
    link.symlink_to(victim)
    os.lchown(link, 65534, 65534)  # another user's
    assert main(["gram", str(workspace / "trees.txt"), "-o", str(link), "--quiet"]) == 1
    assert "is a symbolic link of another user (uid 65534) in the shared folder" in capsys.readouterr().err
    assert victim.read_text(encoding="utf-8") == "precious"
    os.lchown(link, os.geteuid(), os.getegid())  # the user's own link: written through, as a shell's > would
    assert main(["gram", str(workspace / "trees.txt"), "-o", str(link), "--quiet"]) == 0
    assert link.is_symlink() and np.load(victim).shape == (2, 2)


@pytest.mark.parametrize("length", [247, 255])
def test_an_output_name_as_long_as_the_file_system_takes_works(workspace, length):
    name = "a" * (length - len(".npy")) + ".npy"
    assert len(name.encode()) == length
    assert main(["gram", str(workspace / "trees.txt"), "-o", str(workspace / name), "--quiet"]) == 0
    assert np.load(workspace / name).shape == (2, 2)
    assert not [p for p in workspace.iterdir() if p.name.startswith(".")]


def test_a_failure_to_clean_up_never_hides_the_first_error(tmp_path, monkeypatch):
    def refuse(self, missing_ok=False):
        raise OSError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    with pytest.warns(UserWarning, match="could not remove the temporary file"):
        with pytest.raises(RuntimeError, match="the first error"):
            with replacing(tmp_path / "out.txt") as temporary:
                temporary.write_text("partial", encoding="utf-8")
                raise RuntimeError("the first error")


def test_a_read_only_output_is_not_replaced_without_a_word(workspace, capsys, monkeypatch):
    target = workspace / "G.npy"
    assert main(["gram", str(workspace / "trees.txt"), "-o", str(target), "--quiet"]) == 0
    target.chmod(0o444)
    before = target.read_bytes()
    if os.geteuid() == 0:  # root may write any file, as a shell's > does: shown as a user would see it
        monkeypatch.setattr(outputs_module.os, "access", lambda path, mode: False)
    assert main(["gram", str(workspace / "trees.txt"), "-o", str(target), "--quiet"]) == 1
    assert f"output {target} is read-only (mode 0444): not replaced" in capsys.readouterr().err
    assert target.read_bytes() == before and stat.S_IMODE(target.stat().st_mode) == 0o444


def test_a_full_temporary_folder_is_named_not_the_special_output(tmp_path):
    with pytest.raises(OutputFileError) as refused:
        with replacing_all({"output": "/dev/null"}) as temporaries:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(temporaries["output"]))
    message = str(refused.value)
    assert message.startswith("cannot write output /dev/null, staged in the temporary folder ")
    assert "(set TMPDIR to one with room): No space left on device" in message
