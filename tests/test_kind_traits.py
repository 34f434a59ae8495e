"""The engine's one table of kernel kinds (``_settings.KIND_TRAITS``) covers every kind and
agrees with what each kernel class asks of the engine."""

import inspect

import pytest

from spacy_convkernels import kernels
from spacy_convkernels.kernels._packing import PackedForests, PackedSequences, PackedTrees
from spacy_convkernels.kernels._settings import KIND_TRAITS, BucketRule, KernelKind

CLASSES = [
    cls
    for name in kernels.__all__
    if inspect.isclass(cls := getattr(kernels, name)) and issubclass(cls, kernels.Kernel) and cls is not kernels.Kernel
]


def test_every_kind_has_one_row():
    assert set(KIND_TRAITS) == set(KernelKind)
    for kind, traits in KIND_TRAITS.items():
        assert traits.operands in (PackedTrees, PackedSequences, PackedForests), kind
        assert traits.bucket_rule in set(BucketRule), kind
        assert traits.table in ("similarity", "tuples", "weights", None), kind
        assert bool(traits.match_keys) == (traits.operands is PackedTrees), kind
        assert not traits.aligned_by_position or traits.sums_of_deltas, kind


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_each_kernel_class_asks_for_what_its_row_allows(cls):
    spec, _ = cls()._configuration()
    traits = KIND_TRAITS[spec.kind]
    assert (spec.match_key in traits.match_keys) if traits.match_keys else spec.match_key in (None, "label")


def test_explain_and_the_delta_table_follow_the_row(monkeypatch):
    """A kind whose row says it does not sum Deltas is refused by explain, whatever it is."""
    from spacy_convkernels.kernels import explain as explain_module
    from spacy_convkernels.structures import Tree

    tree = Tree.from_string("(S (A a) (B b))")
    kernel = kernels.PartialTreeKernel()
    assert explain_module.explain(kernel, tree, tree).value > 0
    monkeypatch.setitem(
        explain_module.KIND_TRAITS,
        KernelKind.PARTIAL_TREE,
        KIND_TRAITS[KernelKind.PARTIAL_TREE]._replace(sums_of_deltas=False),
    )
    with pytest.raises(kernels.InvalidParameterError, match="explain supports the tree kernels"):
        explain_module.explain(kernel, tree, tree)
