"""Compares two bench/run.py JSON files row by row (A/B of two trees or two days): tessera's time in B over A per
row, the geomean per suite, and the same for DeepGEMM's live time as the control (a control that moved as much as
ours says the machine moved, not the code).

    python bench/compare.py A.jsonl B.jsonl
"""
import json
import math
import sys


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if "shape" in r:
                rows[(r["suite"], r["shape"])] = r
    return rows


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def compare(a, b):
    """{suite: [(shape, a_us, b_us, b/a, peer b/a)]} over the rows both files timed."""
    out = {}
    for key in a:
        if key not in b:
            continue
        ra, rb = a[key], b[key]
        ours = (ra.get("tessera_us"), rb.get("tessera_us"))
        peer = (ra.get("deep_gemm_us"), rb.get("deep_gemm_us"))
        ratio = ours[1] / ours[0] if all(ours) else None
        control = peer[1] / peer[0] if all(peer) else None
        out.setdefault(key[0], []).append((key[1], ours[0], ours[1], ratio, control))
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    table = compare(load(argv[0]), load(argv[1]))
    if not table:
        sys.exit("compare.py: the two files share no rows")
    for suite, rows in table.items():
        print(f"== {suite}")
        width = max(len(r[0]) for r in rows)
        print(f"{'shape'.ljust(width)}  {'A_us':>9}  {'B_us':>9}  {'B/A':>6}  {'peer B/A':>8}")
        for shape, ua, ub, ratio, control in rows:
            cells = [f"{v:9.1f}" if v else f"{'-':>9}" for v in (ua, ub)]
            cells += [f"{ratio:6.3f}" if ratio else f"{'-':>6}", f"{control:8.3f}" if control else f"{'-':>8}"]
            print(f"{shape.ljust(width)}  " + "  ".join(cells))
        g, c = geomean([r[3] for r in rows]), geomean([r[4] for r in rows])
        print(f"geomean B/A: ours {g:.4f}" + (f", DeepGEMM (control) {c:.4f}" if c else "") if g else "geomean: -")


if __name__ == "__main__":
    main()
