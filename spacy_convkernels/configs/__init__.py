"""The spaCy training configs installed with the package: ``spacy-convkernels config``
lists them and writes one out (as ``spacy init config`` writes spaCy's), so that a user
of the wheel has what the guides train with.

    config_path("relations")  # the installed relations.cfg
    summary("relations")      # the first line of its header

Each file's header says what it trains, the data it expects and the commands to run."""

from importlib import resources
from pathlib import Path

from ..errors import InvalidParameterError


def names() -> list[str]:
    """The names of the shipped configs (their files without ``.cfg``), sorted."""
    return sorted(path.name.removesuffix(".cfg") for path in _folder().iterdir() if path.name.endswith(".cfg"))


def config_path(name: str) -> Path:
    """The installed file of the config ``name`` (one of :func:`names`)."""
    if name not in names():
        raise InvalidParameterError(f"no shipped config named {name!r}; the configs: {', '.join(names())}")
    return _folder() / f"{name}.cfg"


def summary(name: str) -> str:
    """What the config ``name`` trains: the first line of its header, without the ``#``."""
    with config_path(name).open(encoding="utf-8") as file:
        return file.readline().lstrip("#").strip()


def _folder() -> Path:
    return Path(str(resources.files(__name__)))
