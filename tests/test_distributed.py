"""Gram blocks, Nyström vectors and KLSH codes on a two-worker Dask LocalCluster equal the
local computation bit for bit (spacy_convkernels.distributed, and gram / nystroem transform
with --scheduler and --local-cluster)."""

import sys

import numpy as np
import pytest
from data_paths import CORPORA, require_extra

from spacy_convkernels import InvalidParameterError, MissingDependencyError, SchedulerError, StructureTypeError
from spacy_convkernels.approx import KLSH, Nystroem
from spacy_convkernels.cli import main
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import PartialTreeKernel, SubsetTreeKernel

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
EXAMPLES = list(read_klp(SAMPLE))
GRCT = [e.trees["grct"] for e in EXAMPLES]
LCT = [e.trees["lct"] for e in EXAMPLES]
MANY = [tree for _ in range(20) for tree in GRCT]  # 1200 rows: two full blocks of 512 and a part


@pytest.fixture(scope="module")
def dask_client():
    distributed = require_extra("distributed", "dask")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, memory_limit="1GiB", dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as dask_client,
    ):
        yield dask_client


@pytest.fixture(scope="module")
def spread(dask_client):
    from spacy_convkernels import distributed as spread

    return spread


@pytest.mark.parametrize("block_size", [1, 7, 60])
def test_symmetric_gram_is_the_kernel_gram(spread, dask_client, block_size):
    kernel = PartialTreeKernel()
    got = spread.gram(kernel, GRCT, block_size=block_size, client=dask_client)
    np.testing.assert_array_equal(got, kernel.gram(GRCT))


def test_gram_against_columns_unnormalized_into_a_given_array(spread, dask_client):
    kernel = SubsetTreeKernel(lam=0.2)
    out = np.zeros((60, 13), dtype=np.float32)
    got = spread.gram(kernel, LCT, LCT[:13], normalize=False, block_size=8, out=out, client=dask_client)
    assert got is out
    # the workers compute rows against the columns prepared (indexed) once, as kernel.gram does with a prepared set
    columns = kernel.prepare(LCT[:13])
    np.testing.assert_array_equal(out, kernel.gram(LCT, columns, normalize=False).astype(np.float32))
    np.testing.assert_array_equal(
        spread.gram(kernel, LCT[:9], LCT, client=dask_client), kernel.gram(LCT[:9], kernel.prepare(LCT))
    )


def test_both_workers_compute_blocks(spread, dask_client):
    def executed(dask_worker):
        return dask_worker.state.executed_count

    before = dask_client.run(executed)
    spread.gram(PartialTreeKernel(), GRCT, GRCT[:5], block_size=1, client=dask_client)
    after = dask_client.run(executed)
    assert len(after) == 2 and all(after[w] > before[w] for w in after)
    assert sum(after[w] - before[w] for w in after) == 60  # one task per block


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nystroem_transform_is_the_local_transform(spread, dask_client, dtype):
    model = Nystroem(PartialTreeKernel(mu=0.3), n_components=20, dtype=dtype, random_state=1).fit(GRCT)
    got = spread.nystroem_transform(model, MANY, block_size=512, client=dask_client)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, model.transform(MANY))
    out = np.zeros((len(MANY), 20), dtype=dtype)
    assert spread.nystroem_transform(model, MANY, block_size=1024, out=out, client=dask_client) is out
    np.testing.assert_array_equal(out, got)


@pytest.mark.parametrize("hash_function", ["random_knn", "kulis_grauman"])
def test_klsh_codes_are_the_local_codes(spread, dask_client, hash_function):
    model = KLSH(
        PartialTreeKernel(), n_references=30, n_bits=50, subset_size=5, hash_function=hash_function, random_state=2
    ).fit(GRCT)
    got = spread.klsh_codes(model, MANY, block_size=1024, client=dask_client)
    assert got.dtype == np.uint8 and got.shape == (1200, 50)
    np.testing.assert_array_equal(got, model.transform(MANY))
    model.set_params(packed=True)
    packed = spread.klsh_codes(model, MANY, block_size=1024, client=dask_client)
    np.testing.assert_array_equal(packed, np.packbits(got, 1))


def test_bad_arguments_are_package_errors_before_any_work(spread, dask_client):
    kernel = PartialTreeKernel()
    with pytest.raises(StructureTypeError, match="item 1 is str"):
        spread.gram(kernel, [GRCT[0], "(S a)"], client=dask_client)
    with pytest.raises(InvalidParameterError, match=r"gram: block_size must be an integer in \[1, inf\], got 0"):
        spread.gram(kernel, GRCT, block_size=0, client=dask_client)
    with pytest.raises(InvalidParameterError, match=r"out must have shape \(60, 60\)"):
        spread.gram(kernel, GRCT, out=np.zeros((60, 59)), client=dask_client)
    model = Nystroem(kernel, n_components=5, random_state=0).fit(GRCT)
    with pytest.raises(InvalidParameterError, match=r"block_size must be a positive multiple of 512, got 100"):
        spread.nystroem_transform(model, GRCT, block_size=100, client=dask_client)
    with pytest.raises(InvalidParameterError, match=r"out must have 60 rows, got shape \(59, 5\)"):
        spread.nystroem_transform(model, GRCT, out=np.zeros((59, 5)), client=dask_client)
    with pytest.raises(SchedulerError, match="cannot reach the Dask scheduler at 'nonsense://x'"):
        with spread.connect("nonsense://x"):
            pass


def test_missing_dask_is_a_package_error(monkeypatch):
    from spacy_convkernels import distributed as spread

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    with pytest.raises(MissingDependencyError, match=r'pip install "spacy-convkernels\[dask\]"'):
        spread.gram(PartialTreeKernel(), GRCT[:3], GRCT[:2])


def test_cli_gram_and_nystroem_transform_on_a_scheduler(dask_client, tmp_path):
    address = dask_client.scheduler.address
    out = tmp_path / "gram.npy"
    assert main(["gram", str(SAMPLE), str(out), "--block-size", "9", "--scheduler", address, "--quiet"]) == 0
    np.testing.assert_array_equal(np.load(out), PartialTreeKernel().gram(GRCT))
    model = tmp_path / "ptk.npz"
    assert main(["nystroem", "fit", str(SAMPLE), str(model), "--n-components", "12", "--quiet"]) == 0
    local, spread = tmp_path / "local.npy", tmp_path / "spread.npy"
    assert main(["nystroem", "transform", str(model), str(SAMPLE), str(local), "--quiet"]) == 0
    command = ["nystroem", "transform", str(model), str(SAMPLE), str(spread), "--local-cluster", "1", "--quiet"]
    assert main(command) == 0
    np.testing.assert_array_equal(np.load(spread), np.load(local))


@pytest.mark.parametrize(
    "options, message",
    [
        (["--local-cluster", "0"], "--local-cluster must be positive, got 0"),
        (["--scheduler", "nonsense://x"], "cannot reach the Dask scheduler at 'nonsense://x'"),
    ],
)
def test_cli_bad_cluster_options_are_one_line(dask_client, tmp_path, capsys, options, message):
    assert main(["gram", str(SAMPLE), str(tmp_path / "g.npy"), "--quiet", *options]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("spacy-convkernels gram: error: ") and message in err
