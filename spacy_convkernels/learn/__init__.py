"""Learners over structure kernels: k-NN (exact and hashed), KLSH forests, exact-kernel SVMs, label-weight learning;
cluster purity."""

from .klsh_forest import KLSHForestClassifier
from .knn import KernelKNeighborsClassifier, kernel_knn_graph
from .metrics import cluster_purity
from .nonstationary import NonstationaryKernelLearner
from .svm import KernelSVC, fair_one_vs_all, out_of_fold_decisions

__all__ = [
    "KernelKNeighborsClassifier",
    "kernel_knn_graph",
    "KLSHForestClassifier",
    "KernelSVC",
    "fair_one_vs_all",
    "NonstationaryKernelLearner",
    "out_of_fold_decisions",
    "cluster_purity",
]
