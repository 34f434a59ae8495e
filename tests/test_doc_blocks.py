"""The page runner of tests/doc_blocks.py on small pages of its own: a block that was
skipped or failed skips or fails every test that asks for it again, naming it."""

import pytest
from doc_blocks import PageRun

FENCE = "```"
SKIPS = f'{FENCE}python\nimport pytest\n\nopen("ran", "a").write("x")\npytest.skip("no widget here")\n{FENCE}\n'
FAILS = f'{FENCE}python\nopen("ran", "a").write("x")\nraise ValueError("no widget")\n{FENCE}\n'
PRINTS = f'{FENCE}python\nprint("hello")\n{FENCE}\n'


def page_run(tmp_path, page: str, text: str) -> tuple[PageRun, list]:
    """A PageRun over ``text`` written as ``page`` in a folder of its own; its blocks."""
    root = tmp_path / "root"
    root.mkdir()
    (root / page).write_text(text, encoding="utf-8")
    run = PageRun(page, tmp_path / "run", None, root=root)
    return run, run.blocks


def times_run(run: PageRun) -> int:
    """How many times the blocks that write ``ran`` ran, together."""
    return len((run.directory / "ran").read_text())


def test_a_skipped_block_skips_the_tests_that_ask_for_it_again(tmp_path):
    run, (first, second) = page_run(tmp_path, "guide.md", f"# A guide\n\n{SKIPS}\n{PRINTS}")
    with pytest.raises(pytest.skip.Exception, match="no widget here"):
        run.run_to(first)
    with pytest.raises(pytest.skip.Exception) as again:
        run.run_to(first)
    assert str(again.value) == "guide.md:3 was skipped: no widget here"
    with pytest.raises(pytest.skip.Exception) as later:
        run.run_to(second)
    assert str(later.value) == "an earlier block of the page: guide.md:3 was skipped: no widget here"
    assert times_run(run) == 1


def test_a_failed_block_fails_the_tests_that_ask_for_it_again(tmp_path):
    run, (first, second) = page_run(tmp_path, "guide.md", f"# A guide\n\n{FAILS}\n{PRINTS}")
    with pytest.raises(ValueError, match="no widget"):
        run.run_to(first)
    for block in (first, second):
        with pytest.raises(pytest.fail.Exception, match="guide.md:3 failed: ValueError: no widget"):
            run.run_to(block)
    assert times_run(run) == 1


def test_a_readme_block_stops_only_itself(tmp_path):
    """README.md's blocks run each on its own: one skipped or failed leaves the others be."""
    run, (skips, fails, prints) = page_run(tmp_path, "README.md", f"# A package\n\n{SKIPS}\n{FAILS}\n{PRINTS}")
    assert run.run_to(prints) == "hello\n"
    with pytest.raises(pytest.skip.Exception, match="no widget here"):
        run.run_to(skips)
    with pytest.raises(ValueError, match="no widget"):
        run.run_to(fails)
    with pytest.raises(pytest.skip.Exception, match="^README.md:3 was skipped: no widget here$"):
        run.run_to(skips)
    with pytest.raises(pytest.fail.Exception, match="^README.md:10 failed: ValueError: no widget$"):
        run.run_to(fails)
    assert run.run_to(prints) == "hello\n"
    assert times_run(run) == 2  # each of the two blocks that write it, once
