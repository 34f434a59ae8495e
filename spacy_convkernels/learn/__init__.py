"""Learners over structure kernels: k-NN (exact and hashed), KLSH forests, label-weight learning."""

from .forest import KLSHForestClassifier
from .knn import KernelKNeighborsClassifier, kernel_knn_graph
from .nonstationary import NonstationaryKernelLearner

__all__ = ["KernelKNeighborsClassifier", "kernel_knn_graph", "KLSHForestClassifier", "NonstationaryKernelLearner"]
