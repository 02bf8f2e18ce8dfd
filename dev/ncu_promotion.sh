#!/usr/bin/env bash
# Where the M = 4096 mainloop loses its cycles (docs/perf/fp8_gemm.md v4-v5): one ncu profile of the 256x128 kernel
# at 4096x7168x16384 with warp-state and per-instruction stall sampling, plus the same for cuBLASLt per-tensor, then
# the stall reasons at the promotion FFMAs, the wgmma wait (WARPGROUP.DEPBAR) and the barrier waits.
#
#   dev/ncu_promotion.sh [M N K]      (on the GPU machine, after building into build-gpu; outputs under $OUT)
#
# Questions it answers: is the tensor pipe idle while FFMAs issue (pipe_tensor active vs elapsed), and do the FFMAs
# stall on the register file / dispatch ("math pipe throttle", "dispatch stall", "mio throttle") or do the consumer
# warps mostly wait at the DEPBAR (wgmma latency) or at the turn / full barriers?
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
SHAPE=("${@:-4096 7168 16384}")
read -r M N K <<<"${SHAPE[*]}"
METRICS=sm__cycles_elapsed.max,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,\
sm__inst_executed_pipe_fma.sum,smsp__cycles_active.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed,\
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum
profile() {  # profile NAME KERNEL_REGEX [one_gemm args]
    local name=$1 kernel=$2; shift 2
    ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 2 --launch-count 1 \
        --section WarpStateStats --section SourceCounters --section SpeedOfLight --metrics "$METRICS" \
        -f -o "$OUT/$name" python3 bench/one_gemm.py "$M" "$N" "$K" "$@" >"$OUT/$name.log" 2>&1
    ncu --import "$OUT/$name.ncu-rep" --page details --csv >"$OUT/$name.details.csv" 2>/dev/null
    ncu --import "$OUT/$name.ncu-rep" --page source --print-source sass --csv >"$OUT/$name.sass.csv" 2>/dev/null
}
profile ours tessera_sm90_fp8_gemm_kernel
profile cublas 'nvjet|sm90_xmma|cutlass' --cublas
python3 - "$OUT" <<'EOF'
import csv, os, sys
out = sys.argv[1]
for name in ("ours", "cublas"):
    path = os.path.join(out, f"{name}.details.csv")
    if not os.path.exists(path):
        print(f"{name}: no report"); continue
    rows = list(csv.DictReader(open(path)))
    keep = ("Elapsed Cycles", "gmma", "pipe_fma", "Warp Cycles Per Issued", "Issue Slots", "SM Frequency",
            "Duration")
    print(f"== {name}")
    for r in rows:
        metric = r.get("Metric Name", "")
        if any(k in metric for k in keep):
            print(f"  {metric:70s} {r.get('Metric Value', '')} {r.get('Metric Unit', '')}")
path = os.path.join(out, "ours.sass.csv")
if os.path.exists(path):
    rows = list(csv.DictReader(open(path)))
    stall_cols = [c for c in (rows[0].keys() if rows else []) if c.startswith("stall_") or "Stall" in c]
    groups = {"FFMA": [], "DEPBAR": [], "SYNCS": [], "BAR": [], "QGMMA": []}
    for r in rows:
        src = r.get("Source", "")
        for g in groups:
            if src.strip().startswith(g) or f" {g}" in src:
                groups[g].append(r)
                break
    print("== ours: sampled stalls by instruction group (sum over instructions)")
    for g, rs in groups.items():
        totals = {}
        for r in rs:
            for c in stall_cols:
                try:
                    totals[c] = totals.get(c, 0.0) + float(r[c] or 0)
                except ValueError:
                    pass
        top = sorted(totals.items(), key=lambda kv: -kv[1])[:5]
        print(f"  {g:7s} ({len(rs)} instr): " + ", ".join(f"{k}={v:.0f}" for k, v in top))
EOF
