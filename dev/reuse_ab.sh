#!/usr/bin/env bash
# What the promotion FFMAs' scheduling hints are worth (docs/perf/fp8_gemm.md v16). Fills a base kernel cache with
# ptxas's own hints (TESSERA_JIT_FFMA_HINTS=0), then times it against each entry of $PATCHES in one call:
#   a dev/sass_patch.py mode (e.g. "reuse-none"): a copy of the base cache with that rewrite;
#   "hints:n": kernels compiled with the JIT's reuse-hint pass at yield interval n (the default is hints:4).
# Hints only: results are unchanged, and both tools check them. Timed: dev/masked_probe.py 128x192 (dense,
# contiguous, psum, masked on the same work) and the 256x128 dense row 4096x7168x16384 (bench/sweep_fp8.py). The
# base runs first and last, to show drift.
#
#   dev/build_gpu.sh && PATCHES="reuse-none hints:2 hints:4 hints:6" dev/reuse_ab.sh    (about 1 minute per entry)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
export TESSERA_JIT_FFMA_HINTS=0
PATCHES=${PATCHES:-reuse-none hints:4}
BASE=/tmp/tessera-hints-base
probe() {  # probe CACHE [HINTS]
  TESSERA_CACHE_DIR=$1 TESSERA_JIT_FFMA_HINTS=${2:-0} timeout 200 python3 dev/masked_probe.py 128x192 --reps 20 2>&1 |
    grep -v -i warn
}
{
  rm -rf "$BASE"
  echo "== fill"
  probe "$BASE"
  TESSERA_CACHE_DIR=$BASE timeout 100 python3 bench/sweep_fp8.py 4096 7168 16384 --reps 20 2>&1 | tail -2
  variants=()
  for p in $PATCHES; do
    dir=/tmp/tessera-hints-${p/:/-}
    rm -rf "$dir"
    echo "== $p"
    if [[ $p == hints:* ]]; then
      probe "$dir" "${p#hints:}"
      variants+=(--variant "TESSERA_CACHE_DIR=$dir,TESSERA_JIT_FFMA_HINTS=${p#hints:}")
    else
      cp -r "$BASE" "$dir"
      python3 dev/sass_patch.py "$dir" --mode "$p" --match "fp8_gemm" | sort | uniq -c | head -4
      probe "$dir"
      variants+=(--variant "TESSERA_CACHE_DIR=$dir")
    fi
  done
  echo "== base again"
  probe "$BASE"
  echo "== 4096x7168x16384: base and each entry"
  TESSERA_CACHE_DIR=$BASE timeout 200 python3 bench/sweep_fp8.py 4096 7168 16384 --reps 20 "${variants[@]}" 2>&1 | tail -6
} 2>&1 | tee "$OUT/reuse_ab.log"
