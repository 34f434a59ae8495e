"""Every code block of README.md and docs/ (docs/results/ aside) runs, as written, in the
order of its page (tests/doc_blocks.py says how); a few print what their page says."""

import ast
import re
from collections import Counter

import numpy as np
import pytest
from data_paths import ROOT
from doc_blocks import (
    CHECK_LANGUAGES,
    EXTRAS,
    MD_MODEL,
    RUN_LANGUAGES,
    TEXT_LANGUAGES,
    PageRun,
    all_blocks,
    md_package,
)

BLOCKS = all_blocks()
RUN = [block for block in BLOCKS if block.runs_here]
SKIPPED = [block for block in BLOCKS if block.directive and block.directive.startswith("skip:")]
MAX_SKIPPED = 3  # a block nobody runs is the exception


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory):
    site = md_package(tmp_path_factory.mktemp("site-packages"))
    runs = {}

    def run(block):
        if block.page not in runs:
            runs[block.page] = PageRun(block.page, tmp_path_factory.mktemp("page"), site)
        return runs[block.page]

    return run


def output(page_runs, page: str, heading: str, nth: int = 0, language: str = "python"):
    """What the ``nth`` block of ``language`` under ``heading`` of ``page`` printed, its
    page's names after it, and its code."""
    block = [b for b in RUN if b.page == page and b.heading == heading and b.language == language][nth]
    run = page_runs(block)
    printed = run.run_to(block)
    return printed, run.namespaces[block.line], block.code


@pytest.mark.parametrize(
    "block", [pytest.param(b, marks=[getattr(pytest.mark, m) for m in sorted(b.marks)], id=b.id) for b in RUN]
)
def test_every_block_runs(block, page_runs):
    page_runs(block).run_to(block)


def test_every_block_has_a_known_language():
    unknown = [block.id for block in BLOCKS if block.language not in RUN_LANGUAGES | CHECK_LANGUAGES | TEXT_LANGUAGES]
    assert not unknown, f"blocks in a language the runner does not know (tests/doc_blocks.py): {unknown}"


# what the extras install, and the package's modules that need them (a block that imports one
# must skip without its extra, as the plain `pip install -e ".[test]"` has it)
OPTIONAL_MODULES = {
    "networkx",
    "matplotlib",
    "dask",
    "distributed",
    "pandas",
    "torch",
    "spacy_transformers",
    "spacy_convkernels.plots",
    "spacy_convkernels.distributed",
    "spacy_convkernels.structures.networkx_graphs",
}


def imported_modules(code: str) -> set[str]:
    """The modules a Python block imports (``from a import b``: ``a`` and ``a.b``), and
    their parents."""
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return {".".join(name.split(".")[:i]) for name in names for i in range(1, name.count(".") + 2)}


def test_a_block_that_imports_an_extra_skips_without_it():
    """tests/doc_blocks.py's EXTRAS knows every Python block that imports a module of an extra."""
    unknown = [
        block.id
        for block in RUN
        if block.language == "python"
        and imported_modules(block.code) & OPTIONAL_MODULES
        and not any(re.search(pattern, block.code, re.M) for pattern in EXTRAS)
    ]
    assert not unknown, f"blocks that import a module of an extra unknown to EXTRAS (tests/doc_blocks.py): {unknown}"


def test_blocks_run_elsewhere_are_few_and_say_why():
    """A block not run here says why: .ci/run runs it (ci:), a named test file (test:), or
    nobody (skip:, a reason given; rare)."""
    for block in BLOCKS:
        if block.directive is None:
            continue
        kind, reason = block.directive.split(":", 1)
        assert reason.strip(), f"{block.id}: {kind} without a reason"
        if kind == "test":
            test_file = re.search(r"\((tests/\w+\.py)\)", reason)
            assert test_file, f"{block.id}: name the test file that runs the block, (tests/FILE.py)"
            marker = reason.split("(")[0].strip()
            assert marker in (ROOT / test_file.group(1)).read_text(encoding="utf-8"), f"{block.id}: not found"
    assert len(SKIPPED) <= MAX_SKIPPED, [block.id for block in SKIPPED]
    ci = Counter(block.directive for block in BLOCKS if block.directive and block.directive.startswith("ci:"))
    assert ci == {"ci: install and test": 1, "ci: lint": 1}


