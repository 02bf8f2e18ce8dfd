#!/usr/bin/env bash
# A/B of kernel variant directories (made with dev/kernel_variant.sh) against the working tree's kernels on whole
# bench/run.py suites, in the order tree, each variant, tree (so drift during the call shows as a difference between
# the two tree runs), then one table per suite: each row's µs under every run and each variant / mean(tree), with the
# geomean of that ratio (dev/suite_ab.py). About one minute per suite run.
#
#   dev/build_gpu.sh && dev/suite_ab.sh variants/tail
#   dev/suite_ab.sh variants/a variants/b        (tree, a, b, tree)
#   SUITES="deepgemm-grouped-contiguous deepgemm-masked" dev/suite_ab.sh variants/tail
#   BASE_ENV=TESSERA_FP8_D_IN_RING=0 dev/suite_ab.sh env:TESSERA_FP8_D_IN_RING=1
#     (a host-side switch instead of a kernel directory: the tree runs under BASE_ENV, the variant under the other)
source "$(dirname "$0")/gpu_env.sh"
SUITES=${SUITES:-deepgemm-grouped-contiguous}
args=()
for s in $SUITES; do args+=(--suite "$s"); done
: >"$OUT/suite_ab.jsonl"
# One bench run under one label: the tree's kernels and BASE_ENV, or a variant (a kernel directory, or env:NAME=VAL).
run_one() {
    local label=$1 kernels=$PWD/kernels run_env=${BASE_ENV:-TESSERA_AB_RUN=tree}
    if [[ "$2" == env:* ]]; then run_env=${2#env:}; elif [ -n "$2" ]; then kernels=$(cd "$2" && pwd); fi
    local json
    json=$(mktemp)
    env "$run_env" TESSERA_KERNEL_DIR="$kernels" timeout 400 python3 bench/run.py "${args[@]}" --json "$json" \
        >"$OUT/suite_ab_$label.log" 2>&1
    sed "s/^{/{\"ab_run\": \"$label\", /" "$json" >>"$OUT/suite_ab.jsonl"
    rm -f "$json"
}
run_one tree ""
for v in "$@"; do
    label=${v#env:}
    label=$(basename "${label%%=*}")
    run_one "$label" "$v"
done
run_one tree2 ""
python3 dev/suite_ab.py "$OUT/suite_ab.jsonl" | tee "$OUT/suite_ab.txt"
