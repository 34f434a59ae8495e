#!/usr/bin/env bash
# Build the compiled engine with AddressSanitizer and UndefinedBehaviorSanitizer in a
# temporary copy of the repository and run the test suite under it.
#
#   tools/sanitize.sh [pytest arguments]      (default: the whole suite, tests/)
#
# Linux with GCC (or CC=clang). The ASan runtime must be loaded before the interpreter,
# hence LD_PRELOAD; leak detection is off because CPython keeps memory until exit by
# design. Any ASan or UBSan report aborts the run with its stack trace on stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$root"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
    [ -f "$f" ] && cp --parents "$f" "$work/"
done
cd "$work"
SPACY_CONVKERNELS_SANITIZE=1 python setup.py build_ext --inplace > build.log 2>&1 || { cat build.log; exit 1; }

export LD_PRELOAD="$(${CC:-gcc} -print-file-name=libasan.so)"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export SPACY_CONVKERNELS_SANITIZE=1  # tests that limit the address space skip themselves
export SPACY_CONVKERNELS_SHARED="${SPACY_CONVKERNELS_SHARED:-$root/../shared}"
echo "engine built with ASan + UBSan in $work; running pytest ${*:-tests}"
PYTHONPATH="$work" python -m pytest -q -p no:cacheprovider "${@:-tests}"
