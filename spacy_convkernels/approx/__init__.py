"""Approximations that turn kernels into vectors or codes."""

from .klsh import KLSH, hamming_distances, unpack_codes
from .landmarks import GramColumns, KernelColumns, StructureColumns, select_landmarks
from .nystroem import Nystroem

__all__ = [
    "Nystroem",
    "KLSH",
    "unpack_codes",
    "hamming_distances",
    "select_landmarks",
    "KernelColumns",
    "GramColumns",
    "StructureColumns",
]
