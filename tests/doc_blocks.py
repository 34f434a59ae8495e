"""The code blocks of README.md and docs/ (docs/results/ aside), and how the tests run them
(tests/test_doc_examples.py, tests/test_readme.py).

A page's blocks run in order, as a reader would run them, in one working directory of
its own (a temporary ``clone`` folder beside a ``shared`` link to the project's data, so
``../shared/...`` reads them; a config comes from ``spacy-convkernels config``, as a user
of the wheel has it):

- ``python``: executed in this process, in one namespace per page (a later block may use
  what an earlier one defined), its printed output kept;
- ``sh``, ``bash``: run by ``bash -euo pipefail``, ``python`` and ``spacy-convkernels``
  being this environment's; every file a command names with ``-o``/``--output`` must
  exist afterwards;
- ``ini``: parsed as a spaCy config; ``json``: parsed; ``jsonl``: each line parsed;
- ``text`` or no language: not code (layouts, output).

An HTML comment on the line before a block says who runs it instead: ``<!-- skip:
reason -->`` (nobody: keep it rare), ``<!-- ci: ... -->`` (``.ci/run``), ``<!-- test: ...
(tests/FILE.py) -->`` (that test file).

spaCy's ``en_core_web_md`` is named by its package name, as users install it
(``python -m spacy download en_core_web_md``). When it is not installed, the blocks get
it as a package all the same: a folder on ``sys.path`` (and on ``PYTHONPATH`` for the
commands) holds a package ``en_core_web_md`` whose ``load`` loads
``../shared/models/en_core_web_md-3.8.0``, with the ``dist-info`` that makes
``spacy.util.is_package`` find it.

A block that names ``en_core_web_md``, trains or debugs a shipped config (they source it;
directly or through a project's ``weasel run``) or names ``../shared`` is marked
``shared``; a shell block (each command starts a Python process that imports spaCy:
seconds), or one that trains or starts a Dask cluster, ``slow``. A
block of a guide runs the page's blocks before it, so it carries their marks too: put a
page's fast blocks first. README.md's blocks run each on its own (a reader copies one).
"""

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from data_paths import ROOT, SHARED, need_shared, require_extra, skip_unless_ci

MD_MODEL = "en_core_web_md"
MD_VERSION = "3.8.0"
MD_FOLDER = f"models/{MD_MODEL}-{MD_VERSION}"  # under ../shared

# what the runner understands; any other language fails test_every_block_has_a_known_language
RUN_LANGUAGES = {"python", "sh", "bash"}
CHECK_LANGUAGES = {"ini", "json", "jsonl"}
TEXT_LANGUAGES = {"", "text"}
SHELL_LANGUAGES = {"sh", "bash"}

