"""Table of a dev/suite_ab.sh run: per suite and row, µs under tree / variant / tree and variant over the tree runs'
mean, with the geomean of that ratio. Input: JSON lines of bench/run.py, each tagged "ab_run": "tree" | "variant".

    python dev/suite_ab.py gpu-out/suite_ab.jsonl"""
import json
import math
import sys
from collections import defaultdict


def main(path):
    runs = defaultdict(lambda: defaultdict(list))  # (suite, shape) -> run -> [µs, ...]
    order = []
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            if row.get("ours_us") is None:
                continue
            key = (row["suite"], row["shape"])
            if key not in runs:
                order.append(key)
            runs[key][row["ab_run"]].append(row["ours_us"])
    suite = None
    logs = []
    for key in order:
        if key[0] != suite:
            if logs:
                print(f"  geomean variant / tree: {math.exp(sum(logs) / len(logs)):.4f} (n={len(logs)})")
            suite, logs = key[0], []
            print(f"== {suite}\n{'shape':28} {'tree':>9} {'variant':>9} {'tree':>9} {'ratio':>7}")
        tree, variant = runs[key]["tree"], runs[key]["variant"]
        cells = [f"{tree[0]:9.1f}" if tree else f"{'-':>9}", f"{variant[0]:9.1f}" if variant else f"{'-':>9}",
                 f"{tree[1]:9.1f}" if len(tree) > 1 else f"{'-':>9}"]
        ratio = variant[0] / (sum(tree) / len(tree)) if tree and variant else None
        if ratio:
            logs.append(math.log(ratio))
        print(f"{key[1]:28} {' '.join(cells)} {ratio:7.3f}" if ratio else f"{key[1]:28} {' '.join(cells)}")
    if logs:
        print(f"  geomean variant / tree: {math.exp(sum(logs) / len(logs)):.4f} (n={len(logs)})")


if __name__ == "__main__":
    main(sys.argv[1])
