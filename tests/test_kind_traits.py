"""The engine's one table of kernel kinds (``kinds.KIND_TRAITS``) covers every kind, agrees
with what each kernel class asks of the engine and with the engine's C constants."""

import re
from pathlib import Path

import pytest

from spacy_convkernels import kernels
from spacy_convkernels.kernels.kinds import KIND_TRAITS, BucketRule, Family, KernelKind


def test_every_kind_has_one_row():
    assert set(KIND_TRAITS) == set(KernelKind)
    for kind, traits in KIND_TRAITS.items():
        assert traits.family in set(Family), kind
        assert traits.bucket_rule in set(BucketRule), kind
        assert traits.table in ("similarity", "tuples", "weights", None), kind
        assert bool(traits.match_keys) == (traits.family is Family.TREE), kind
        # a tree kind without sums of Deltas is evaluated as Zelenko's, from the roots, on tuples
        assert traits.sums_of_deltas or traits.family is not Family.TREE or traits.table == "tuples", kind
        assert not traits.aligned_by_position or traits.sums_of_deltas, kind


@pytest.mark.parametrize("enum", [Family, BucketRule], ids=lambda enum: enum.__name__)
def test_the_engine_constants_are_the_table_values(enum):
    """``_settings.pxd`` declares each value of the table's enums as a C constant of the same name."""
    source = (Path(kernels.__file__).parent / "_settings.pxd").read_text()
    constants = {name: int(value) for name, value in re.findall(r"^    (\w+) = (\d+)", source, re.MULTILINE)}
    assert {member.name: member.value for member in enum}.items() <= constants.items()


@pytest.mark.parametrize("cls", kernels.KERNELS, ids=lambda cls: cls.__name__)
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