SLOW_PATTERNS = ("spacy train", "weasel run", "LocalCluster", "--local-cluster", "distributed.connect")
# the shipped configs source en_core_web_md: a block that trains or debugs one (itself or
# through the relations project's workflow) needs it too
MD_PATTERNS = (MD_MODEL, "spacy train", "spacy debug", "weasel run")
# README.md's blocks each run on their own (a reader copies one); a guide's run in order
STANDALONE_PAGES = {"README.md"}
EXTRAS = {  # a pattern in a block -> (module, extra of pyproject.toml)
    r"\bimport networkx|networkx_graphs|_to_networkx": ("networkx", "networkx"),
    r"spacy_convkernels\.plots|^spacy-convkernels plot |python -m spacy_convkernels plot ": ("matplotlib", "plot"),
    r"spacy_convkernels(\.| import )distributed|--local-cluster|--scheduler|dask": ("dask.distributed", "dask"),
    r"_transformer\.cfg|spacy_transformers": ("spacy_transformers", "transformers"),
    r"set_output\(transform=\"pandas\"\)": ("pandas", "pandas"),
}


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/ but docs/results/, in a fixed order."""
    docs = sorted(path for path in (ROOT / "docs").rglob("*.md") if "results" not in path.relative_to(ROOT).parts)
    return [ROOT / "README.md", *docs]


@dataclass
class Block:
    page: str  # relative to the repository
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    directive: str | None = None  # "skip: ...", "ci: ...", "test: ..." from the comment before it
    heading: str | None = None  # the page's last "## " heading before it
    marks: set = field(default_factory=set)  # "shared", "slow"

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def runs_here(self) -> bool:
        """Run (or checked) by tests/test_doc_examples.py, not elsewhere nor skipped."""
        return self.directive is None and self.language not in TEXT_LANGUAGES


FENCE = re.compile(r"^( *)```([\w-]*)[^\n]*\n(.*?)^\1```[ \t]*$", re.M | re.S)
DIRECTIVE = re.compile(r"^\s*<!-- ((?:skip|ci|test):.*?) -->\s*$")


def blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced blocks of a page (under ``root``), with the marks each needs (its own and
    its page's earlier)."""
    text = path.read_text(encoding="utf-8")
    page = path.relative_to(root).as_posix()
    found, inherited = [], set()
    for match in FENCE.finditer(text):
        indent, language, body = match.group(1), match.group(2), match.group(3)
        code = "\n".join(line[len(indent) :] for line in body.splitlines()) + "\n"
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        directive = DIRECTIVE.match(before)
        headings = re.findall(r"^## (.*)$", text[: match.start()], re.M)
        block = Block(
            page=page,
            line=text.count("\n", 0, match.start()) + 1,
            language=language,
            code=code,
            directive=directive.group(1) if directive else None,
            heading=headings[-1] if headings else None,
        )
        if block.runs_here:
            if page in STANDALONE_PAGES:
                inherited = set()
            inherited |= own_marks(block)
            block.marks = set(inherited)
        found.append(block)
    return found


def own_marks(block: Block) -> set:
    marks = set()
    if needs_md(block) or "../shared" in block.code:
        marks.add("shared")
    if block.language in SHELL_LANGUAGES or any(pattern in block.code for pattern in SLOW_PATTERNS):
        marks.add("slow")
    return marks


def needs_md(block: Block) -> bool:
    return any(pattern in block.code for pattern in MD_PATTERNS)


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in blocks(path)]


def md_package(directory: Path) -> Path | None:
    """A folder that makes ``en_core_web_md`` an installed package loading ../shared's copy
    (None when it is installed already, or ../shared lacks it)."""
    model = SHARED / MD_FOLDER
    if _installed(MD_MODEL) or not model.is_dir():
        return None
    package = directory / MD_MODEL
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(
        '"""en_core_web_md as an installed package would give it: a stand-in loading a folder."""\n\n'
        "from pathlib import Path\n\n"
        "from spacy.util import load_model_from_path\n\n"
        f"PATH = Path({str(model)!r})\n\n\n"
        "def load(**overrides):\n"
        "    return load_model_from_path(PATH, **overrides)\n",
        encoding="utf-8",
    )
    info = directory / f"{MD_MODEL}-{MD_VERSION}.dist-info"
    info.mkdir(exist_ok=True)
    metadata = f"Metadata-Version: 2.1\nName: {MD_MODEL}\nVersion: {MD_VERSION}\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    return directory


def _installed(name: str) -> bool:
    from importlib import metadata

    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


