"""Every python block of the README runs on its own, from any directory, and prints what
the README says."""

import contextlib
import functools
import io
import os
import re

import numpy as np
import pytest
import spacy
from data_paths import ROOT, SHARED, need_shared, require_extra

MD_MODEL = "en_core_web_md"  # the README's model, by its package name
SHARED_MD_MODEL = "models/en_core_web_md-3.8.0"  # its folder in ../shared, used when the package is absent


def _blocks():
    """(heading, code) of every python block of the README, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks, heading = [], None
    for match in re.finditer(r"^## ([^\n]*)$|^```python\n(.*?)^```", text, re.M | re.S):
        if match.group(1) is not None:
            heading = match.group(1)
        else:
            blocks.append((heading, match.group(2)))
    return blocks


BLOCKS = _blocks()


def _needs_shared(code: str) -> bool:
    """Whether a block loads the md model or reads ../shared (its tests are marked ``shared``)."""
    return f'spacy.load("{MD_MODEL}"' in code or '"../shared/' in code


@functools.cache
def _run_block(index: int, directory: str):
    """Run block ``index`` in a namespace of its own from ``directory`` (not the clone),
    with ``../shared`` standing for wherever the shared data are (the test skips when they
    are absent) and en_core_web_md, when not installed, for its folder there; return its
    output and the names it defined."""
    heading, code = BLOCKS[index]
    if f'spacy.load("{MD_MODEL}"' in code and not spacy.util.is_package(MD_MODEL):
        code = code.replace(f'spacy.load("{MD_MODEL}"', f'spacy.load("../shared/{SHARED_MD_MODEL}"')
    for relative in re.findall(r'"\.\./shared/([^"]+)"', code):
        need_shared(relative)
    if "import networkx" in code:  # the networkx extra (in dev; .[test] alone skips it)
        require_extra("networkx", "networkx")
    code = code.replace('"../shared/', f'"{SHARED}/')
    printed = io.StringIO()
    names = {}
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"README.md ({heading})", "exec"), names)
    finally:
        os.chdir(cwd)
    return printed.getvalue(), names


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("elsewhere"))

    def run_block(heading: str, nth: int = 0):
        indices = [i for i, (h, _) in enumerate(BLOCKS) if h == heading]
        return _run_block(indices[nth], directory)

    return run_block


def test_the_readme_has_its_blocks():
    assert [heading for heading, _ in BLOCKS] == [
        "Example",
        "In a spaCy pipeline",
        "In a spaCy pipeline",
        "Sentence similarity",
        "Interactions in AMR graphs",
        "Interactions in AMR graphs",
    ]


@pytest.mark.parametrize(
    "index",
    [pytest.param(i, marks=[pytest.mark.shared] if _needs_shared(code) else []) for i, (_, code) in enumerate(BLOCKS)],
    ids=[f"{i}-{h}" for i, (h, _) in enumerate(BLOCKS)],
)
def test_every_block_runs_on_its_own(index, run):
    heading, _ = BLOCKS[index]
    nth = [h for h, _ in BLOCKS[:index]].count(heading)
    run(heading, nth)


def test_the_readme_names_models_by_package_and_says_how_to_get_them():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    loads = [load for _, code in BLOCKS for load in re.findall(r"spacy\.load\(([^,)]+)", code)]
    assert loads and set(loads) == {f'"{MD_MODEL}"'}
    assert "shared/models" not in "".join(code for _, code in BLOCKS)
    assert f"python -m spacy download {MD_MODEL}" in text
    assert "SPACY_CONVKERNELS_SHARED" in text and ".ci/run" in text and "-rsx" in text


def test_readme_example_prints_what_it_claims(run):
    printed, _ = run("Example")
    claimed = re.findall(r"# (\d\.\d+)\.\.\.", BLOCKS[0][1])
    values = [float(line) for line in printed.split()]
    assert len(values) == len(claimed) == 3
    for value, claim in zip(values, claimed):
        assert abs(value - float(claim)) < 1e-4


@pytest.mark.shared
def test_readme_kernel_trees_example(run):
    printed, _ = run("In a spaCy pipeline", 0)
    lines = printed.splitlines()
    assert len(lines) == 3 and lines[0].startswith("(SYNT##root") and 0 < float(lines[2]) < 1


@pytest.mark.shared
def test_readme_kernel_vectors_example(run):
    printed, names = run("In a spaCy pipeline", 1)
    nlp, doc = names["nlp"], names["doc"]
    assert printed.strip() == "(40,)"
    assert doc._.kernel_vector.dtype == np.float32 and np.isfinite(doc._.kernel_vector).all()
    # the trained parser was left as it was (nlp.initialize() would make every relation ROOT)
    assert [t.dep_ for t in nlp("The cat sat on the mat.")] == ["det", "nsubj", "ROOT", "prep", "det", "pobj", "punct"]
    landmarks = nlp.get_pipe("kernel_vectors").model.components_
    assert len(landmarks) == 40 and all(t.label.startswith("LEX##") for t in landmarks)


@pytest.mark.shared
def test_readme_similarity_example(run):
    printed, names = run("Sentence similarity")
    a, b, exact = names["a"], names["b"], names["exact"]
    shape, hooked, exact_value = printed.split("\n")[:3]
    assert shape == "(60,)" and "similarity" in a.user_hooks and "vector" in b.user_span_hooks
    cosine = (
        a._.kernel_vector @ b._.kernel_vector / np.linalg.norm(a._.kernel_vector) / np.linalg.norm(b._.kernel_vector)
    )
    assert float(hooked) == round(cosine, 3) and 0 < float(hooked) < 1
    assert len(list(b.sents)) == 2 and 0 < float(exact_value) < 1
    joined = names["text_similarity"](a, b, kernel=exact, representation="loct")
    assert float(exact_value) == round(joined, 3)


def test_readme_networkx_example(run):
    printed, _ = run("Interactions in AMR graphs", 1)
    assert printed.splitlines() == ["['a', 'p2'] arg1 {'label': 'protein', 'name': 'RAF'}", "1.0 1.0"]


@pytest.mark.shared
def test_readme_amr_example(run):
    _, names = run("Interactions in AMR graphs")
    G, candidates = names["G"], names["candidates"]
    assert len(candidates) > 50 and G.shape == (len(candidates), len(candidates))
    np.testing.assert_allclose(G, G.T)
    assert np.allclose(np.diag(G), 1.0) and G.min() >= 0 and (G < 0.999).mean() > 0.5
