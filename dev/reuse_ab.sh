#!/usr/bin/env bash
# What ptxas's FFMA operand-reuse flags are worth (docs/perf/fp8_grouped.md v11: the contiguous 128x192 promotion
# carries 34 reuse flags on 96 FFMAs, dense 43, and contiguous runs 2 % slower on the same work). Fills a kernel
# cache, copies it with every promotion FFMA's reuse flags cleared (dev/sass_patch.py --mode reuse-none: hints only,
# results unchanged), and times both caches in one call: dev/masked_probe.py 128x192 (dense, contiguous, psum,
# masked on the same work) and the 256x128 dense row 4096x7168x16384. Prediction: if the 9 missing flags explain
# the 2 %, clearing all 43 costs dense about 8 %.
#
#   dev/build_gpu.sh && dev/reuse_ab.sh        (about 3 minutes; log in $OUT/reuse_ab.log)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
BASE=/tmp/tessera-reuse-base PATCHED=/tmp/tessera-reuse-none
{
  rm -rf "$BASE" "$PATCHED"
  echo "== fill"
  TESSERA_CACHE_DIR=$BASE timeout 200 python3 dev/masked_probe.py 128x192 --reps 20 | grep -v -i warn
  TESSERA_CACHE_DIR=$BASE timeout 100 python3 bench/sweep_fp8.py 4096 7168 16384 --reps 20 2>&1 | tail -2
  cp -r "$BASE" "$PATCHED"
  python3 dev/sass_patch.py "$PATCHED" --mode reuse-none --match "fp8_gemm"
  echo "== patched (no reuse flags)"
  TESSERA_CACHE_DIR=$PATCHED timeout 200 python3 dev/masked_probe.py 128x192 --reps 20 | grep -v -i warn
  echo "== base again"
  TESSERA_CACHE_DIR=$BASE timeout 200 python3 dev/masked_probe.py 128x192 --reps 20 | grep -v -i warn
  echo "== 4096x7168x16384: base, then patched"
  TESSERA_CACHE_DIR=$BASE timeout 100 python3 bench/sweep_fp8.py 4096 7168 16384 --reps 20 \
      --variant TESSERA_CACHE_DIR=$PATCHED 2>&1 | tail -3
} 2>&1 | tee "$OUT/reuse_ab.log"
