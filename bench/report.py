"""Output of bench/run.py: one aligned table per suite, its summary lines, and one JSON line per row."""
import math

from rows import OURS, PEER

COPY = "hbm_copy"  # a baseline moving the row's bytes as a device copy: its time over ours is the copy-bandwidth share


def fmt(v, spec):
    return "-" if v is None else (format(v, spec) if isinstance(v, (int, float)) else str(v))


def status_or(r, key, spec):
    v = r.get(key)
    if v is None and key.endswith("_us"):
        status = r.get(key[:-3] + "_status", "")
        return status if status not in ("", "ok") else "-"
    return fmt(v, spec)


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def baseline_names(rows):
    """Every baseline of the rows, in first-seen order (a suite's rows may carry different ones)."""
    return list(dict.fromkeys(b for r in rows for b in r.baselines))


CLEAN, CLEAN_COPY = "clean", "clean_copy"  # a part of the call timed alone, and a copy of the bytes that part moves


def derived(row):
    """Figures computed from a measured row: copy_bw_frac, the fraction of copy bandwidth it reaches (copy / ours);
    clean_bw_frac, the same for the part timed alone as baseline `clean` (clean_copy / clean)."""
    r = row.result
    out = {}
    if COPY in row.baselines:
        ours, copy = r.get(f"{OURS}_us"), r.get(f"{COPY}_us")
        out["copy_bw_frac"] = copy / ours if ours and copy else None
    if CLEAN in row.baselines and CLEAN_COPY in row.baselines:
        part, copy = r.get(f"{CLEAN}_us"), r.get(f"{CLEAN_COPY}_us")
        out["clean_bw_frac"] = copy / part if part and copy else None
    return out


def timed_columns(rows):
    baselines = baseline_names(rows)
    recorded = any(r.result.get("peer") == "recorded, not live" for r in rows)
    cols = [("ours_us", f"{OURS}_us", ".1f")]
    cols += [("dg_recorded_us", "peer_recorded_us", ".1f")] if recorded else [("dg_us", f"{PEER}_us", ".1f")]
    cols += [("ours/dg", "ours_over_peer", ".3f"), ("TFLOPS", "tflops", ".0f"), ("GB/s", "gbps", ".0f")]
    cols += [(f"{b}_us", f"{b}_us", ".1f") for b in baselines]
    cols += [(f"ours/{b}", f"ours_over_{b}", ".2f") for b in baselines]
    cols += [("copy_bw", "copy_bw_frac", ".0%")] if COPY in baselines else []
    cols += [("clean_bw", "clean_bw_frac", ".0%")] if CLEAN in baselines and CLEAN_COPY in baselines else []
    return cols + [("config", "config", "")]


def print_table(suite, rows, columns=None):
    if not rows:
        return
    cols = [("shape", "label", "")] + (columns or timed_columns(rows))
    table = [[h for h, _, _ in cols]]
    for row in rows:
        merged = {"label": row.label, "config": row.config, **row.result, **derived(row)}
        table.append([status_or(merged, key, spec) for _, key, spec in cols])
    widths = [max(len(line[i]) for line in table) for i in range(len(cols))]
    print(f"\n== {suite}")
    for line in table:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip())


def summaries(rows):
    """Per bucket: rows, geomean ours / DeepGEMM (live or recorded), rows slower than DeepGEMM, geomean ours / each
    baseline. A list of dicts (also what the JSON summary lines hold)."""
    out = []
    buckets = {}
    for row in rows:
        buckets.setdefault(row.bucket, []).append(row)
    for bucket, members in buckets.items():
        ratios = [m.result.get("ours_over_peer") for m in members]
        kinds = {m.result.get("peer") for m in members if m.result.get("ours_over_peer")}
        s = {"bucket": bucket, "rows": len(members), "ours_over_peer": geomean(ratios),
             "peer": "live" if kinds == {"live"} else ("recorded, not live" if kinds else None),
             "rows_slower_than_peer": sum(1 for v in ratios if v and v > 1.0),
             "rows_with_peer": sum(1 for v in ratios if v)}
        for b in members[0].baselines:
            s[f"ours_over_{b}"] = geomean([m.result.get(f"ours_over_{b}") for m in members])
        clean = [derived(m).get("clean_bw_frac") for m in members]
        if any(clean):
            s["clean_bw_min"] = min(v for v in clean if v)
        out.append(s)
    return out


def print_summaries(summary):
    for s in summary:
        parts = []
        if s["ours_over_peer"]:
            parts.append(f"ours/DeepGEMM {s['ours_over_peer']:.3f} ({s['peer']}; {s['rows_slower_than_peer']} of "
                         f"{s['rows_with_peer']} rows slower)")
        parts += [f"{k} {v:.3f}" for k, v in s.items() if k.startswith("ours_over_") and k != "ours_over_peer" and v]
        if s.get("clean_bw_min"):
            parts.append(f"clean kernel at >= {s['clean_bw_min']:.0%} of copy bandwidth")
        if parts:
            print(f"  geomean [{s['bucket'] or 'all'}] ({s['rows']} rows): " + ", ".join(parts))


def row_line(row):
    """One line of a measured row, printed as it completes (a run cut short still shows what it measured)."""
    r = row.result
    parts = [f"{name} {status_or(r, name + '_us', '.1f')} us" for name in [*row.calls, *row.baselines]]
    if r.get("ours_over_peer"):
        parts.append(f"ours/DeepGEMM {r['ours_over_peer']:.3f} ({r['peer']})")
    if derived(row).get("copy_bw_frac"):
        parts.append(f"{derived(row)['copy_bw_frac']:.0%} of copy bandwidth")
    if derived(row).get("clean_bw_frac"):
        parts.append(f"clean kernel at {derived(row)['clean_bw_frac']:.0%} of copy bandwidth")
    return ", ".join(parts)


def json_row(row, meta):
    out = {"suite": row.suite, "shape": row.label, **row.shape, "flops": row.flops, "bytes": row.nbytes,
           "config": row.config, **row.result, **derived(row), **meta}
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}
