#!/usr/bin/env bash
# Is the mainloop bound by the SM's shared-memory bandwidth? (docs/perf/fp8_gemm.md v17.) Per k-block a 128x192 tile
# asks shared memory for ~138 B/cycle at the full wgmma rate (B read once per 64-row wgmma, A once, TMA writes of
# A and B), a 256x128 tile for ~144, against 128 B/cycle. One ncu profile each of ours and cuBLASLt per-tensor per
# shape, with the speed-of-light, memory-workload and compute sections; prints their L1/TEX (which includes shared
# memory), memory-pipe, compute and issue-slot rows. (The memory tables' per-unit rows do not come out of the CSV
# export, so they are not asked for.)
#
#   dev/ncu_smem.sh [M N K ...]      (after a build into build-gpu; default 4096x32768x512 and 4096x7168x16384)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
[ $# -ge 3 ] || set -- 4096 32768 512 4096 7168 16384
while [ $# -ge 3 ]; do
    shape="$1x$2x$3"
    for who in ours cublas; do
        kernel=tessera_sm90_fp8_gemm_kernel extra=()
        [ $who = cublas ] && kernel='nvjet|sm90_xmma|cutlass' extra=(--cublas)
        ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 2 --launch-count 1 \
            --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis -f -o "$OUT/smem_${who}_$shape" \
            python3 bench/one_gemm.py "$1" "$2" "$3" "${extra[@]}" >"$OUT/smem_${who}_$shape.log" 2>&1
        ncu --import "$OUT/smem_${who}_$shape.ncu-rep" --page details --csv >"$OUT/smem_${who}_$shape.csv" 2>/dev/null
        echo "== $who $shape"
        python3 - "$OUT/smem_${who}_$shape.csv" <<'EOF'
import csv, sys
keep = ("L1/TEX", "Pipes Busy", "Duration", "SM Frequency", "Mem Busy", "Max Bandwidth", "Compute (SM)",
        "Issue Slots")
for r in csv.DictReader(open(sys.argv[1])):
    name = r.get("Metric Name", "")
    if any(k in name for k in keep):
        print(f"  {r.get('Section Name', '')[:28]:28s} {name[:60]:60s} {r.get('Metric Value', '')} {r.get('Metric Unit', '')}")
EOF
    done
    shift 3
done 2>&1 | tee "$OUT/ncu_smem.log"
