"""Files written whole or not at all, and never over an input.

    check_outputs(inputs={"input": source}, outputs={"output": target, "--dev": dev})
    with replacing(target) as temporary:
        write(temporary)

:func:`check_outputs` refuses, before any work, an output path that is one of the
inputs or another output of the same run (the same file however it is spelled:
``out.spacy``, ``./out.spacy``, a symbolic link), in one line naming both.
:func:`replacing` gives a temporary name beside the output (same directory, so the
final rename stays on one file system; same suffix, so writers that go by the suffix
keep their format) and renames it onto the output only when the block ends without an
exception: a failure, or Ctrl-C, leaves an earlier file at the output untouched and no
partial file behind.
"""

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from .errors import InvalidParameterError


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (an existing one, or the same resolved path)."""
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def check_outputs(*, inputs: Mapping[str, Path | None], outputs: Mapping[str, Path | None]) -> None:
    """Refuse an output that is an input, a directory, or another output (see the module);
    names are the options or arguments as the user wrote them, None values are left out."""
    given_inputs = {name: Path(path) for name, path in inputs.items() if path is not None}
    given_outputs = {name: Path(path) for name, path in outputs.items() if path is not None}
    seen: dict[str, Path] = {}
    for name, path in given_outputs.items():
        if path.is_dir():
            raise InvalidParameterError(f"{name} {path} is a directory; give a file name")
        for other, input_path in given_inputs.items():
            if same_file(path, input_path):
                raise InvalidParameterError(f"{name} {path} is the input {other} {input_path}; it would be overwritten")
        for other, output_path in seen.items():
            if same_file(path, output_path):
                raise InvalidParameterError(f"{name} {path} and {other} {output_path} are the same file")
        seen[name] = path


@contextmanager
def replacing(path: Path | str) -> Iterator[Path]:
    """A temporary path to write, renamed onto ``path`` on success (see the module)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix or ".tmp", dir=path.parent)
    os.close(handle)
    temporary = Path(name)
    os.chmod(temporary, 0o666 & ~_umask())  # as a file the user opened himself, not mkstemp's 0600
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
