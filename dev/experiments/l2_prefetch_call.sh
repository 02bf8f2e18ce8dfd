#!/usr/bin/env bash
# One device call for l2-prefetch-b.patch: with the patch applied to the working tree here (`git apply
# dev/experiments/l2-prefetch-b.patch`; it adds the opt-in TESSERA_FP8_L2_PREFETCH_B and leaves every default kernel
# unchanged), the masked suite under B prefetched into L2 0 (off), 4 and 8 k-blocks ahead of its load, then off again,
# and the table (dev/suite_ab.py: each variant over the mean of the two off runs). About 70 s of runs after the build.
#
#   bash dev/experiments/l2_prefetch_call.sh   (on the GPU machine; logs and ab.jsonl under $OUT)
source "$(dirname "$0")/../gpu_env.sh"
dev/build_gpu.sh || exit 1
run() {  # run LABEL AHEAD
    local label=$1 json t0=$SECONDS
    json=$(mktemp)
    env TESSERA_FP8_L2_PREFETCH_B="$2" timeout 60 python3 bench/run.py --suite deepgemm-masked --json "$json" \
        >>"$OUT/logs_bench.log" 2>&1
    sed "s/^{/{\"ab_run\": \"$label\", /" "$json" >>"$OUT/ab.jsonl"
    rm -f "$json"
    echo "  $label $((SECONDS - t0))s"
}
: >"$OUT/ab.jsonl"
run tree 0
run pf4 4
run pf8 8
run tree2 0
python3 dev/suite_ab.py "$OUT/ab.jsonl"
