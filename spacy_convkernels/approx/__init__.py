"""Approximations that turn kernels into vectors or codes."""
from .nystroem import Nystroem

__all__ = ["Nystroem"]
