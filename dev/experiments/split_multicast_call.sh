#!/usr/bin/env bash
# One device call for split-multicast-issue.patch, which changes host code too (the TMA boxes), so it runs as a whole
# tree, never as a kernel directory: its kernels with main's full-height boxes would write past the stage. Make the
# tree here first (git is needed), then run this with carry ["variants/split"]:
#
#   dev/tree_variant.sh HEAD variants/split && patch -s -p1 -d variants/split < dev/experiments/split-multicast-issue.patch
#
# Then: the variant's forced-cluster tests (dense and grouped pairs) and racecheck on its contiguous pairs, and the
# contiguous suite as main's plan (no pairs) / main forced to 128x256 2x1 / the variant forced the same / main's plan.
# Table last (dev/suite_ab.py: each run over the mean of the two plan runs).
source "$(dirname "$0")/../gpu_env.sh"
T=variants/split
dev/build_gpu.sh || exit 1
{ cmake -S $T -B $T/build-gpu -G Ninja -DPython_EXECUTABLE="$(command -v python3)" && ninja -C $T/build-gpu; } \
    >"$OUT/build-split.log" 2>&1 || { tail -20 "$OUT/build-split.log"; exit 1; }
(cd $T && PYTHONPATH=$PWD/build-gpu/python timeout 240 python3 -m pytest -q -p no:cacheprovider \
    tests/python/test_fp8_gemm_gpu.py tests/python/test_fp8_grouped_gpu.py -k 'forced or cluster' \
    >"$OUT/split_tests.log" 2>&1)
echo "split tests: $(tail -1 "$OUT/split_tests.log")"
(cd $T && PYTHONPATH=$PWD/build-gpu/python timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 \
    python3 -m pytest -q -p no:cacheprovider tests/python/test_fp8_grouped_gpu.py \
    -k 'test_contiguous_forced_pairs and 128x256' >"$OUT/split_race.log" 2>&1)
echo "split racecheck: rc=$? $(grep -h 'RACECHECK SUMMARY' "$OUT/split_race.log" | sort | uniq -c | tr '\n' ' ')"
: >"$OUT/split_ab.jsonl"
run() {  # run LABEL PYTHONPATH [ENV=VAL]
    local label=$1 pp=$2 json
    json=$(mktemp)
    env ${3:-TESSERA_AB=1} PYTHONPATH="$pp" timeout 200 python3 bench/run.py --suite deepgemm-grouped-contiguous \
        --json "$json" >"$OUT/split_ab_$label.log" 2>&1
    sed "s/^{/{\"ab_run\": \"$label\", /" "$json" >>"$OUT/split_ab.jsonl"
    rm -f "$json"
}
run tree "$PWD/build-gpu/python"
run main-pairs "$PWD/build-gpu/python" TESSERA_FP8_CONFIG=128x256:2x1
run split-pairs "$PWD/$T/build-gpu/python" TESSERA_FP8_CONFIG=128x256:2x1
run tree2 "$PWD/build-gpu/python"
python3 dev/suite_ab.py "$OUT/split_ab.jsonl" | tee "$OUT/split_ab.txt"
