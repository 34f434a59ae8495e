"""kernel.explain(a, b): the node pairs of a tree kernel's value, summing to it, and their fragments."""

import ast
import inspect
import re

import numpy as np
import pytest
from data_paths import CORPORA
from random_trees import random_pairs, random_tree, wide_tree
from sklearn.base import clone

from spacy_convkernels import InvalidParameterError, StructureTypeError, Tree
from spacy_convkernels.cli import main
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    ZelenkoTreeKernel,
)
from spacy_convkernels.kernels import explain as explain_module
from spacy_convkernels.kernels.base import EngineSpec, Kernel
from spacy_convkernels.kernels.explain import COLORS, explain, to_svg
from spacy_convkernels.kernels.kinds import KernelKind

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
WORDSPACE = CORPORA / "trec-qc-kelp-sample" / "wordspace_md300.first60.txt.gz"

KERNELS = [
    SubtreeKernel(lam=0.5),
    SubtreeKernel(lam=0.4, variant="kelp"),
    SubsetTreeKernel(lam=0.3),
    PartialTreeKernel(lam=0.4, mu=0.4),
    PartialTreeKernel(lam=0.7, mu=0.9, terminal_factor=3.0),
    PartialTreeKernel(label_weights={"A##x": 0.0, "B##z": 2.5}),
    SubsetTreeKernel(label_weights={"A##y": 0.5, "w": 0.0}),
    SmoothedPartialTreeKernel(terminal_factor=0.2),  # no vectors: identity similarity
]
IDS = [f"{type(k).__name__}-{n}" for n, k in enumerate(KERNELS)]


@pytest.mark.slow
@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_the_values_of_all_pairs_sum_to_the_kernel(kernel):
    rng = np.random.default_rng(5)
    pairs = list(random_pairs(11, 25)) + [(wide_tree(rng, 35), wide_tree(rng, 33))]
    for a, b in pairs:
        for normalize in (False, True):
            explained = kernel.explain(a, b, top=None, normalize=normalize)
            expected = kernel(a, b, normalize=normalize)
            assert explained.value == pytest.approx(expected, rel=1e-9, abs=1e-12)
            assert sum(m.value for m in explained.matches) == pytest.approx(expected, rel=1e-9, abs=1e-12)
            assert len(explained.matches) == explained.n_pairs
            assert abs(explained.rest) <= 1e-9 * max(1.0, abs(expected))


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_top_pairs_largest_first_with_shares_and_common_fragments(kernel):
    rng = np.random.default_rng(2)
    a, b = random_tree(rng, 40), random_tree(rng, 40)
    everything = kernel.explain(a, b, top=None)
    best = kernel.explain(a, b, top=4)
    assert best.matches == everything.matches[:4]
    values = [m.value for m in everything.matches]
    assert values == sorted(values, reverse=True) and all(v > 0 for v in values)
    assert best.rest == pytest.approx(best.value - sum(values[:4]))
    for match in everything.matches:
        assert match.share == pytest.approx(match.value / everything.value)
        # the fragment is in both trees: its nodes map to nodes of a and b with matching labels
        assert match.nodes_a[0] == match.node_a and match.nodes_b[0] == match.node_b
        assert match.fragment.labels == tuple(a.labels[n] for n in match.nodes_a)
        for x, y in zip(match.nodes_a, match.nodes_b):
            if isinstance(kernel, (PartialTreeKernel, SmoothedPartialTreeKernel)):
                assert a.labels[x].split("##")[-1] == b.labels[y].split("##")[-1]
            else:
                assert a.labels[x] == b.labels[y]


@pytest.mark.slow
@pytest.mark.parametrize(
    "kernel, representation",
    [
        (SmoothedPartialTreeKernel(terminal_factor=0.2, vectors=str(WORDSPACE)), "lct"),
        (CompositionalSmoothedPartialTreeKernel(vectors=str(WORDSPACE), label_weights={"SYNT##det": 0.5}), "clct"),
    ],
    ids=["SPTK", "CSPTK"],
)
def test_smoothed_kernels_sum_to_the_kernel_and_match_similar_words(kernel, representation):
    trees = [example.trees[representation] for example in read_klp(SAMPLE)][:12]
    probe = clone(kernel).set_params(lam=1.0, mu=1.0, terminal_factor=1.0)
    similar_words = 0
    for a, b in zip(trees[:-1], trees[1:]):
        explained = kernel.explain(a, b, top=None)
        assert explained.value == pytest.approx(kernel(a, b), rel=1e-9, abs=1e-12)
        assert sum(m.value for m in explained.matches) == pytest.approx(explained.value, rel=1e-9, abs=1e-12)
        for match in explained.matches:
            assert match.fragment_b.labels == tuple(b.labels[n] for n in match.nodes_b)
            for x, y in zip(match.nodes_a, match.nodes_b):
                assert probe(Tree(a.labels[x]), Tree(b.labels[y]), normalize=False) > 0
            similar_words += match.fragment != match.fragment_b
    assert similar_words > 0  # pairs of different words that the vectors call similar


