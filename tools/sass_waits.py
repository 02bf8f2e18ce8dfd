"""Which instructions wait on which loads: the scoreboard control bits of one cached kernel's SASS.

    python tools/sass_waits.py CACHE_DIR SPEC_REGEX [--from 0x0] [--to 0x3000] [--grep 'LDG|QGMMA|R2UR|wait=']

Prints, per instruction, the scoreboards it sets (W = on write-back, R = on operand read) and the ones it waits for,
decoded from the 128-bit encoding (SM90: high word bits 46-48 write barrier, 49-51 read barrier, 52-57 wait mask;
7 means none). It answers questions such as whether a tile's first wgmma waits for the tile's B-scale loads (ptxas
may put an R2UR that waits on them right before the QGMMA). The kernel is the first in CACHE_DIR whose spec (the
first line of kernel.cu) matches SPEC_REGEX; nvdisasm as in tools/sass_diff.py."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_diff import cubins  # noqa: E402


def decode(nvdisasm, elf):
    """[(address, instruction, sets, waits)] from `nvdisasm -hex`, whose two encoding words follow each line."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(elf)
        f.flush()
        lines = subprocess.run([nvdisasm, "-c", "-hex", f.name], capture_output=True, text=True,
                               check=True).stdout.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\*\s*0x[0-9a-f]+\s*\*/", line)
        if not m:
            continue
        nxt = re.search(r"/\*\s*(0x[0-9a-f]+)\s*\*/", lines[i + 1]) if i + 1 < len(lines) else None
        hi = int(nxt.group(1), 16) if nxt else 0
        write, read, wait = (hi >> 46) & 7, (hi >> 49) & 7, (hi >> 52) & 0x3F
        sets = ([f"W{write}"] if write != 7 else []) + ([f"R{read}"] if read != 7 else [])
        waits = [f"SB{j}" for j in range(6) if wait >> j & 1]
        out.append((int(m.group(1), 16), m.group(2).strip(), sets, waits))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cache")
    parser.add_argument("spec")
    parser.add_argument("--from", dest="lo", default="0x0")
    parser.add_argument("--to", dest="hi", default="0xffffff")
    parser.add_argument("--grep", default=None, help="only lines matching this regex")
    args = parser.parse_args()
    nvdisasm = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    if not nvdisasm:
        sys.exit("nvdisasm not found: set NVDISASM or put it on PATH (pip install nvidia-cuda-nvdisasm)")
    match = next(((s, e) for s, e in sorted(cubins(args.cache).items()) if re.search(args.spec, s)), None)
    if match is None:
        sys.exit(f"no kernel in {args.cache} matches {args.spec!r}")
    print(match[0])
    lo, hi = int(args.lo, 16), int(args.hi, 16)
    for addr, ins, sets, waits in decode(nvdisasm, match[1][0]):
        line = f"{addr:05x} {ins[:72]:72s} set={','.join(sets):6s} wait={','.join(waits)}"
        if lo <= addr <= hi and (args.grep is None or re.search(args.grep, line)):
            print(line)


if __name__ == "__main__":
    main()
