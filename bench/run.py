"""The benchmark: tessera against DeepGEMM, measured live in the same process, and cuBLASLt, on DeepGEMM's own test
shapes.

    python bench/run.py [--suite NAME]... [--json OUT.jsonl] [--reps 30] [--quick] [--peer DIR] [--no-peer]

Each row runs tessera's function and DeepGEMM's function of the same name on the same inputs, then the cuBLASLt
anchors, interleaved (two passes in alternating order), each call after the same L2 flush, and reports
ours / DeepGEMM from those live times, with every kernel a call launches summed (a scale-factor transpose counts).
DeepGEMM is imported from a built checkout (--peer, default peer/DeepGEMM; bench/peer/build.sh builds it) or from
the environment. Without it, DeepGEMM's recorded H200 times are shown instead, labelled "recorded, not live".
docs/performance.md describes the method and how to reproduce the published standing.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import deepgemm_peer as peer_module  # noqa: E402
import report  # noqa: E402
import suites_bf16  # noqa: E402
import suites_bf16_grouped  # noqa: E402
import suites_einsum  # noqa: E402
import suites_fp8  # noqa: E402
import suites_host  # noqa: E402
import suites_indexer  # noqa: E402
from rows import Context, measure  # noqa: E402
from timing import Timer, canary_us, canary_verdict  # noqa: E402

SUITES = {s.name: s for s in suites_fp8.SUITES + suites_bf16.SUITES + suites_bf16_grouped.SUITES +
          suites_einsum.SUITES + suites_indexer.SUITES + suites_host.SUITES}
FP8_SUITES = [s.name for s in suites_fp8.SUITES]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="suites: " + ", ".join(SUITES) + "; fp8 = the five FP8 suites; all")
    parser.add_argument("--suite", action="append", choices=list(SUITES) + ["fp8", "all"],
                        help="suite to run (repeatable; default fp8-dense)")
    parser.add_argument("--json", metavar="OUT.jsonl", help="also write the JSON lines to this file")
    parser.add_argument("--reps", type=int, default=30, help="timed calls per library and row, median taken (>= 10)")
    parser.add_argument("--quick", action="store_true", help="a subset of each suite's rows")
    parser.add_argument("--timer", choices=["kineto", "events", "sustained"], default="kineto",
                        help="profiler kernel durations (default), CUDA events around each call, or the mean of a 1 s "
                             "back-to-back loop without flushes")
    parser.add_argument("--flush-mib", type=int, default=2048, help="L2 flush before every timed call, MiB (>= 64)")
    parser.add_argument("--flush-kind", choices=["memset", "read"], default="memset",
                        help="flush by a memset (default, the published baselines' protocol) or by reading")
    parser.add_argument("--peer", metavar="DIR", default=peer_module.DEFAULT_CHECKOUT,
                        help="a built DeepGEMM checkout (default: peer/DeepGEMM)")
    parser.add_argument("--no-peer", action="store_true", help="do not run DeepGEMM (recorded figures only)")
    parser.add_argument("--shard", metavar="I/N", default="0/1",
                        help="only every N-th row of each suite from row I (0-based): N processes at once compile "
                             "both libraries' kernels N times faster (a warm-up before the timed run)")
    args = parser.parse_args(argv)
    try:
        args.shard_index, args.shard_count = (int(x) for x in args.shard.split("/"))
    except ValueError:
        parser.error(f"--shard: expected I/N, got {args.shard!r}")
    if not 0 <= args.shard_index < args.shard_count:
        parser.error(f"--shard: expected 0 <= I < N, got {args.shard!r}")
    if args.flush_mib < 64:
        parser.error("--flush-mib must be at least 64 (larger than L2)")
    if args.reps < 10:
        parser.error("--reps must be at least 10")
    names = args.suite or ["fp8-dense"]
    if "all" in names:
        names = list(SUITES)
    names = [x for n in names for x in (FP8_SUITES if n == "fp8" else [n])]
    args.suites = list(dict.fromkeys(names))
    return args


def git_commit():
    if os.environ.get("TESSERA_COMMIT"):  # a copied tree on the GPU machine may carry a stale .git
        return os.environ["TESSERA_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except Exception:  # noqa: BLE001
        return None


def import_tessera():
    try:
        import tessera
    except ImportError:  # the build tree
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "build", "python"))
        import tessera
    return tessera


def run_suite(suite, ctx, timer, reps, shard=(0, 1)):
    rows, canary = [], []
    print(f"\n-- running {suite.name}", flush=True)
    try:
        if suite.needs_gpu:
            canary.append(canary_us(timer))
        for index, row in enumerate(suite.rows(ctx)):
            if index % shard[1] != shard[0]:
                continue
            row.suite = suite.name
            print(f"  {row.label}", flush=True)
            if row.calls or row.baselines:
                measure(row, timer, reps)
                print("    " + report.row_line(row), flush=True)
            rows.append(row)
        if suite.needs_gpu:
            canary.append(canary_us(timer))
    except Exception as e:  # noqa: BLE001  (building a suite's inputs failed: report it, go on with the next)
        print(f"  suite {suite.name} stopped: {type(e).__name__}: {e}", flush=True)
    return rows, canary


def main(argv=None):
    args = parse_args(argv)
    gpu = any(SUITES[s].needs_gpu for s in args.suites)
    if not args.no_peer and gpu:
        peer_module.reexec_with_system_libstdcxx(args.peer)
    meta = dict(commit=git_commit())
    tessera = peer = None
    if gpu:
        import torch
        if not torch.cuda.is_available():
            sys.exit("bench/run.py: these suites need a CUDA GPU (compile runs without one)")
        tessera = import_tessera()
        peer, peer_text = (None, "DeepGEMM not run (--no-peer)") if args.no_peer else peer_module.load(args.peer)
        meta.update(card=torch.cuda.get_device_name(), torch=torch.__version__, cuda=torch.version.cuda,
                    reps=args.reps, timer=args.timer, flush_mib=args.flush_mib, flush_kind=args.flush_kind,
                    peer=peer_text)
        print(f"{meta['card']}, torch {meta['torch']} (CUDA {meta['cuda']}), tessera {tessera.__version__}, commit "
              f"{meta['commit']}; median of {args.reps}, timer {args.timer}, flush {args.flush_mib} MiB "
              f"({args.flush_kind})\npeer: {peer_text}" + ("" if peer else " -- ratios use recorded times"))
    ctx = Context(tessera, peer, args.quick)
    ctx.peer_checkout = peer_module.built_checkout(args.peer)
    timer = Timer(args.timer, args.flush_mib << 20, args.flush_kind)
    results = {}
    for name in args.suites:
        results[name] = run_suite(SUITES[name], ctx, timer, args.reps, (args.shard_index, args.shard_count))
    lines = []
    for name, (rows, canary) in results.items():
        report.print_table(name, rows, suites_host.COLUMNS.get(name))
        summary = report.summaries(rows)
        report.print_summaries(summary)
        warning = canary_verdict(canary)
        if len(canary) >= 2:
            print(f"  {warning}" if warning else "  canary steady: " + ", ".join(f"{t:.0f}" for t in canary) + " us")
        suite_meta = {**meta, "canary_us": [round(t, 1) for t in canary]}
        lines += [json.dumps(report.json_row(row, suite_meta)) for row in rows]
        lines += [json.dumps({"suite": name, "summary": s, **meta}) for s in summary]
    if args.json:
        with open(args.json, "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"\nJSON lines: {args.json}")


if __name__ == "__main__":
    main()
