"""The speed suite: benchmark classes in the layout of asv (airspeed velocity), as
scikit-learn's ``asv_benchmarks``, and a runner that prints one table (run it from the
repository's root; ``python -m weasel run speed-suite`` passes project.yml's paths).

    python -m bench.speed [--filter REGEX] [--quick] [--repeat N] [--set NAME=VALUE ...] [--results FILE]
    python -m bench.speed --against COMMIT [--rounds 5] [--cpu] [--filter REGEX]
    python -m bench.speed --list

A benchmark is a class of a module of this folder with methods named ``time_*`` (the
median wall seconds of ``repeat`` calls after ``setup``, and their CPU seconds),
``peakmem_*`` (the peak resident MB of one call above the process's resident memory after
``setup``, in a fresh process, with the call's seconds) or ``track_*`` (the value
returned, in the method's ``unit``).
``params`` (one list of values per name of ``param_names``) makes one benchmark of each
combination; ``setup`` gets the combination and raises ``NotImplementedError`` to skip it
(data or a trained model absent). A ``time_*`` marked ``@rate("pairs")`` also prints how
many pairs a second it handled (``self.n`` per call). A class with ``fresh = True`` runs in
a process of its own. What the runner adds to asv's layout: ``--set`` fills
:data:`SETTINGS` (where the data and the trained pipelines are), ``--quick`` runs the
first value of each parameter once, ``--against COMMIT`` runs the chosen benchmarks on
COMMIT's engine (a worktree compiled once under ``build/versus/``) and on the working
tree's in interleaved rounds, with the median of each side and their ratio (of wall
seconds, or with ``--cpu`` of CPU seconds: on one thread the same on a quiet machine, and
far less disturbed by other load).
"""

import argparse
import importlib
import inspect
import itertools
import json
import os
import pkgutil
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BENCH))  # the flat modules of bench/ (locations, common), as its scripts import them

import common  # noqa: E402
from locations import DATA, MD_MODEL, ROOT  # noqa: E402

SETTINGS = {
    "data": str(DATA),
    "md_model": str(MD_MODEL),
    "qc_model": str(ROOT / "build" / "work" / "training" / "qc" / "model-best"),  # project.yml's qc-train
    "qc_test": str(ROOT / "build" / "work" / "corpus" / "qc" / "test.spacy"),
    "ge_model": str(ROOT / "build" / "work" / "training" / "ge" / "model-best"),  # project.yml's ge-train
    "ge_devel": str(DATA / "bionlp-st-2013-ge" / "original-data" / "devel"),
    # project.yml's relations-raw-entities
    "relations_model": str(ROOT / "build" / "work" / "conll04" / "raw_text-all-seed0" / "model-best"),
    "relations_test": str(DATA / "conll04" / "test.jsonl"),
}
KINDS = ("time_", "peakmem_", "track_")


def rate(unit: str):
    """Mark a ``time_*`` benchmark whose call handles ``self.n`` units: the table adds units per second."""

    def mark(method):
        method.rate = unit
        return method

    return mark


def setting(name: str) -> Path:
    return Path(SETTINGS[name])


def required(*names: str) -> None:
    """Skip a benchmark (NotImplementedError) whose settings ``names`` name no file."""
    for name in names:
        if not setting(name).exists():
            raise NotImplementedError(f"{setting(name)} is absent (--set {name}=PATH)")


def benchmarks(pattern: str = "", quick: bool = False) -> list[tuple[str, type, tuple, list[str]]]:
    """(label, class, parameters, methods) of every class and combination whose
    ``module.Class.method(parameters)`` matches ``pattern`` for some method."""
    found = []
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            methods = [m for m in dir(cls) if m.startswith(KINDS) and callable(getattr(cls, m))]
            if cls.__module__ != module.__name__ or not methods:
                continue
            params = getattr(cls, "params", [])
            params = params if params and isinstance(params[0], list) else [params] if params else []
            for combination in itertools.product(*(p[:1] if quick else p for p in params)):
                label = f"{info.name}.{name}({', '.join(map(str, combination))})"
                chosen = [m for m in methods if re.search(pattern, label.replace("(", f".{m}(", 1))]
                chosen = chosen or ([*methods] if re.search(pattern, label) else [])
                if chosen:
                    found.append((label, cls, combination, chosen))
    return found