def test_fragments_of_a_sentence_pair():
    a = Tree.from_string("(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))))")
    b = Tree.from_string("(S (NP (DT the) (NN dog)) (VP (VBD sat) (PP (IN on) (NP (DT a) (NN mat)))))")
    sst = SubsetTreeKernel(lam=0.4).explain(a, b, top=1).matches[0]
    assert str(sst.fragment) == "(S(NP(DT(the))(NN))(VP(VBD(sat))(PP(IN(on))(NP(DT)(NN(mat))))))"
    st = SubtreeKernel(lam=0.4).explain(a, b, top=None)
    assert {str(m.fragment) for m in st.matches} == {
        "(DT(the))",
        "(the)",
        "(VBD(sat))",
        "(sat)",
        "(IN(on))",
        "(on)",
    } | {
        "(NN(mat))",
        "(mat)",
    }
    ptk = PartialTreeKernel().explain(a, b, top=None)
    np_pair = next(m for m in ptk.matches if (m.node_a, m.node_b) == (1, 1))  # the subjects' NPs
    assert str(np_pair.fragment) == "(NP(DT(the))(NN))"


def test_nested_matches_keep_their_own_colour_in_the_drawing():
    a = Tree.from_string("(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))))")
    b = Tree.from_string("(S (NP (DT the) (NN dog)) (VP (VBD sat) (PP (IN on) (NP (DT a) (NN mat)))))")
    explanation = SubsetTreeKernel(lam=0.4).explain(a, b, top=10)
    outer = set(explanation.matches[0].nodes_b)
    assert all(set(match.nodes_b) <= outer for match in explanation.matches[3:5])  # 4 and 5 lie inside 1
    svg = to_svg(explanation, a, b)
    filled = set(re.findall(r'fill="(#[0-9a-f]{6})" font-weight="bold">', svg))
    assert filled == set(COLORS)  # every match of the table, orange (4) and purple (5) among them
    for rank, colour in enumerate(COLORS, start=1):
        assert f'<tspan fill="{colour}">{rank}</tspan>' in svg  # each root marked in its match's colour


def test_bad_calls_raise_package_errors():
    a = Tree.from_string("(A b)")
    with pytest.raises(InvalidParameterError, match="explain supports the tree kernels"):
        explain(SubsequencePathKernel(), a, a)
    with pytest.raises(InvalidParameterError, match="explain supports the tree kernels, not ZelenkoTreeKernel"):
        explain(ZelenkoTreeKernel(), Tree("x/y"), Tree("x/y"))  # it compares Trees, but not as a sum over node pairs
    with pytest.raises(InvalidParameterError, match="explain supports the tree kernels, not str"):
        explain("ptk", a, a)
    with pytest.raises(StructureTypeError, match="b is str"):
        PartialTreeKernel().explain(a, "(A b)")
    with pytest.raises(InvalidParameterError, match="top must be"):
        PartialTreeKernel().explain(a, a, top=0)
    with pytest.raises(InvalidParameterError, match="lam"):
        PartialTreeKernel(lam=-1.0).explain(a, a)


