#!/usr/bin/env bash
# A/B of two source trees (kernels and host code) under the same benchmark protocol.
#
#   tools/ab_trees.sh export REV DIR            on a machine with git: the files of revision REV in DIR (use a folder
#                                               under the git-ignored variants/, and carry it to the GPU machine)
#   tools/ab_trees.sh run A B -- BENCH_ARGS     on the GPU machine: build trees A and B (each into its build-ab/), run
#                                               `python bench/run.py BENCH_ARGS --json F` against each, then
#                                               `python bench/compare.py` on the two files
#
# A or B may be "." (the working tree). Both trees are timed with the working tree's bench/run.py and compared with
# its bench/compare.py, so only the library differs. ROUNDS=n (default 2) runs A then B n times and compares each
# round: how far a round's A moves from the next round's A is the spread to read the A/B ratios against. Output in
# $OUT (else ./gpu-out): ab-<round>-a.jsonl, ab-<round>-b.jsonl and ab.log. DeepGEMM is measured when importable
# (export its PYTHONPATH and LD_PRELOAD first, docs/performance.md). DeepGEMM compiles each kernel with nvcc at its
# first call, inside the first side's run (about 3 minutes for the FP8 suites on a fresh machine): warm its cache first
# when time is short, e.g. with `bench/run.py ... --shard i/N` processes in parallel.
#
#   tools/ab_trees.sh export HEAD~1 variants/before
#   tools/ab_trees.sh run variants/before . -- --suite fp8-dense --suite fp8-masked
set -uo pipefail

if [ "${1:-}" = export ] && [ $# -eq 3 ]; then
    rm -rf "$3" && mkdir -p "$3" && git archive "$2" | tar -x -C "$3" && echo "$(git rev-parse --short "$2") in $3"
    exit
fi
if [ "${1:-}" != run ] || [ $# -lt 4 ] || [ "$4" != -- ]; then
    sed -n '2,19p' "$0" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
a=$(cd "$2" && pwd) b=$(cd "$3" && pwd)
shift 4
OUT=${OUT:-$root/gpu-out}
mkdir -p "$OUT"
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
unset TESSERA_KERNEL_DIR  # each tree's package reads its own kernel headers
{
    for tree in "$a" "$b"; do
        echo "== build $tree"
        cmake -S "$tree" -B "$tree/build-ab" -G Ninja -DPython_EXECUTABLE="$(command -v python3)" >/dev/null &&
            ninja -C "$tree/build-ab" >/dev/null || { echo "build of $tree failed"; exit 1; }
    done
    for round in $(seq "${ROUNDS:-2}"); do
        for side in a b; do
            tree=$a
            [ $side = b ] && tree=$b
            echo "== round $round, $side: $tree"
            PYTHONPATH=$tree/build-ab/python${PYTHONPATH:+:$PYTHONPATH} \
                python3 "$root/bench/run.py" "$@" --json "$OUT/ab-$round-$side.jsonl" || exit 1
        done
        echo "== round $round: b against a"
        python3 "$root/bench/compare.py" "$OUT/ab-$round-a.jsonl" "$OUT/ab-$round-b.jsonl"
    done
} 2>&1 | tee "$OUT/ab.log"