def measure(instance, method: str, combination: tuple, repeat: int) -> dict:
    """The row of one method on a set-up instance (``peakmem_*``: call it in a fresh process)."""
    function = getattr(instance, method)
    if method.startswith("track_"):
        return {"value": function(*combination), "unit": getattr(function, "unit", "")}
    if method.startswith("peakmem_"):
        try:  # the peak resident memory starts again from the memory now (Linux 4.0)
            common.reset_peak()
        except OSError:
            pass
        base = common.rss_mb("VmHWM")
    seconds, cpu = [], []
    for _ in range(1 if method.startswith("peakmem_") else repeat):
        start, start_cpu = time.perf_counter(), sum(os.times()[:4])  # CPU: this process and its children
        note = function(*combination)
        seconds.append(time.perf_counter() - start)
        cpu.append(sum(os.times()[:4]) - start_cpu)
    row = {"value": statistics.median(seconds), "unit": "s", "cpu": statistics.median(cpu), "note": note}
    if method.startswith("peakmem_"):
        row.update(value=common.rss_mb("VmHWM") - base, unit="MB", seconds=seconds[0])
    elif getattr(function, "rate", None):
        row["rate"] = f"{instance.n / row['value']:,.0f} {function.rate}/s"
    return row


def run_group(label: str, cls: type, combination: tuple, methods: list[str], repeat: int, child: bool) -> list:
    """The rows of one class and combination: set up once, each method measured; in a
    fresh process for ``peakmem_*`` and for a ``fresh`` class (unless this is that process)."""
    here = [m for m in methods if child or not (getattr(cls, "fresh", False) or m.startswith("peakmem_"))]
    rows = [row for m in methods if m not in here for row in in_child(label, m, repeat)]
    if here:
        instance = cls()
        try:
            instance.setup(*combination) if hasattr(instance, "setup") else None
        except NotImplementedError as reason:
            return rows + [{"benchmark": label, "method": m, "skipped": str(reason)} for m in here]
        except Exception as error:  # a benchmark's failure is its row's value
            return rows + [{"benchmark": label, "method": m, "failed": failure(error)} for m in here]
        for method in here:
            try:
                row = measure(instance, method, combination, getattr(cls, "repeat", repeat))
            except Exception as error:
                row = {"failed": failure(error)}
            rows.append({"benchmark": label, "method": method, **row})
    return sorted(rows, key=lambda row: methods.index(row["method"]))


def failure(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error)[:80]}"


def in_child(label: str, method: str, repeat: int) -> list:
    pattern = "^" + re.escape(label.replace("(", f".{method}(", 1)) + "$"
    command = [sys.executable, "-m", __name__, "--filter", pattern, "--repeat", str(repeat), "--child", "--json"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=child_environment())
    if done.returncode:
        return [{"benchmark": label, "method": method, "failed": (done.stderr.strip().splitlines() or ["?"])[-1]}]
    return json.loads(done.stdout)["rows"]


def child_environment(package: Path | None = None) -> dict:
    extra = {"PYTHONPATH": str(package)} if package else {}
    return {**os.environ, "BENCH_SPEED_SETTINGS": json.dumps(SETTINGS), **extra}


def cell(row: dict) -> str:
    if "skipped" in row or "failed" in row:
        return "skipped: " + row["skipped"] if "skipped" in row else "failed: " + row["failed"]
    value = row["value"]
    text = f"{value:,.4g} {row['unit']}".strip() if isinstance(value, (int, float)) else str(value)
    cpu = f"{row['cpu']:.3g} CPU s" if row.get("cpu") and row["unit"] == "s" else None
    extras = [row.get("rate"), cpu, f"{row['seconds']:.2f} s" if "seconds" in row else None, row.get("note")]
    return text + "".join(f"; {extra}" for extra in extras if extra)


def print_table(rows: list) -> None:
    from common import table

    print("\n".join(table(["benchmark", "method", "value"], [(r["benchmark"], r["method"], cell(r)) for r in rows])))


def built(commit: str) -> Path:
    """A worktree of ``commit`` with its engine compiled in place (made once)."""
    sha = subprocess.run(["git", "rev-parse", commit], cwd=ROOT, capture_output=True, text=True, check=True)
    tree = ROOT / "build" / "versus" / sha.stdout.strip()[:12]
    if not (tree / ".built").exists():
        if not tree.exists():
            subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True)
        print(f"compiling {commit} in {tree} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree, check=True)
        (tree / ".built").touch()
    write_entry_points(tree)  # also in a worktree built before this step existed
    return tree


def write_entry_points(tree: Path) -> None:
    """The registered functions of the commit in ``tree`` as its pyproject.toml names them,
    in a ``.dist-info`` folder of the worktree, which its side's PYTHONPATH puts before the
    installed package's: spaCy's registry then finds that commit's functions, not the working
    tree's (whose targets may not exist there)."""
    import tomllib

    project = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = tree / "spacy_convkernels-0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: spacy-convkernels\nVersion: 0\n")
    groups = project.get("entry-points", {})
    lines = [
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
        for group, entries in groups.items()
    ]
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")


