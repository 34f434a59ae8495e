"""``python -m spacy ARGUMENTS`` run in this process: spaCy's own command line (its typer
app), the same parsing and code, without a new process's imports (seconds each, torch and
transformers among them, as spaCy loads every installed package's factories)."""

from spacy.cli import app
from typer.testing import CliRunner


def spacy_command(arguments: list[str]) -> tuple[int, str]:
    """The exit code of ``python -m spacy ARGUMENTS`` and what it printed."""
    result = CliRunner().invoke(app, arguments, catch_exceptions=False)
    return result.exit_code, result.output
