"""Decompression bombs for the tests and bench/decompression_bombs.py: small files whose
members or payloads expand to gigabytes of zeros, written without compressing those bytes
(every 16 MiB of zeros is the same deflate block, made once)."""

import io
import struct
import zlib

import numpy as np

BLOCK = 1 << 24  # zeros per repeated deflate block
_ZEROS = bytes(BLOCK)


def _raw_deflate(data: bytes, *, final: bool) -> bytes:
    """``data`` as raw deflate blocks that stand alone (byte-aligned, no reference back)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if final else zlib.Z_FULL_FLUSH)


_ZERO_BLOCK = _raw_deflate(_ZEROS, final=False)  # 16,315 bytes


def deflated_zeros(prefix: bytes, zeros: int) -> bytes:
    """A raw deflate stream of ``prefix`` followed by ``zeros`` zero bytes (about 1/1,028 of them)."""
    return (
        _raw_deflate(prefix, final=False)
        + _ZERO_BLOCK * (zeros // BLOCK)
        + _raw_deflate(bytes(zeros % BLOCK), final=True)
    )


def crc_of_zeros(prefix: bytes, zeros: int) -> int:
    """The CRC-32 of ``prefix`` followed by ``zeros`` zero bytes (0.3 s a GB)."""
    crc = zlib.crc32(prefix)
    for _ in range(zeros // BLOCK):
        crc = zlib.crc32(_ZEROS, crc)
    return zlib.crc32(bytes(zeros % BLOCK), crc)


def zlib_zeros(prefix: bytes, zeros: int) -> bytes:
    """A zlib stream (a DocBin's compression) of ``prefix`` followed by ``zeros`` zero bytes."""
    a, b = zlib.adler32(prefix) & 0xFFFF, zlib.adler32(prefix) >> 16
    adler = ((b + zeros * a) % 65521) << 16 | a  # zeros leave the sum a as it is and add a to b each
    return b"\x78\xda" + deflated_zeros(prefix, zeros) + struct.pack(">I", adler)


def npy_header(shape: tuple, dtype: str = "<f8") -> bytes:
    """The ``.npy`` header (format 1.0) of an array of ``shape`` and ``dtype``."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": dtype, "fortran_order": False, "shape": shape})
    return out.getvalue()


def zip64(members: list[tuple[str, int, bytes, int, int]]) -> bytes:
    """A zip archive (zip64 records throughout) of ``(name, method, stored bytes, CRC-32,
    declared size)`` members."""
    body, directory = bytearray(), bytearray()
    for name, method, data, crc, size in members:
        encoded, offset = name.encode(), len(body)
        extra = struct.pack("<HHQQ", 1, 16, size, len(data))
        body += struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 45, 0, method, 0, 0x21, crc, 2**32 - 1, 2**32 - 1, len(encoded), len(extra)
        )
        body += encoded + extra + data
        extra = struct.pack("<HHQQQ", 1, 24, size, len(data), offset)
        directory += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            45,
            45,
            0,
            method,
            0,
            0x21,
            crc,
            2**32 - 1,
            2**32 - 1,
            len(encoded),
            len(extra),
            0,
            0,
            0,
            0,
            2**32 - 1,
        )
        directory += encoded + extra
    count, end = len(members), len(body) + len(directory)
    tail = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, len(directory), len(body))
    tail += struct.pack("<IIQI", 0x07064B50, 0, end, 1)
    tail += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 2**32 - 1, 2**32 - 1, 0)
    return bytes(body + directory + tail)


def stored(name: str, data: bytes) -> tuple[str, int, bytes, int, int]:
    """A stored zip member."""
    return name, 0, data, zlib.crc32(data), len(data)


def deflated_zero_array(name: str, shape: tuple, dtype: str = "<f8") -> tuple[str, int, bytes, int, int]:
    """A deflated ``.npy`` member of zeros of ``shape`` and ``dtype``: 3.1 MB for 20,000 x 20,000 floats."""
    header = npy_header(shape, dtype)
    zeros = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    return name, 8, deflated_zeros(header, zeros), crc_of_zeros(header, zeros), len(header) + zeros
