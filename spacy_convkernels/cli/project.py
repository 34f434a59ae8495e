"""Write a spaCy project installed with the package into a folder, to run on your data.

    python -m spacy_convkernels project
    python -m spacy_convkernels project relations -o my_relations

Without NAME, prints each project's name and title. With NAME, writes its ``project.yml``
and ``README.md`` into the ``-o`` (``--output``) folder (made if needed; files of those
names there are replaced). Then, in that folder, ``python -m weasel run all --vars.train
...`` (or ``python -m spacy project run all``) runs its workflow; ``python -m weasel
document`` lists its commands. The relations project writes the shipped config, trains
it on your relations JSONL, evaluates it, draws each label's precision-recall curve and
packages the pipeline (``spacy package``).
"""

import argparse
import shutil
from pathlib import Path

FILES = ("project.yml", "README.md")


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("name", nargs="?", default=None, help="a shipped project (without NAME: list them)")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="DIR", help="the folder to write it to")


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    from ..configs import project_path
    from ..errors import InvalidParameterError

    if arguments.name is None:
        if arguments.output is not None:
            raise InvalidParameterError(f"-o {arguments.output}: name the project to write (project NAME -o DIR)")
        return {}, {}
    if arguments.output is None:
        raise InvalidParameterError(f"-o/--output is required: the folder to write the {arguments.name} project to")
    source = project_path(arguments.name)
    return {"name": source}, {f"output {name}": arguments.output / name for name in FILES}


def run(arguments: argparse.Namespace) -> None:
    import srsly

    from ..configs import project_names, project_path
    from ..utils.outputs import replacing_all
    from .config import print_listing

    if arguments.name is None:
        print_listing({name: srsly.read_yaml(project_path(name) / "project.yml")["title"] for name in project_names()})
        return
    source = project_path(arguments.name)
    arguments.output.mkdir(parents=True, exist_ok=True)
    with replacing_all({name: arguments.output / name for name in FILES}) as temporaries:
        for name, temporary in temporaries.items():
            shutil.copyfile(source / name, temporary)
    print(f"the {arguments.name} project written to {arguments.output}: cd there and run python -m weasel run all")
