#!/usr/bin/env bash
# The A/B runs of the prepared patches in one device call (about 6 minutes), on the variants that
# dev/experiments/make_variants.sh made (carry: variants/contiguous-unroll, variants/hoist-whole-passes):
#   contiguous-unroll: the contiguous suite, tree / variant / tree (dev/suite_ab.sh), then the contiguous GPU tests on
#     the variant's kernels;
#   hoist-whole-passes: 4096x576x7168 under the heuristic pick and 128x144:p4, tree and variant (outputs checked);
#   PAIRS=1 adds the contiguous suite with B pairs forced (128x192:2x1), tree and variant.
source "$(dirname "$0")/../gpu_env.sh"
dev/build_gpu.sh || exit 1
if [ -d variants/contiguous-unroll ]; then
    SUITES=deepgemm-grouped-contiguous dev/suite_ab.sh variants/contiguous-unroll | tail -12
    TESSERA_KERNEL_DIR=$PWD/variants/contiguous-unroll timeout 300 python3 -m pytest -q -p no:cacheprovider \
        tests/python/test_fp8_grouped_gpu.py -k contiguous 2>&1 | tail -2
fi
if [ -d variants/contiguous-unroll ] && [ -n "${PAIRS:-}" ]; then
    # PAIRS=1: B-multicast pairs (128x192:2x1) on the contiguous suite, tree then variant; the config column shows a
    # re-plan if the variant's pair kernel spilled.
    for kernels in "$PWD/kernels" "$PWD/variants/contiguous-unroll"; do
        TESSERA_FP8_CONFIG=128x192:2x1 TESSERA_KERNEL_DIR=$kernels timeout 200 python3 bench/run.py \
            --suite deepgemm-grouped-contiguous 2>&1 | grep -v -i warn | tail -12 | cut -c1-200
    done
fi
if [ -d variants/hoist-whole-passes ]; then
    timeout 200 python3 bench/sweep_fp8.py 4096 576 7168 128x144:p4 --reps 20 \
        --variant "TESSERA_KERNEL_DIR=$PWD/variants/hoist-whole-passes" 2>&1 | grep -v -i warn | sed -n '/fastest/,$p'
fi
