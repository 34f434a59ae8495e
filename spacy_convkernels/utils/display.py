"""Text shown to people, whatever it holds: a label, a path or a message from the input
may carry control characters (a terminal acts on ``ESC [ 2 J`` or an OSC title sequence;
XML 1.0 forbids most C0 controls even as character references) or characters a stream's
encoding cannot represent.

:func:`visible` writes such characters as Python escapes (``\\x1b``); the command line
prints its listings, errors and warnings through it, and :mod:`~spacy_convkernels.kernels.explain`
draws its labels with it. :func:`tolerant_streams` keeps standard output and standard
error writing when their encoding (``PYTHONIOENCODING=ascii``, a Latin-1 locale) cannot
represent the text: such characters are written as escapes, and standard output's are
reported."""

import codecs
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from html import escape

#: What :func:`visible` escapes: C0 and C1 controls and DEL (a terminal acts on them; XML
#: 1.0 forbids C0 but tab, line feed and carriage return), lone surrogates (no encoding
#: writes them; undecodable bytes of a file name are read as such), U+FFFE and U+FFFF (not
#: XML characters), the line and paragraph separators, and the bidirectional formatting
#: characters (they reorder the text around them on screen).
HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def visible(text: str) -> str:
    """``text`` with every :data:`HIDDEN` character written as its Python escape
    (``\\x1b``, ``\\u202e``): safe to print to a terminal and to put in XML. Other text,
    backslashes included, is kept as it is."""
    return HIDDEN.sub(_escape, text)


def markup(text: str) -> str:
    """``text`` for HTML or SVG: :func:`visible`, then escaped."""
    return escape(visible(text))


def _escape(found: re.Match) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


@contextmanager
def tolerant_streams() -> Iterator[list[str]]:
    """For the block, ``sys.stdout`` and ``sys.stderr`` write a character their encoding
    cannot represent as a backslash escape (``\\xe9``) instead of raising
    UnicodeEncodeError (a stream's own handler, such as ``surrogateescape`` under a C
    locale, is tried first). Yields a list that gets standard output's encoding when it
    escaped something, for the caller to say so. A stream that cannot be reconfigured
    (not a text file) is left as it is; both are put back after the block."""
    escaped: list[str] = []
    earlier = {}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        errors = getattr(stream, "errors", None)
        if not hasattr(stream, "reconfigure") or not isinstance(errors, str):
            continue
        handler = f"spacy_convkernels.{name}"
        codecs.register_error(handler, _escaping(errors, escaped if name == "stdout" else None, stream))
        try:
            stream.reconfigure(errors=handler)
        except (ValueError, OSError):  # a closed stream, or one that refuses
            continue
        earlier[name] = (stream, errors)
    try:
        yield escaped
    finally:
        for stream, errors in earlier.values():
            try:
                stream.reconfigure(errors=errors)
            except (ValueError, OSError):
                pass


def _escaping(errors: str, escaped: list[str] | None, stream):
    """An encoding error handler: ``errors`` (a stream's own) where it can, else a
    backslash escape, noting the stream's encoding in ``escaped``."""
    own = codecs.lookup_error(errors) if errors not in ("strict", "") else None

    def handle(error: UnicodeError) -> tuple[str | bytes, int]:
        if own is not None:
            try:
                return own(error)
            except UnicodeError:
                pass
        if escaped is not None and not escaped:
            escaped.append(str(getattr(stream, "encoding", error.encoding)))  # type: ignore[attr-defined]
        return codecs.backslashreplace_errors(error)

    return handle
