#!/usr/bin/env bash
# Why the masked kernel runs ~20-33 % slower than the dense one on the same tile and FLOPs (docs/perf/fp8_grouped.md
# v7): one ncu profile each of masked g6 e1024 6144x7168 (M_max 4096) and dense 6144x6144x7168, both forced to
# 128x144 (TESSERA_FP8_CONFIG), with throughput, memory (L2 hit rate, DRAM bytes) and warp-state sections; prints
# duration, SM active cycles, DRAM and L2 traffic, L2->SM bytes and warp cycles per issued instruction (the details
# page carries no per-reason stall breakdown, and the gmma-activity metric reads n/a on this driver: for those, the
# reports under $OUT or dev/ncu_promotion.sh's source-level sampling).
#
#   dev/masked_vs_dense_ncu.sh   (on the GPU machine after dev/build_gpu.sh; about 2 minutes; reports under $OUT)
#   TILE=128x192 MASKED="194 6144 7168 --masked 32" dev/masked_vs_dense_ncu.sh   (another tile and masked case)
#   TILE=128x192 MASKED="6144 6144 7168 --contiguous 1" dev/masked_vs_dense_ncu.sh   (MASKED: any bench/one_gemm.py
#   arguments; here contiguous with one expert, the same work as the dense run)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:-$PWD/build-gpu/python}
METRICS=gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,\
dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,\
sm__cycles_active.avg,sm__cycles_elapsed.max,l1tex__m_xbar2l1tex_read_bytes.sum,\
lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex.avg.pct_of_peak_sustained_elapsed
profile() {  # profile NAME one_gemm-args...
    local name=$1; shift
    TESSERA_FP8_CONFIG=${TILE:-128x144} ncu --clock-control none --kernel-name regex:tessera_sm90_fp8_gemm_kernel \
        --launch-skip 2 --launch-count 1 --section WarpStateStats --section SpeedOfLight --metrics "$METRICS" \
        -f -o "$OUT/$name" python3 bench/one_gemm.py "$@" >"$OUT/$name.log" 2>&1
    ncu --import "$OUT/$name.ncu-rep" --page details --csv >"$OUT/$name.details.csv" 2>/dev/null
}
# shellcheck disable=SC2086  # MASKED is an argument list
profile masked ${MASKED:-1024 6144 7168 --masked 6}
profile dense 6144 6144 7168
python3 - "$OUT" <<'PY'
import csv, os, sys
out = sys.argv[1]
for name in ("masked", "dense"):
    path = os.path.join(out, f"{name}.details.csv")
    if not os.path.exists(path):
        print(f"{name}: no report"); continue
    print(f"== {name}")
    stalls = []
    for r in csv.DictReader(open(path)):
        metric, value, unit = r.get("Metric Name", ""), r.get("Metric Value", ""), r.get("Metric Unit", "")
        if metric.startswith("Stall") or "Warp Cycles Per" in metric:
            try: stalls.append((float(value.replace(",", "")), metric))
            except ValueError: pass
        elif any(k in metric for k in ("gpu__time", "gmma", "dram__bytes", "lts__", "cycles_active", "cycles_elapsed",
                                        "xbar2l1tex", "Duration", "Throughput", "Compute (SM)", "SM Frequency")):
            print(f"  {metric:70s} {value} {unit}")
    for v, m in sorted(stalls, reverse=True)[:8]:
        print(f"  {m:70s} {v}")
PY
