"""python -m spacy_convkernels gram and nystroem: Gram matrices and Nyström vectors of corpus files."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from data_paths import CORPORA, ROOT

from spacy_convkernels.approx import Nystroem
from spacy_convkernels.cli import main
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import PartialTreeKernel, SubsetTreeKernel

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
EXAMPLES = list(read_klp(SAMPLE))


def trees(representation="grct", n=60):
    return [example.trees[representation] for example in EXAMPLES[:n]]


@pytest.mark.parametrize("block_size", [1, 7, 1000])
def test_symmetric_gram_by_blocks_is_the_kernel_gram(tmp_path, block_size):
    out = tmp_path / "gram.npy"
    assert main(["gram", str(SAMPLE), str(out), "--block-size", str(block_size), "--quiet"]) == 0
    expected = PartialTreeKernel().gram(trees())
    np.testing.assert_allclose(np.load(out), expected, rtol=1e-12, atol=1e-12)


def test_gram_against_a_second_corpus_float32_options_and_formats(tmp_path):
    lines = tmp_path / "trees.txt"
    lines.write_text("\n".join(str(t) for t in trees("lct", 9)) + "\n\n", encoding="utf-8")  # a blank line at the end
    records = tmp_path / "trees.jsonl"
    rows = [{"doc": k, "lct": str(t)} for k, t in enumerate(trees("lct", 5))] + [{"doc": 5, "lct": None}]
    records.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "block.npy"
    command = ["gram", str(records), str(out), "--against", str(lines), "--representation", "lct"]
    command += ["--kernel", "sst", "--lam", "0.2", "--no-normalize", "--float32", "--block-size", "2", "--quiet"]
    assert main(command) == 0
    G = np.load(out)
    expected = SubsetTreeKernel(lam=0.2).gram(trees("lct", 5), trees("lct", 9), normalize=False)
    assert G.dtype == np.float32 and G.shape == (5, 9)  # the null tree is left out
    np.testing.assert_allclose(G, expected, rtol=1e-6)


def test_nystroem_fit_then_transform_gives_the_library_vectors(tmp_path, capsys):
    model = tmp_path / "models" / "ptk.npz"
    command = ["nystroem", "fit", str(SAMPLE), "-o", str(model), "--n-components", "12", "--seed", "3"]
    assert main([*command, "--mu", "0.3", "--representation", "lct", "--quiet"]) == 0
    assert capsys.readouterr().err.strip() == f"12 landmarks, 12 features to {model}"
    out = tmp_path / "vectors.npy"
    assert main(["nystroem", "transform", str(model), str(SAMPLE), "-o", str(out), "--quiet"]) == 0  # lct, as fitted
    reference = Nystroem(PartialTreeKernel(mu=0.3), n_components=12, random_state=3).fit(trees("lct"))
    vectors = np.load(out)
    assert vectors.dtype == np.float64 and vectors.shape == (60, 12)
    np.testing.assert_allclose(vectors, reference.transform(trees("lct")), rtol=1e-10, atol=1e-12)


def test_earlier_spellings_of_output_and_seed_still_read(tmp_path, capsys):
    """``-o/--output`` and ``--seed`` are the spellings; the output as the last argument
    and ``--random-state`` still read; both outputs at once, or none, are refused."""
    assert main(["gram", str(SAMPLE), str(tmp_path / "last.npy"), "--block-size", "7", "--quiet"]) == 0
    assert main(["gram", str(SAMPLE), "-o", str(tmp_path / "o.npy"), "--block-size", "7", "--quiet"]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "last.npy"), np.load(tmp_path / "o.npy"))
    for seed in ("--seed", "--random-state"):
        command = ["nystroem", "fit", str(SAMPLE), "-o", str(tmp_path / f"{seed}.npz"), "--n-components", "5"]
        assert main([*command, seed, "7", "--quiet"]) == 0
    with np.load(tmp_path / "--seed.npz") as a, np.load(tmp_path / "--random-state.npz") as b:
        np.testing.assert_array_equal(a["landmarks"], b["landmarks"])
    capsys.readouterr()
    for outputs, message in (
        ([str(tmp_path / "g.npy"), "-o", str(tmp_path / "h.npy")], f"two outputs, {tmp_path / 'g.npy'} and -o"),
        ([], "-o/--output is required: the .npy file to write"),
    ):
        assert main(["gram", str(SAMPLE), *outputs, "--quiet"]) == 1, outputs
        err = capsys.readouterr().err
        assert err.startswith("spacy-convkernels gram: error: ") and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "g.npy").exists() and not (tmp_path / "h.npy").exists()


@pytest.mark.slow
def test_warnings_are_one_line_on_stderr(tmp_path):
    command = [sys.executable, "-m", "spacy_convkernels", "nystroem", "fit", str(SAMPLE), str(tmp_path / "m.npz")]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [*command, "--n-components", "80", "--quiet"], capture_output=True, text=True, env=environment
    )
    assert result.returncode == 0
    assert result.stderr.splitlines() == [
        "spacy-convkernels nystroem: warning: n_components=80 > 60 structures: using 60 landmarks",
        f"60 landmarks, 60 features to {tmp_path / 'm.npz'}",
    ]


def test_bad_inputs_end_with_one_line_on_stderr_and_status_1(tmp_path, capsys):
    (tmp_path / "bad.txt").write_text("(S (NP x))\n(S (NP y)\n", encoding="utf-8")
    (tmp_path / "bad.jsonl").write_text('{"grct": "(S x)"}\n{"lct": "(S x)"}\n', encoding="utf-8")
    (tmp_path / "empty.txt").write_text("\n", encoding="utf-8")
    (tmp_path / "model.npz").write_bytes(b"not a model")
    np.savez(tmp_path / "other.npz", a=np.zeros(2))
    good = str(SAMPLE)
    out = str(tmp_path / "out.npy")
    cases = [
        (["gram", str(tmp_path / "bad.txt"), out], "bad.txt, line 2: not a tree"),
        (["gram", str(tmp_path / "bad.jsonl"), out], "bad.jsonl, line 2: no 'grct' field"),
        (["gram", str(tmp_path / "empty.txt"), out], "no tree"),
        (["gram", str(tmp_path / "absent.txt"), out], "absent.txt: cannot open the file"),
        (["gram", good, out, "--kernel", "sst", "--mu", "0.2"], "--mu does not apply to the sst kernel"),
        (["gram", good, out, "--lam", "-1"], "lam"),
        (["gram", good, out, "--block-size", "0"], "--block-size must be positive"),
        (["nystroem", "fit", good, str(tmp_path / "m.npz"), "--n-components", "0"], "--n-components must be positive"),
        (["gram", good, out, "--n-jobs", "0"], "n_jobs must be a non-zero integer or None"),
        (["nystroem", "transform", str(tmp_path / "model.npz"), good, out], "not a model written by nystroem fit"),
        (["nystroem", "transform", str(tmp_path / "other.npz"), good, out], "not a model written by nystroem fit"),
        (["nystroem", "transform", str(tmp_path / "absent.npz"), good, out], "absent.npz: no such file"),
    ]
    for command, message in cases:
        assert main([*command, "--quiet"]) == 1, command
        err = capsys.readouterr().err.strip()
        prefix = f"spacy-convkernels {command[0]}: error:"
        assert err.startswith(prefix) and message in err and "\n" not in err, (command, err)


@pytest.mark.slow  # a new process
def test_the_commands_on_kelp_trees_do_not_import_spacy(tmp_path):
    """gram, nystroem, evaluate qc and explain read KeLP trees: a new process running them never
    imports spaCy (and with it torch: seconds before the first tree)."""
    out = str(tmp_path)
    code = (
        "import sys\n"
        "from spacy_convkernels.cli import main\n"
        f"assert main(['gram', {str(SAMPLE)!r}, '-o', {out!r} + '/g.npy', '--quiet']) == 0\n"
        f"assert main(['nystroem', 'fit', {str(SAMPLE)!r}, '-o', {out!r} + '/m.npz', '--n-components', '5', "
        "'--quiet']) == 0\n"
        f"assert main(['nystroem', 'transform', {out!r} + '/m.npz', {str(SAMPLE)!r}, '-o', {out!r} + '/v.npy', "
        "'--quiet']) == 0\n"
        f"assert main(['evaluate', 'qc', {str(SAMPLE)!r}, {str(SAMPLE)!r}, '--quiet']) == 0\n"
        f"assert main(['explain', '--corpus', {str(SAMPLE)!r}, '3', '17', '-o', {out!r} + '/e.svg']) == 0\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('spacy', 'thinc', 'torch')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "[]"
