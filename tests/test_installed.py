"""What a user installs carries what the clone ships: every config, project and sample of
``spacy_convkernels/`` is in the sdist, in the wheel built from it and in the package
installed from the wheel, byte for byte. The wheel lane of ``.ci/run`` (``.ci/installed``)
runs these with ``SPACY_CONVKERNELS_DIST`` naming the folder of the two distributions, in a
virtual environment where the wheel is installed, outside the clone; elsewhere they skip."""

import os
import tarfile
import zipfile
from pathlib import Path

import pytest
from data_paths import ROOT

import spacy_convkernels

DIST = os.environ.get("SPACY_CONVKERNELS_DIST")
pytestmark = pytest.mark.skipif(DIST is None, reason="run by .ci/installed, with the distributions it builds")
PACKAGE = ROOT / "spacy_convkernels"
SHIPPED = ("configs", "data")  # the folders of shipped files beside the code


def shipped() -> list[str]:
    """The files of the clone's shipped folders, relative to the package (no code, no caches)."""
    return sorted(
        path.relative_to(PACKAGE).as_posix()
        for folder in SHIPPED
        for path in (PACKAGE / folder).rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    )


def test_there_are_shipped_files_of_every_kind():
    files = shipped()
    assert "configs/relations.cfg" in files and "configs/projects/relations/project.yml" in files
    assert "data/relations-sample/relations.jsonl" in files and "data/sample-parses/parses.spacy" in files


def test_the_installed_package_is_the_wheels_not_the_clone():
    installed = Path(spacy_convkernels.__file__).resolve().parent
    assert not installed.is_relative_to(ROOT), installed
    assert "site-packages" in installed.parts


def test_the_installed_package_carries_every_shipped_file():
    installed = Path(spacy_convkernels.__file__).resolve().parent
    missing = [name for name in shipped() if not (installed / name).is_file()]
    assert not missing, missing
    changed = [name for name in shipped() if (installed / name).read_bytes() != (PACKAGE / name).read_bytes()]
    assert not changed, changed


def test_the_wheel_and_the_sdist_carry_every_shipped_file():
    (wheel,) = Path(DIST).glob("spacy_convkernels-*.whl")
    (sdist,) = Path(DIST).glob("spacy_convkernels-*.tar.gz")
    in_wheel = {name.removeprefix("spacy_convkernels/") for name in zipfile.ZipFile(wheel).namelist()}
    with tarfile.open(sdist) as archive:
        in_sdist = {
            name.split("/spacy_convkernels/", 1)[-1] for name in archive.getnames() if "/spacy_convkernels/" in name
        }
    assert [name for name in shipped() if name not in in_wheel] == []
    assert [name for name in shipped() if name not in in_sdist] == []
