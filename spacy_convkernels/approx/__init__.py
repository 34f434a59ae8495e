"""Approximations that turn kernels into vectors or codes."""

from .klsh import KLSH, hamming_distances, unpack_codes
from .nystroem import Nystroem

__all__ = ["Nystroem", "KLSH", "unpack_codes", "hamming_distances"]