def against(commit: str, options) -> None:
    """The chosen benchmarks on ``commit``'s package and the working tree's, in
    interleaved rounds (``commit`` first in odd rounds), each side in a fresh process
    that imports the package from its folder and this suite from the working tree."""
    sides = {commit: built(commit), "working tree": ROOT}
    code = (  # the suite (and bench/'s modules) from the working tree, the package from PYTHONPATH
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); import bench.speed; sys.path.remove({str(ROOT)!r}); "
        "bench.speed.main()"
    )
    values: dict = {}
    for round_ in range(options.rounds):
        for side in list(sides)[:: 1 if round_ % 2 == 0 else -1]:
            arguments = ["--filter", options.filter, "--repeat", str(options.repeat), "--json"]
            done = subprocess.run(
                [sys.executable, "-c", code, *arguments, *(["--quick"] if options.quick else [])],
                cwd=ROOT / "build" / "versus",
                env=child_environment(sides[side]),
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(done.stdout)
            if Path(result["package"]) != sides[side]:
                raise SystemExit(f"the {side} side imported the package from {result['package']}")
            for row in result["rows"]:
                value = row.get("cpu") if options.cpu and row.get("unit") == "s" else row.get("value")
                value = row.get("failed") or row.get("skipped") or value  # shown as it is, never a ratio
                values.setdefault((row["benchmark"], row["method"]), {}).setdefault(side, []).append(value)
        print(f"round {round_ + 1} of {options.rounds} done", file=sys.stderr, flush=True)
    from common import table

    lines = []
    for (label, method), by_side in values.items():
        before, after = by_side.get(commit, []), by_side.get("working tree", [])
        if all(isinstance(v, (int, float)) for v in before + after) and before and after:
            old, new = statistics.median(before), statistics.median(after)
            slower = f"{sum(a > b for a, b in zip(after, before))}/{len(after)}" if method.startswith("time_") else ""
            ratio = f"{new / old:.3f}" if old else ""  # a refusal's CPU seconds can round to 0
            lines.append((label, method, f"{old:,.6g}", f"{new:,.6g}", ratio, slower))
        else:
            lines.append((label, method, before[-1:], after[-1:], "", ""))
    header = ["benchmark", "method", commit[:14], "working tree", "working tree / commit", "slower in"]
    print("\n".join(table(header, lines)))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.speed", description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="a regular expression on module.Class.method(params)")
    parser.add_argument("--quick", action="store_true", help="the first value of each parameter, one call each")
    parser.add_argument("--repeat", type=int, default=3, help="calls of each time_* benchmark (default 3)")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE", help=f"settings: {', '.join(SETTINGS)}")
    parser.add_argument("--results", type=Path, help="also write the rows as JSON to this file")
    parser.add_argument("--list", action="store_true", help="list the benchmarks, run none")
    parser.add_argument("--against", metavar="COMMIT", help="compare with COMMIT's engine")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of --against (default 5)")
    parser.add_argument("--cpu", action="store_true", help="--against compares CPU seconds (less disturbed by load)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    SETTINGS.update(json.loads(os.environ.get("BENCH_SPEED_SETTINGS", "{}")))  # a child's: its parent's
    SETTINGS.update(item.split("=", 1) for item in options.set)
    if options.against:
        return against(options.against, options)
    found = benchmarks(options.filter, options.quick)
    if options.list:
        print("\n".join(f"{label}: {', '.join(methods)}" for label, _, _, methods in found))
        return
    repeat, rows, load = 1 if options.quick else options.repeat, [], os.getloadavg()[0]
    for group in found:
        rows += run_group(*group, repeat=repeat, child=options.child)
        if not options.json:
            lines = (f"{r['benchmark']} {r['method']}: {cell(r)}" for r in rows[-len(group[3]) :])
            print(*lines, sep="\n", file=sys.stderr, flush=True)
    if options.json:
        import spacy_convkernels

        package = str(Path(spacy_convkernels.__file__).resolve().parent.parent)
        print(json.dumps({"package": package, "rows": rows}, default=str))
        return
    print_table(rows)
    if options.results:  # the rows, with the machine's cores and load average (1 min) before and after
        machine = {"cores": os.cpu_count(), "load": [load, os.getloadavg()[0]], "command": " ".join(sys.argv[1:])}
        options.results.write_text(json.dumps({**machine, "rows": rows}, indent=1, default=str) + "\n")