class PageRun:
    """The blocks of one page, run in order in one working directory and namespace (a
    page of ``STANDALONE_PAGES``: each block alone, in a namespace of its own); ``root``
    holds the page (the repository, or a test's own folder)."""

    def __init__(self, page: str, directory: Path, site: Path | None, root: Path = ROOT):
        self.page = page
        self.blocks = [block for block in blocks(root / page, root=root) if block.runs_here]
        self.directory = directory / "clone"
        self.directory.mkdir(parents=True)
        (directory / "shared").symlink_to(SHARED, target_is_directory=True)
        self.site = site
        self.namespace: dict = {"__name__": "__main__"}
        self.outputs: dict[int, str] = {}  # block line -> what it printed
        self.namespaces: dict[int, dict] = {}  # block line -> the names after it
        self.stopped: dict[int, tuple[bool, str]] = {}  # block line -> (True: skipped, False: failed; its message)

    def run_to(self, block: Block) -> str:
        """Run the page's blocks up to ``block`` (those not run yet); its printed output.
        A block that was skipped or failed is not run again: every test that asks for it,
        or for a later block of its page, skips or fails, naming it."""
        if self.page in STANDALONE_PAGES:
            needed = [block]
        else:
            needed = self.blocks[: [b.line for b in self.blocks].index(block.line) + 1]
        for current in needed:
            if current.line in self.outputs:
                continue
            if current.line in self.stopped:
                skipped, message = self.stopped[current.line]
                if current.line != block.line:
                    message = f"an earlier block of the page: {message}"
                if skipped:
                    pytest.skip(message)
                pytest.fail(message, pytrace=False)
            namespace = {"__name__": "__main__"} if self.page in STANDALONE_PAGES else self.namespace
            try:
                self.outputs[current.line] = run_block(current, self.directory, namespace, self.site)
            except pytest.skip.Exception as skip:
                self.stopped[current.line] = (True, f"{current.id} was skipped: {skip.msg}")
                raise
            except BaseException as error:
                first_line = str(error).partition("\n")[0]
                self.stopped[current.line] = (False, f"{current.id} failed: {type(error).__name__}: {first_line}")
                raise
            self.namespaces[current.line] = dict(namespace)  # the names as this block left them
        return self.outputs[block.line]


def prepare(block: Block) -> None:
    """Skip (fail under CI=true) when what the block needs is absent: ../shared, an extra."""
    if needs_md(block) and not _installed(MD_MODEL):
        if not (SHARED / MD_FOLDER).is_dir():  # a user without the model, as a newcomer without ../shared
            skip_unless_ci(
                f"{block.id} needs spaCy's {MD_MODEL}, a model users download (python -m spacy download "
                f"{MD_MODEL}): it is not installed, and {SHARED} holds no copy",
                "CI=true requires ../shared",
            )
        need_shared(MD_FOLDER)
    for relative in re.findall(r"\.\./shared/([^\s\"')]+)", block.code):
        need_shared(relative)
    for pattern, (module, extra) in EXTRAS.items():
        if re.search(pattern, block.code, re.M):
            require_extra(module, extra)


def run_block(block: Block, directory: Path, namespace: dict, site: Path | None) -> str:
    prepare(block)
    if block.language == "python":
        return run_python(block, directory, namespace, site)
    if block.language in SHELL_LANGUAGES:
        return run_shell(block, directory, site)
    check_data(block)
    return ""


def run_python(block: Block, directory: Path, namespace: dict, site: Path | None) -> str:
    printed = io.StringIO()
    cwd, path = os.getcwd(), list(sys.path)
    if site is not None:
        sys.path.insert(0, str(site))
    os.chdir(directory)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(block.code, block.id, "exec"), namespace)
    finally:
        os.chdir(cwd)
        sys.path[:] = path
    return printed.getvalue()


def run_shell(block: Block, directory: Path, site: Path | None) -> str:
    environment = dict(os.environ)
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    if site is not None:
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), environment.get("PYTHONPATH")]))
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=directory,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"{block.id} exited with {result.returncode}:\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr, f"{block.id}:\n{result.stderr[-3000:]}"
    for output in written_files(block.code):
        assert (directory / output).exists(), f"{block.id}: {output} was not written"
    return result.stdout


def written_files(code: str) -> list[str]:
    """The paths the block's commands name with -o/--output (after the shell joins lines)."""
    words = shlex.split(code.replace("\\\n", " "), comments=True)
    return [after for before, after in zip(words, words[1:]) if before in ("-o", "--output") and "$" not in after]


def check_data(block: Block) -> None:
    if block.language == "ini":  # a whole config or an excerpt: its parent sections added
        from spacy.util import Config

        sections = re.findall(r"^\[([^\]]+)\]", block.code, re.M)
        parents = {".".join(s.split(".")[:i]) for s in sections for i in range(1, s.count(".") + 1)}
        added = "".join(f"[{parent}]\n\n" for parent in sorted(parents - set(sections), key=len))
        Config().from_str(added + block.code, interpolate=False)
    elif block.language == "json":
        json.loads(block.code)
    elif block.language == "jsonl":
        for line in block.code.splitlines():
            if line.strip():
                json.loads(line)
