#!/usr/bin/env bash
# Where the M = 4096 mainloop loses its cycles (docs/perf/fp8_gemm.md v4-v5): one ncu profile of the 256x128 kernel
# at 4096x7168x16384 with warp-state and per-instruction stall sampling, plus the same for cuBLASLt per-tensor, then
# the stall reasons at the promotion FFMAs, the wgmma wait (WARPGROUP.DEPBAR) and the barrier waits.
#
#   dev/ncu_promotion.sh [M N K [ONE_GEMM_ARGS...]]   (on the GPU machine, after building into build-gpu; outputs
#                                                     under $OUT)
#   VARIANT=variants/pre-regs dev/ncu_promotion.sh 192 6144 7168 --masked 32
#                                     (masked g32 e192 under the working tree's kernels and a variant's: no cuBLASLt)
#   VARIANT_ENV=TESSERA_JIT_FFMA_HINTS=4:all dev/ncu_promotion.sh 6144 6144 7168 --contiguous 1
#                                     (the variant is the same kernels under an environment setting: here the
#                                     contiguous kernel with the JIT's reuse-hint pass, which the default leaves
#                                     out for that kind, docs/perf/fp8_gemm.md v16-v17)
#
# Questions it answers: is the tensor pipe idle while FFMAs issue (pipe_tensor active vs elapsed), and do the FFMAs
# stall on the register file / dispatch ("math pipe throttle", "dispatch stall", "mio throttle") or do the consumer
# warps mostly wait at the DEPBAR (wgmma latency) or at the turn / full barriers?
# For decode shapes (e.g. dev/ncu_promotion.sh 128 7168 2048) the same report says where a memory-bound kernel's fixed
# time goes: SM-active cycles (average and busiest SM) against the duration, and the DRAM bytes read and written.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
M=${1:-4096} N=${2:-7168} K=${3:-16384}
[ $# -ge 3 ] && shift 3
EXTRA=("$@")  # more bench/one_gemm.py arguments (e.g. --masked 32)
METRICS=sm__cycles_elapsed.max,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,\
sm__inst_executed_pipe_fma.sum,smsp__cycles_active.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed,\
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,sm__cycles_active.avg,sm__cycles_active.max,\
dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
profile() {  # profile NAME KERNEL_REGEX [one_gemm args]
    local name=$1 kernel=$2; shift 2
    ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 2 --launch-count 1 \
        --section WarpStateStats --section SourceCounters --section SpeedOfLight --metrics "$METRICS" \
        -f -o "$OUT/$name" python3 bench/one_gemm.py "$M" "$N" "$K" "$@" >"$OUT/$name.log" 2>&1
    ncu --import "$OUT/$name.ncu-rep" --page details --csv >"$OUT/$name.details.csv" 2>/dev/null
    ncu --import "$OUT/$name.ncu-rep" --page source --print-source sass --csv >"$OUT/$name.sass.csv" 2>/dev/null
}
profile ours tessera_sm90_fp8_gemm_kernel "${EXTRA[@]}"
if [ -n "${VARIANT:-}" ]; then
    TESSERA_KERNEL_DIR=$(cd "$VARIANT" && pwd) profile variant tessera_sm90_fp8_gemm_kernel "${EXTRA[@]}"
elif [ -n "${VARIANT_ENV:-}" ]; then
    (export "$VARIANT_ENV" && profile variant tessera_sm90_fp8_gemm_kernel "${EXTRA[@]}")
fi
[[ " ${EXTRA[*]} " == *" --masked "* || " ${EXTRA[*]} " == *" --contiguous "* ]] ||
    profile cublas 'nvjet|sm90_xmma|cutlass' --cublas
python3 - "$OUT" <<'EOF'
import csv, os, sys
out = sys.argv[1]
for name in ("ours", "variant", "cublas"):
    path = os.path.join(out, f"{name}.details.csv")
    if not os.path.exists(path):
        print(f"{name}: no report"); continue
    rows = list(csv.DictReader(open(path)))
    keep = ("Elapsed Cycles", "gmma", "pipe_fma", "Warp Cycles Per Issued", "Issue Slots", "SM Frequency",
            "Duration", "cycles_active", "dram__bytes")
    print(f"== {name}")
    for r in rows:
        metric = r.get("Metric Name", "")
        if any(k in metric for k in keep):
            print(f"  {metric:70s} {r.get('Metric Value', '')} {r.get('Metric Unit', '')}")
def num(x):
    try:
        return float((x or "0").replace(",", ""))
    except ValueError:
        return 0.0
for name in ("ours", "variant"):
    path = os.path.join(out, f"{name}.sass.csv")
    if not os.path.exists(path):
        continue
    # The source page's CSV starts with a "Kernel Name" line; the column header is the second line.
    rows = list(csv.reader(open(path)))
    header = rows[1] if len(rows) > 1 else []
    data = [dict(zip(header, r)) for r in rows[2:]]
    stall_cols = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]
    total = sum(num(d[c]) for d in data for c in stall_cols) or 1.0
    print(f"== {name}: share of stall samples by instruction (above 1 %), then by opcode")
    by_op = {}
    for i, d in enumerate(data):
        src = d.get("Source", "").strip()
        share = sum(num(d[c]) for c in stall_cols) / total
        words = src.split()
        op = (words[1] if words and words[0].startswith("@") and len(words) > 1 else (words or ["?"])[0]).split(".")[0]
        by_op[op] = by_op.get(op, 0.0) + share
        if share > 0.01:
            top = sorted(((num(d[c]) / total, c[6:]) for c in stall_cols), reverse=True)[:2]
            print(f"  {i:4d} {src[:60]:60s} {share:.3f}  " + " ".join(f"{n}={v:.3f}" for v, n in top))
    for op, share in sorted(by_op.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {op:12s} {share:.3f}")
EOF
