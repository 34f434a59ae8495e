"""Broken files for the reader tests."""

import gzip

# a gzip member whose deflate data starts with a block of the reserved type 3: zlib.error
BAD_DEFLATE = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\x07\x00\x00\x00"


def gzip_then_broken(text: str) -> bytes:
    """``text`` gzipped, followed by a second gzip member whose deflate stream is corrupt."""
    return gzip.compress(text.encode("utf-8")) + BAD_DEFLATE
