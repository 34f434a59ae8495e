"""The speed suite's harness (bench/speed, issue 38 point 3): asv's layout (params,
setup, time_*, peakmem_*, track_*) measured into rows and one table, on toy benchmarks."""

import json
import subprocess
import sys

import pytest
from data_paths import ROOT

sys.path.insert(0, str(ROOT))
speed = pytest.importorskip("bench.speed")


class Toy:
    params = [["a", "b"], [1, 2]]
    param_names = ["letter", "n"]

    def setup(self, letter, n):
        if letter == "b" and n == 2:
            raise NotImplementedError("no data for b2")
        self.n = 1000 * n

    @speed.rate("items")
    def time_sum(self, letter, n):
        return f"sum {sum(range(self.n))}"

    def track_length(self, letter, n):
        return self.n

    track_length.unit = "items"

    def track_broken(self, letter, n):
        raise ValueError("broken")


def test_each_method_of_each_combination_gives_a_row():
    rows = []
    for combination in [("a", 1), ("b", 2)]:
        rows += speed.run_group(f"toy.Toy{combination}", Toy, combination, ["time_sum", "track_length"], 2, False)
    by = {(row["benchmark"], row["method"]): row for row in rows}
    timed = by[("toy.Toy('a', 1)", "time_sum")]
    assert timed["unit"] == "s" and timed["value"] > 0 and timed["note"] == "sum 499500"
    assert timed["rate"].endswith("items/s")
    assert by[("toy.Toy('a', 1)", "track_length")]["value"] == 1000
    assert by[("toy.Toy('b', 2)", "time_sum")]["skipped"] == "no data for b2"


def test_a_failing_benchmark_is_a_row_not_a_crash():
    (row,) = speed.run_group("toy.Toy(a, 1)", Toy, ("a", 1), ["track_broken"], 1, False)
    assert row["failed"] == "ValueError: broken"
    assert speed.cell(row) == "failed: ValueError: broken"


PEAK_SCRIPT = """
import json
import bench.speed as speed

class Allocates:
    def setup(self):
        self.kept = bytearray(50 * 2**20)

    def peakmem_allocate(self):
        block = bytearray(100 * 2**20)
        block[::4096] = b"x" * len(block[::4096])  # touched, so resident

instance = Allocates()
instance.setup()
print(json.dumps(speed.measure(instance, "peakmem_allocate", (), 1)))
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="peak memory is read from /proc/self/status")
def test_peak_memory_is_measured_over_the_memory_after_setup():
    """In a fresh process, as the runner calls a peakmem method: in a test worker that had
    run other modules the measured peak once read 0 MB (CI, 2026-11-29)."""
    done = subprocess.run([sys.executable, "-c", PEAK_SCRIPT], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    row = json.loads(done.stdout.splitlines()[-1])
    assert row["unit"] == "MB" and 90 < row["value"] < 160 and row["seconds"] >= 0


def test_the_suite_lists_its_benchmarks_with_their_parameters():
    found = {label: methods for label, _, _, methods in speed.benchmarks("ReaderBounds|CommandLine")}
    assert "readers.ReaderBounds(standoff_document)" in found
    assert found["pipelines.CommandLine(--help)"] == ["time_start"]
    assert len(speed.benchmarks("WideTrees", quick=True)) == 1


def test_the_table_is_markdown():
    rows = [{"benchmark": "m.C(1)", "method": "time_x", "value": 0.5, "unit": "s", "rate": "2 x/s"}]
    speed.print_table(rows)
