"""A benchmark's results as they come: rows by key, kept in a JSON file (``--results``)
that several runs of one script may share, and the page drawn from them."""

import json
from collections.abc import Callable
from pathlib import Path

from spacy_convkernels.utils.outputs import replacing

FINDINGS = "## Findings"  # a page's hand-written section, below the tables


class ResultsFile(dict):
    """The rows of ``path`` (none when it does not exist yet); :meth:`record` adds one."""

    def __init__(self, path: Path, *, draw: Callable[[dict], None]):
        super().__init__(json.loads(path.read_text()) if path.exists() else {})
        self.path = path
        self.draw = draw

    def record(self, key: str, **values) -> None:
        """Keep the row, with any row another run has written meanwhile; write the file
        (a temporary file renamed) and draw the page."""
        if self.path.exists():
            written = json.loads(self.path.read_text())
            self.update({name: row for name, row in written.items() if name not in self})
        self[key] = values
        with replacing(self.path) as temporary:
            temporary.write_text(json.dumps(self, indent=1))
        self.draw(self)
        print(key, values, flush=True)


def write_page(path: Path, lines: list[str]) -> None:
    """Write the page of ``lines``; the hand-written section that starts at ``## Findings``
    of the page already there stays below them."""
    kept = ""
    if path.exists():
        text = path.read_text(encoding="utf-8")
        kept = text[text.index(FINDINGS) :] if FINDINGS in text else ""
    with replacing(path) as temporary:
        temporary.write_text("\n".join(lines) + "\n" + ("\n" + kept if kept else ""), encoding="utf-8")
