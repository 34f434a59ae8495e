"""List the spaCy training configs installed with the package, or write one out.

    python -m spacy_convkernels config
    python -m spacy_convkernels config relations -o relations.cfg
    python -m spacy_convkernels config bionlp_relations

Without NAME, prints each config's name and what it trains. With NAME, writes that config
to ``-o`` (``--output``), or prints it; then ``python -m spacy train relations.cfg
--paths.train ...`` trains it, as its header says. The configs source spaCy's
``en_core_web_md`` by its package name (``--paths.md_model PATH`` takes a model folder).
"""

import argparse
import shutil
from pathlib import Path


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("name", nargs="?", default=None, help="a shipped config (without NAME: list them)")
    parser.add_argument("-o", "--output", type=Path, default=None, help="the file to write (default: print it)")


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    from ..configs import config_path
    from ..errors import InvalidParameterError

    if arguments.name is None:
        if arguments.output is not None:
            raise InvalidParameterError(f"-o {arguments.output}: name the config to write (config NAME -o FILE)")
        return {}, {}
    return {"name": config_path(arguments.name)}, {"--output": arguments.output}


def run(arguments: argparse.Namespace) -> None:
    from ..configs import config_path, names, summary
    from ..utils.outputs import replacing

    if arguments.name is None:
        print_listing({name: summary(name) for name in names()})
        return
    source = config_path(arguments.name)
    if arguments.output is None:
        print(source.read_text(encoding="utf-8"), end="")
        return
    with replacing(arguments.output, name="--output") as temporary:
        shutil.copyfile(source, temporary)


def print_listing(rows: dict[str, str]) -> None:
    """Each shipped thing's name and what it is, one a line, aligned (config and project)."""
    width = max(map(len, rows), default=0)
    for name, about in rows.items():
        print(f"{name:<{width}}  {about}")
