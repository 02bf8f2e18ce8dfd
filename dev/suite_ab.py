"""Table of a dev/suite_ab.sh run: per suite and row, µs under each run (tree, the variants, tree) and each variant
over the tree runs' mean, with the geomean of each ratio. Input: JSON lines of bench/run.py, each tagged "ab_run":
"tree" or "tree2" (the tree's kernels) or a variant's label.

    python dev/suite_ab.py gpu-out/suite_ab.jsonl"""
import json
import math
import sys
from collections import defaultdict


def geomeans(logs):
    return "  geomean variant / tree: " + ", ".join(
        f"{label} {math.exp(sum(v) / len(v)):.4f} (n={len(v)})" for label, v in logs.items() if v)


def main(path):
    runs = defaultdict(dict)  # (suite, shape) -> label -> µs
    order, labels = [], []
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            if row.get("ours_us") is None:
                continue
            key = (row["suite"], row["shape"])
            if key not in runs:
                order.append(key)
            label = row["ab_run"]
            if label == "tree" and "tree" in runs[key]:
                label = "tree2"  # older files tag both tree runs "tree"
            if label not in labels:
                labels.append(label)
            runs[key][label] = row["ours_us"]
    variants = [label for label in labels if label not in ("tree", "tree2")]
    columns = ["tree"] + variants + ["tree2"]
    suite, logs = None, {}
    for key in order:
        if key[0] != suite:
            if logs:
                print(geomeans(logs))
            suite, logs = key[0], {v: [] for v in variants}
            head = " ".join(f"{c[:12]:>12}" for c in columns)
            ratios = " ".join(f"{v[:10]:>10}" for v in variants)
            print(f"== {suite}\n{'shape':28} {head} {ratios}")
        r = runs[key]
        cells = " ".join(f"{r[c]:12.1f}" if c in r else f"{'-':>12}" for c in columns)
        tree = [r[c] for c in ("tree", "tree2") if c in r]
        out = []
        for v in variants:
            if tree and v in r:
                ratio = r[v] / (sum(tree) / len(tree))
                logs[v].append(math.log(ratio))
                out.append(f"{ratio:10.3f}")
            else:
                out.append(f"{'-':>10}")
        print(f"{key[1]:28} {cells} {' '.join(out)}")
    if logs:
        print(geomeans(logs))


if __name__ == "__main__":
    main(sys.argv[1])
