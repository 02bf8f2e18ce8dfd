#!/usr/bin/env bash
# What the promotion FFMAs' scheduling hints are worth (docs/perf/fp8_gemm.md v16): fills a kernel cache, copies it
# once per patch in $PATCHES (dev/sass_patch.py modes; "reuse-max:4" passes --yield-every 4; hints only, results
# unchanged and checked by both tools), and times every cache in one call: dev/masked_probe.py 128x192 (dense,
# contiguous, psum, masked on the same work) and the 256x128 dense row 4096x7168x16384 through bench/sweep_fp8.py.
# The base cache runs first and last, to show drift. It is compiled with TESSERA_JIT_FFMA_HINTS=0 (ptxas's own
# hints), so "reuse-max:4" reproduces the JIT's default pass and the other patches compare against both.
#
#   dev/build_gpu.sh && PATCHES="reuse-none reuse-max:0" dev/reuse_ab.sh     (about 1 minute per patch)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
PATCHES=${PATCHES:-reuse-none}
BASE=/tmp/tessera-hints-base
export TESSERA_JIT_FFMA_HINTS=0
probe() { TESSERA_CACHE_DIR=$1 timeout 200 python3 dev/masked_probe.py 128x192 --reps 20 2>&1 | grep -v -i warn; }
{
  rm -rf "$BASE"
  echo "== fill"
  probe "$BASE"
  TESSERA_CACHE_DIR=$BASE timeout 100 python3 bench/sweep_fp8.py 4096 7168 16384 --reps 20 2>&1 | tail -2
  variants=()
  for p in $PATCHES; do
    dir=/tmp/tessera-hints-${p/:/-}
    rm -rf "$dir" && cp -r "$BASE" "$dir"
    mode=${p%%:*}; every=0; [[ $p == *:* ]] && every=${p#*:}
    python3 dev/sass_patch.py "$dir" --mode "$mode" --yield-every "$every" --match "fp8_gemm" | sort | uniq -c | head -4
    echo "== $p"
    probe "$dir"
    variants+=(--variant "TESSERA_CACHE_DIR=$dir")
  done
  echo "== base again"
  probe "$BASE"
  echo "== 4096x7168x16384: base and each patch"
  TESSERA_CACHE_DIR=$BASE timeout 200 python3 bench/sweep_fp8.py 4096 7168 16384 --reps 20 "${variants[@]}" 2>&1 | tail -6
} 2>&1 | tee "$OUT/reuse_ab.log"