def test_the_docs_name_the_md_model_by_its_package_name():
    loads = {load for block in RUN for load in re.findall(r"spacy\.load\(([^,)]+)", block.code)}
    assert f'"{MD_MODEL}"' in loads
    assert not [block.id for block in RUN if "shared/models" in block.code]


def test_every_page_is_reachable_from_the_readme():
    """README.md links docs/index.md, which links every page of docs/ (docs/results/ by its folder)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/index.md" in readme
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for path in (ROOT / "docs").rglob("*.md"):
        relative = path.relative_to(ROOT / "docs").as_posix()
        if relative != "index.md" and not relative.startswith("results/"):
            assert f"({relative})" in index, f"docs/index.md does not link {relative}"
    assert "(results/)" in index


def test_links_between_pages_resolve():
    """Every relative Markdown link of README.md and docs/ names a file or folder that exists."""
    for path in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        if "results" in path.relative_to(ROOT).parts:
            continue
        text = re.sub(r"^( *)```.*?^\1```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            assert (path.parent / target.split("#")[0]).exists(), f"{path.relative_to(ROOT)}: {target} is broken"


# --- what the examples print ---------------------------------------------------------------


def find(page: str, heading: str, nth: int = 0, language: str = "python"):
    return [b for b in RUN if b.page == page and b.heading == heading and b.language == language][nth]


def uses(page: str, heading: str, nth: int = 0, language: str = "python"):
    """Mark a test as its block is marked (it runs the block, and those before it)."""
    block = find(page, heading, nth, language)

    def decorate(test):
        for mark in sorted(block.marks):
            test = getattr(pytest.mark, mark)(test)
        return test

    return decorate


def claimed_values(code: str) -> list[float]:
    return [float(value) for value in re.findall(r"# (\d\.\d+)\.\.\.", code)]


@uses("README.md", "Kernels in Python")
def test_the_readme_kernel_example_prints_kelps_values(page_runs):
    printed, _, code = output(page_runs, "README.md", "Kernels in Python")
    values = [float(line) for line in printed.split()]
    assert len(values) == len(claimed_values(code)) == 3
    np.testing.assert_allclose(values, claimed_values(code), atol=1e-4)


@uses("README.md", "In a spaCy pipeline")
def test_the_readme_kernel_trees_example(page_runs):
    printed, _, _ = output(page_runs, "README.md", "In a spaCy pipeline")
    lines = printed.splitlines()
    assert len(lines) == 3 and lines[0].startswith("(SYNT##root") and 0 < float(lines[2]) < 1


@uses("README.md", "Kernels in scikit-learn")
def test_the_readme_grid_search_tunes_the_kernel(page_runs):
    _, names, _ = output(page_runs, "README.md", "Kernels in scikit-learn")
    search = names["search"]
    assert search.best_params_["kerneltransformer__kernel__lam"] in (0.2, 0.4)
    assert search.best_estimator_[0].kernel.lam == search.best_params_["kerneltransformer__kernel__lam"]
    assert 0.5 <= search.score(names["trees"][45:], names["labels"][45:]) <= 1


@uses("README.md", "Sentence similarity")
def test_the_readme_similarity_example(page_runs):
    printed, names, _ = output(page_runs, "README.md", "Sentence similarity")
    assert 0.3 < float(printed) < 1
    assert float(printed) == round(names["text_similarity"](names["a"], names["b"], kernel=names["sptk"]), 3)


@uses("docs/guide/kernels.md", "Word vectors")
def test_sptk_with_the_bundled_word_space_gives_kelps_value(page_runs):
    printed, names, _ = output(page_runs, "docs/guide/kernels.md", "Word vectors")
    ours, kelp = map(float, printed.split())
    assert abs(names["sptk"](names["lct"][0], names["lct"][1]) - names["kelp"]) < 1e-4 and abs(ours - kelp) < 2e-4


@uses("docs/guide/kernels.md", "Paths and graphs")
def test_the_networkx_example_prints_what_it_says(page_runs):
    printed, _, _ = output(page_runs, "docs/guide/kernels.md", "Paths and graphs")
    assert printed.splitlines() == ["['a', 'p2'] arg1 {'label': 'protein', 'name': 'RAF'}", "1.0 1.0"]


@uses("docs/guide/kernels.md", "Forests")
def test_one_trees_forest_kernel_is_its_sst_kernel(page_runs):
    printed, _, _ = output(page_runs, "docs/guide/kernels.md", "Forests")
    forest, sst, packed = map(float, printed.split())
    assert forest == sst and 0 < packed < 1


@uses("docs/guide/kernels.md", "An AMR corpus")
def test_the_amr_example(page_runs):
    _, names, _ = output(page_runs, "docs/guide/kernels.md", "An AMR corpus")
    G, candidates = names["G"], names["candidates"]
    assert len(candidates) >= 2 and G.shape == (len(candidates), len(candidates))
    np.testing.assert_allclose(G, G.T)
    assert np.allclose(np.diag(G), 1.0) and G.min() >= 0 and (G < 0.999).any()


@uses("docs/guide/spacy.md", "Nyström vectors: `kernel_vectors`")
def test_the_kernel_vectors_example_leaves_the_trained_parser_alone(page_runs):
    printed, names, _ = output(page_runs, "docs/guide/spacy.md", "Nyström vectors: `kernel_vectors`")
    nlp, doc = names["nlp"], names["doc"]
    assert printed.strip() == "(40,)"
    assert doc._.kernel_vector.dtype == np.float32 and np.isfinite(doc._.kernel_vector).all()
    # nlp.initialize() would have made every relation ROOT
    assert [t.dep_ for t in nlp("The cat sat on the mat.")] == ["det", "nsubj", "ROOT", "prep", "det", "pobj", "punct"]
    landmarks = nlp.get_pipe("kernel_vectors").model.components_
    assert len(landmarks) == 40 and all(t.label.startswith("LEX##") for t in landmarks)


@uses("docs/guide/similarity.md", "The hooks")
def test_the_similarity_hooks_example(page_runs):
    printed, names, _ = output(page_runs, "docs/guide/similarity.md", "The hooks")
    a, b, exact = names["a"], names["b"], names["exact"]
    shape, hooked, exact_value = printed.splitlines()[:3]
    assert shape == "(60,)" and "similarity" in a.user_hooks and "vector" in b.user_span_hooks
    vectors = a._.kernel_vector, b._.kernel_vector
    cosine = vectors[0] @ vectors[1] / np.linalg.norm(vectors[0]) / np.linalg.norm(vectors[1])
    assert float(hooked) == round(cosine, 3) and 0 < float(hooked) < 1
    assert len(list(b.sents)) == 2 and 0 < float(exact_value) < 1
    assert float(exact_value) == round(names["text_similarity"](a, b, kernel=exact, representation="loct"), 3)


@uses("docs/guide/similarity.md", "The hooks", 1)
def test_the_hooks_come_back_after_loading_and_after_a_docbin(page_runs):
    printed, _, _ = output(page_runs, "docs/guide/similarity.md", "The hooks", 1)
    assert printed.splitlines() == ["True", "(60,)"]


@uses("docs/relations_jsonl.md", "What a record becomes")
def test_the_format_page_reads_as_it_says(page_runs, tmp_path):
    from spacy_convkernels.corpora import read_relations_jsonl

    printed, _, code = output(page_runs, "docs/relations_jsonl.md", "What a record becomes")
    claimed = [line.split("  # ")[1] for line in code.splitlines() if line.startswith("print(")]
    assert printed.splitlines() == claimed
    example = next(b for b in BLOCKS if b.page == "docs/relations_jsonl.md" and b.language == "jsonl")
    (tmp_path / "example.jsonl").write_text(example.code, encoding="utf-8")
    counts = Counter()
    docs = list(read_relations_jsonl(tmp_path / "example.jsonl", counts=counts))
    assert len(docs) == 2 and counts["rejected"] == 1 and counts["relations"] == 1


@uses("docs/guide/question_classification.md", "3. Use the pipeline")
def test_the_trained_question_classifier_classifies(page_runs):
    _, names, _ = output(page_runs, "docs/guide/question_classification.md", "3. Use the pipeline")
    cats = names["doc"].cats
    assert set(cats) <= {"ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"} and len(cats) >= 5
    assert abs(sum(cats.values()) - 1) < 1e-4


@uses("docs/guide/relations_jsonl.md", "2. Train and evaluate", language="sh")
def test_the_relations_guide_trains_the_samples_relations_and_evaluates_them(page_runs, tmp_path):
    """configs/relations.cfg learns the sample's relations in the guide's 40 steps;
    ``evaluate relations`` scores the dev corpus as training did (the gold entities
    given), from the JSONL or its DocBin; ``spacy evaluate`` reads the DocBin too."""
    import json

    import spacy
    from spacy_cli import spacy_command

    from spacy_convkernels.cli import main
    from spacy_convkernels.ml.kernel_blocks import blocks_of

    block = find("docs/guide/relations_jsonl.md", "2. Train and evaluate", language="sh")
    run = page_runs(block)
    printed = run.run_to(block)
    header = next(line for line in printed.splitlines() if line.startswith("E    #"))
    assert "REL_MICRO_F" in header and "ENTS" not in header, header  # no empty column of a ner it lacks
    assert "precision  recall     F1  support  threshold" in printed  # evaluate relations' table
    best = run.directory / "training" / "relations" / "model-best"
    trained = json.loads((best / "meta.json").read_text())["performance"]
    assert trained["rel_micro_f"] >= 0.8
    scores = json.loads((run.directory / "scores.json").read_text())
    micro = ("rel_micro_p", "rel_micro_r", "rel_micro_f")
    assert [scores[key] for key in micro] == [trained[key] for key in micro]
    component = spacy.load(best).get_pipe("kernel_relations")
    assert set(component.labels) == {"ACTIVATES", "BINDS", "INHIBITS", "PHOSPHORYLATES"}
    assert [b.name for b in blocks_of(component.model.get_ref("kernel_features"))] == ["candidate_kernel_svm"]
    docbin, again = tmp_path / "dev.spacy", tmp_path / "again.json"
    assert main(["convert", str(run.directory / "corpus" / "dev.jsonl"), "-o", str(docbin)]) == 0
    assert main(["evaluate", "relations", str(best), str(docbin), "-o", str(again), "--quiet"]) == 0
    assert [json.loads(again.read_text())[key] for key in micro] == [trained[key] for key in micro]
    metrics = tmp_path / "metrics.json"
    code, printed = spacy_command(["evaluate", str(best), str(docbin), "--output", str(metrics)])
    assert code == 0 and "rel_micro_f" in json.loads(metrics.read_text()), printed[-3000:]


@uses("docs/guide/relations_jsonl.md", "4. From raw text", language="sh")
def test_the_relations_guide_trains_a_ner_beside_the_relations_for_raw_text(page_runs):
    """The relations_raw_text config puts md's ner, trained in the same run on the sample's
    entities, before kernel_relations, which trained on the given ones (the span group):
    without them it would have no candidates. Training's dev scores are those of raw text,
    as ``evaluate relations --entities predicted`` gives them, and ``spacy evaluate
    --spans-key relations`` prints them in its span rows."""
    import json

    import spacy

    block = find("docs/guide/relations_jsonl.md", "4. From raw text", language="sh")
    run = page_runs(block)
    printed = run.run_to(block)
    best = run.directory / "training" / "raw" / "model-best"
    nlp = spacy.load(best)
    assert nlp.pipe_names[-2:] == ["ner", "kernel_relations"] and "GENE" in nlp.get_pipe("ner").labels
    assert set(nlp.get_pipe("kernel_relations").labels) == {"ACTIVATES", "BINDS", "INHIBITS", "PHOSPHORYLATES"}
    trained = json.loads((best / "meta.json").read_text())["performance"]
    scores = json.loads((run.directory / "raw_scores.json").read_text())
    micro = ("rel_micro_p", "rel_micro_r", "rel_micro_f")
    assert [scores[key] for key in micro] == [trained[key] for key in micro]
    assert "NER P" in printed and "SPAN F" in printed and "SPANS (per type)" in printed, printed
    span_f = float(printed.split("SPAN F")[1].split()[0])
    assert span_f == round(100 * trained["rel_micro_f"], 2)


@uses("docs/guide/relations_jsonl.md", "3. Score new text")
def test_the_trained_relation_extractor_scores_the_given_entities(page_runs):
    """The block prints the component's predictions: the labels at or above their thresholds."""
    printed, names, _ = output(page_runs, "docs/guide/relations_jsonl.md", "3. Score new text")
    doc, relations = names["doc"], names["relations"]
    assert [e.text for e in doc.ents] == ["RAF", "MEK1", "ERK2"]
    labels = {"ACTIVATES", "BINDS", "INHIBITS", "PHOSPHORYLATES"}
    assert all(set(scores) == labels for scores in doc._.kernel_rel.values())
    expected = [
        f"{doc[head].text} -> {doc[child].text} {label} {round(score, 2)}"
        for (head, child), scores in sorted(doc._.kernel_rel.items())
        for label, score in scores.items()
        if score >= relations.thresholds[label]
    ]
    assert printed.splitlines() == expected and expected, printed
