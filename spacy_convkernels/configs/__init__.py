"""The spaCy training configs and projects installed with the package: ``spacy-convkernels
config`` lists the configs and writes one out (as ``spacy init config`` writes spaCy's),
``spacy-convkernels project`` writes a project out (as ``spacy project clone`` fetches
one), so that a user of the wheel has what the guides train with.

    config_path("relations")   # the installed relations.cfg
    summary("relations")       # the first line of its header
    project_path("relations")  # the folder of the relations project (project.yml, README.md)

Each config's header says what it trains, the data it expects and the commands to run;
each project's ``project.yml`` its commands and workflows (weasel's format)."""

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


def project_names() -> list[str]:
    """The names of the shipped projects (their folders under ``projects/``), sorted."""
    return sorted(path.name for path in (_folder() / "projects").iterdir() if (path / "project.yml").is_file())


def project_path(name: str) -> Path:
    """The installed folder of the project ``name`` (one of :func:`project_names`)."""
    if name not in project_names():
        raise InvalidParameterError(f"no shipped project named {name!r}; the projects: {', '.join(project_names())}")
    return _folder() / "projects" / name


def _folder() -> Path:
    return Path(str(resources.files(__name__)))
