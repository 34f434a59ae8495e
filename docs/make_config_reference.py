"""Write ``docs/config_reference.md`` from the package's registrations: ``python docs/make_config_reference.py``."""

from pathlib import Path

from spacy_convkernels.config_reference import config_reference

Path(__file__).with_name("config_reference.md").write_text(config_reference(), encoding="utf-8")