def test_command_writes_html_or_svg_and_lists_the_top_pairs(tmp_path, capsys):
    sample = SAMPLE
    examples = list(read_klp(sample))
    a, b = examples[20].trees["lct"], examples[21].trees["lct"]
    expected = SubsetTreeKernel(lam=0.2).explain(a, b, top=3)
    for name in ("out.html", "out.svg"):
        command = ["explain", "--corpus", str(sample), "20", "21", "--representation", "lct", "--kernel", "sst"]
        assert main([*command, "--lam", "0.2", "--top", "3", "-o", str(tmp_path / name)]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == f"K(a, b) = {expected.value:.6g} ({expected.n_pairs} contributing node pairs)"
        assert [line.split(") ", 1)[1] for line in lines[1:]] == [str(m.fragment) for m in expected.matches]
        page = (tmp_path / name).read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>" if name.endswith(".html") else "<svg") and "LEX##be::v" in page
    assert main(["explain", "(S (NP the cat))", "(S (NP a cat))", "-o", str(tmp_path / "t.svg")]) == 0
    assert capsys.readouterr().out.startswith("K(a, b) = ")


def test_command_without_o_never_replaces_an_existing_explain_html(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    page = tmp_path / "explain.html"
    assert main(["explain", "(S (NP the cat))", "(S (NP a cat))"]) == 0 and page.read_text().startswith("<!DOCTYPE")
    page.write_text("mine", encoding="utf-8")
    capsys.readouterr()
    assert main(["explain", "(S (NP the cat))", "(S (NP a dog))"]) == 1
    assert capsys.readouterr().err == (
        "spacy-convkernels explain: error: explain.html exists and -o was not given: "
        "pass -o explain.html to replace it, or -o with another name, or remove it\n"
    )
    assert page.read_text(encoding="utf-8") == "mine"
    assert main(["explain", "(S (NP the cat))", "(S (NP a dog))", "-o", "explain.html"]) == 0
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE")


def test_command_bad_inputs_are_one_line_and_status_1(tmp_path, capsys):
    sample = str(CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz")
    out = str(tmp_path / "x.html")
    cases = [
        (["(S (NP", "(S x)", "-o", out], "A is not a tree in bracket form"),
        (["--corpus", sample, "1", "60", "-o", out], "B = '60': not a position among the 60 trees"),
        (["(S x)", "(S x)", "-o", str(tmp_path / "x.png")], "--output must end in .html or .svg"),
        (["(S x)", "(S x)", "--top", "0", "-o", out], "top must be"),
    ]
    for command, message in cases:
        assert main(["explain", *command]) == 1, command
        err = capsys.readouterr().err.strip()
        assert err.startswith("spacy-convkernels explain: error:") and message in err and "\n" not in err, err


# a label of a terminal's escape sequences: a colour (CSI), a window title (OSC ... BEL),
# an 8-bit CSI (C1), a C0 control, and a right-to-left override
CONTROLS = "\x1b[31mcat\x1b]0;pwned\x07\x9b2J\x01\u202e"
SHOWN = "\\x1b[31mcat\\x1b]0;pwned\\x07\\x9b2J\\x01\\u202e"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]")


def test_labels_with_control_characters_are_drawn_as_escapes_in_valid_xml():
    import xml.etree.ElementTree as ElementTree

    a = Tree.from_string(f"(S (NP {CONTROLS} x) (VP a&b))")
    explanation = PartialTreeKernel().explain(a, a, top=3)
    svg = to_svg(explanation, a, a)
    texts = [element.text for element in ElementTree.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]
    assert SHOWN in texts and "a&b" in texts and not RAW.search(svg)
    page = explain_module.to_html(explanation, a, a, title=f"K {CONTROLS}")
    assert SHOWN in page and not RAW.search(page)
    ElementTree.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])


def test_command_shows_control_characters_as_escapes_never_raw(tmp_path, capsys):
    import xml.etree.ElementTree as ElementTree

    tree = f"(S (NP {CONTROLS} x))"
    assert main(["explain", tree, tree, "--top", "2", "-o", str(tmp_path / "out.svg")]) == 0
    captured = capsys.readouterr()
    assert SHOWN in captured.out and not RAW.search(captured.out + captured.err)
    ElementTree.parse(tmp_path / "out.svg")
    assert main(["explain", "(S x)", "(S x)", "-o", str(tmp_path / "x\x1b[2J.png")]) == 1  # an error naming the file
    err = capsys.readouterr().err
    assert "x\\x1b[2J.png" in err and not RAW.search(err)


ASCII_SCRIPT = """
import sys
from spacy_convkernels.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("encoding", ["ascii", "ascii:strict"])
def test_an_encoding_that_cannot_represent_the_text_gives_escapes_and_a_warning(tmp_path, encoding):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONIOENCODING": encoding}
    out = tmp_path / "out.html"
    command = [sys.executable, "-c", ASCII_SCRIPT, "explain", "(S (NP café))", "(S (NP café))", "-o", str(out)]
    done = subprocess.run(command, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"(NP(caf\\xe9))" in done.stdout and b"Traceback" not in done.stderr
    assert done.stderr.decode("ascii").splitlines()[-1] == (
        "spacy-convkernels explain: warning: standard output's encoding (ascii) cannot represent some of the text: "
        "those characters were written as backslash escapes such as \\xe9; -o FILE writes UTF-8, as does standard "
        "output with PYTHONIOENCODING=utf-8"
    )
    assert "café" in out.read_text(encoding="utf-8")  # a file is UTF-8
    bad = subprocess.run([*command[:3], "explain", "(S café", "(S x)", "-o", str(out)], env=env, capture_output=True)
    assert bad.returncode == 1 and bad.stderr.decode("ascii").count("\n") == 1, bad.stderr  # the error, escaped
    assert b"caf\\xe9" in bad.stderr and b"Traceback" not in bad.stderr


class _BareKernel(Kernel):
    """A kernel that states only its engine spec: PTK's recursion, no TreeKernel base."""

    structure_type = Tree

    def _engine_spec(self) -> EngineSpec:
        return EngineSpec(KernelKind.PARTIAL_TREE, 0.4, 0.4, 1.0, match_key="content")


def test_explain_dispatches_on_the_engine_spec():
    rng = np.random.default_rng(3)
    a, b = random_tree(rng, 30), random_tree(rng, 30)
    assert explain(_BareKernel(), a, b, top=None) == PartialTreeKernel().explain(a, b, top=None)


def test_explain_reads_the_engine_not_the_kernel_classes():
    """No import of the kernel modules (which import explain), none inside a function."""
    tree = ast.parse(inspect.getsource(explain_module))
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert "_driver" in imported and not {"tree_kernels", "smoothed_tree_kernels"} & set(imported)
    top_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert len(top_level) == sum(isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.walk(tree))
