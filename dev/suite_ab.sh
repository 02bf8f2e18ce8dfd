#!/usr/bin/env bash
# A/B of one kernel variant directory (made with dev/kernel_variant.sh) against the working tree's kernels on whole
# bench/run.py suites, in the order tree, variant, tree (so drift during the call shows as a difference between the
# two tree runs), then one table per suite: each row's µs under the three runs and variant / mean(tree), with the
# geomean of that ratio (dev/suite_ab.py). About one minute per suite run.
#
#   dev/build_gpu.sh && dev/suite_ab.sh variants/tail
#   SUITES="deepgemm-grouped-contiguous deepgemm-masked" dev/suite_ab.sh variants/tail
#   BASE_ENV=TESSERA_FP8_D_IN_RING=0 dev/suite_ab.sh env:TESSERA_FP8_D_IN_RING=1
#     (a host-side switch instead of a kernel directory: the tree runs under BASE_ENV, the variant under the other)
source "$(dirname "$0")/gpu_env.sh"
variant_env=
if [[ "$1" == env:* ]]; then variant_env=${1#env:}; else variant=$(cd "$1" && pwd); fi
SUITES=${SUITES:-deepgemm-grouped-contiguous}
args=()
for s in $SUITES; do args+=(--suite "$s"); done
: >"$OUT/suite_ab.jsonl"
for run in tree variant tree2; do
    json=$(mktemp)
    kernels=$PWD/kernels
    run_env=${BASE_ENV:-TESSERA_AB_RUN=tree}
    if [ "$run" = variant ]; then
        if [ -n "$variant_env" ]; then run_env=$variant_env; else kernels=$variant; fi
    fi
    env "$run_env" TESSERA_KERNEL_DIR="$kernels" timeout 400 python3 bench/run.py "${args[@]}" --json "$json" \
        >"$OUT/suite_ab_$run.log" 2>&1
    sed "s/^{/{\"ab_run\": \"${run%2}\", /" "$json" >>"$OUT/suite_ab.jsonl"
    rm -f "$json"
done
python3 dev/suite_ab.py "$OUT/suite_ab.jsonl" | tee "$OUT/suite_ab.txt"
