#!/usr/bin/env bash
# One device call for split-multicast-issue.patch and masked-pairs.patch (stacked), which change host code too (the
# TMA boxes, the masked planner), so they run as a whole tree, never as a kernel directory: their kernels with main's
# full-height boxes would write past the stage. Make the tree here first (git is needed), then run this with carry
# ["variants/pairs"]:
#
#   dev/tree_variant.sh HEAD variants/pairs && for p in split-multicast-issue masked-pairs; do
#       patch -s -p1 -d variants/pairs < dev/experiments/$p.patch; done
#
# Then: the variant's forced-cluster tests (dense and grouped pairs), racecheck on its contiguous and masked pairs, and
# two A/Bs, each run over the mean of main's two plan runs (dev/suite_ab.py):
#   contiguous: main's plan (no pairs) / main forced to 128x256 2x1 (rank 0 issues B) / the variant forced the same
#               (each CTA issues half) / main's plan;
#   masked:     main's plan / the variant forced to 128x256 2x1 (all rows; only e192 and e1024 plan 128x256) / main.
source "$(dirname "$0")/../gpu_env.sh"
T=variants/pairs
dev/build_gpu.sh || exit 1
{ cmake -S $T -B $T/build-gpu -G Ninja -DPython_EXECUTABLE="$(command -v python3)" && ninja -C $T/build-gpu; } \
    >"$OUT/build-pairs.log" 2>&1 || { tail -20 "$OUT/build-pairs.log"; exit 1; }
VPY=$PWD/$T/build-gpu/python
(cd $T && PYTHONPATH=$VPY timeout 240 python3 -m pytest -q -p no:cacheprovider \
    tests/python/test_fp8_gemm_gpu.py tests/python/test_fp8_grouped_gpu.py -k 'forced or cluster or masked' \
    >"$OUT/pairs_tests.log" 2>&1)
echo "variant tests: $(tail -1 "$OUT/pairs_tests.log")"
(cd $T && PYTHONPATH=$VPY timeout 200 compute-sanitizer --tool racecheck --error-exitcode 1 \
    python3 -m pytest -q -p no:cacheprovider tests/python/test_fp8_grouped_gpu.py \
    -k '(test_contiguous_forced_pairs and 128x256) or (test_masked_forced_pairs and 1280-3072)' >"$OUT/pairs_race.log" 2>&1)
echo "variant racecheck: rc=$? $(grep -h 'RACECHECK SUMMARY' "$OUT/pairs_race.log" | sort | uniq -c | tr '\n' ' ')"
run() {  # run FILE SUITE LABEL PYTHONPATH [ENV=VAL]
    local file=$1 suite=$2 label=$3 pp=$4 json
    json=$(mktemp)
    env ${5:-TESSERA_AB=1} PYTHONPATH="$pp" timeout 200 python3 bench/run.py --suite "$suite" --json "$json" \
        >"$OUT/${file}_$label.log" 2>&1
    sed "s/^{/{\"ab_run\": \"$label\", /" "$json" >>"$OUT/$file.jsonl"
    rm -f "$json"
}
MAIN=$PWD/build-gpu/python
: >"$OUT/contiguous_ab.jsonl"
run contiguous_ab deepgemm-grouped-contiguous tree "$MAIN"
run contiguous_ab deepgemm-grouped-contiguous main-pairs "$MAIN" TESSERA_FP8_CONFIG=128x256:2x1
run contiguous_ab deepgemm-grouped-contiguous split-pairs "$VPY" TESSERA_FP8_CONFIG=128x256:2x1
run contiguous_ab deepgemm-grouped-contiguous tree2 "$MAIN"
: >"$OUT/masked_ab.jsonl"
run masked_ab deepgemm-masked tree "$MAIN"
run masked_ab deepgemm-masked masked-pairs "$VPY" TESSERA_FP8_CONFIG=128x256:2x1
run masked_ab deepgemm-masked tree2 "$MAIN"
python3 dev/suite_ab.py "$OUT/contiguous_ab.jsonl" | tee "$OUT/pairs_ab.txt"
python3 dev/suite_ab.py "$OUT/masked_ab.jsonl" | tee -a "$OUT/pairs_ab.txt"
