"""Kept for the scripts that import it from here: result files live in ``common``."""

from common import FINDINGS, ResultsFile, write_page  # noqa: F401
