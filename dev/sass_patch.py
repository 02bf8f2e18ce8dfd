"""Experiment tool: rewrites the scheduling hints of the FFMA runs (the FP8 scale promotion) in cached cubins, to
measure whether the warp scheduler's yield / operand-reuse hints decide how well the promotion overlaps the other
warpgroup's wgmma. Only hint bits change (yield, reuse), never stall counts, barriers or operands, so the results
stay exact; still, run the GPU tests against a patched cache before trusting a timing.

    TESSERA_CACHE_DIR=/tmp/base python bench/sweep_fp8.py 4096 7168 16384 --reps 1      # fills the cache
    cp -r /tmp/base /tmp/patched && python dev/sass_patch.py /tmp/patched --mode yield-all --match kBlockM=256
    python bench/sweep_fp8.py 4096 7168 16384 --variant TESSERA_CACHE_DIR=/tmp/patched

Modes (applied to every FFMA in a run of at least --min-run consecutive FFMAs):
    yield-all   clear the reuse flags, set the yield hint (control bit 109 = 0) on every FFMA
    yield-none  clear the yield hint (bit 109 = 1) on every FFMA, reuse flags kept
    reuse-none  clear the reuse flags only, yield hints kept: what ptxas's operand reuse is worth on its own (the
                contiguous 128x192 promotion carries 34 reuse flags on 96 FFMAs, dense 43; docs/perf/fp8_grouped.md v11)
The opposite rewrite (the scale cached along each run, a yield every n FFMAs) is the JIT's own pass now:
TESSERA_JIT_FFMA_HINTS=n, src/jit/ffma_hints.cpp (dev/reuse_ab.sh's "hints:n"; docs/perf/fp8_gemm.md v16).
SASS control field (bits 105-125 of each 128-bit instruction): stall 105-108, yield 109, write barrier 110-112,
read barrier 113-115, wait mask 116-121, reuse 122-125. ptxas 13.0 alternates bit 109 = 0 / 1 along such runs, the
instruction that sets a reuse flag keeping bit 109 = 1. The cache frame is disk_cache.cpp's: "TSRCUB01", payload
size, payload checksum (jit/hash.hpp's Digest)."""
import argparse
import os
import re
import struct

MASK64 = (1 << 64) - 1
PRIME = 0x100000001B3
FFMA_RRR = 0x223  # opcode field (bits 0-11) of FFMA Rd, Ra, Rb, Rc


def mix64(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def checksum(data):
    lo, hi = 0xCBF29CE484222325, 0x84222325CBF29CE4
    for c in data:
        lo = ((lo ^ c) * PRIME) & MASK64
        hi = ((hi ^ c) * PRIME) & MASK64
    lo = ((lo ^ len(data)) * PRIME) & MASK64
    hi = ((hi ^ (len(data) + 0x5BD1E995)) * PRIME) & MASK64
    return mix64(lo) ^ mix64((hi + 0x9E3779B97F4A7C15) & MASK64)


def text_sections(elf):
    """(offset, size) of every .text.* section of an ELF64 little-endian image."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    def header(i):
        return struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize)
    strtab_off = header(shstrndx)[4]
    for i in range(shnum):
        name_off, _, _, _, off, size = header(i)[:6]
        name = elf[strtab_off + name_off:elf.index(b"\0", strtab_off + name_off)].decode()
        if name.startswith(".text."):
            yield off, size


def patch_elf(elf, mode, min_run):
    elf = bytearray(elf)
    changed = 0
    for off, size in text_sections(elf):
        words = [struct.unpack_from("<QQ", elf, off + i) for i in range(0, size, 16)]
        is_ffma = [(lo & 0xFFF) == FFMA_RRR for lo, _ in words]
        i = 0
        while i < len(words):
            j = i
            while j < len(words) and is_ffma[j]:
                j += 1
            if j - i >= min_run:
                for t in range(i, j):
                    lo, hi = words[t]
                    if mode == "yield-all":
                        new = hi & ~(0xF << 58) & ~(1 << 45)
                    elif mode == "reuse-none":
                        new = hi & ~(0xF << 58)
                    else:
                        new = hi | (1 << 45)
                    if new != hi:
                        struct.pack_into("<QQ", elf, off + 16 * t, lo, new)
                        changed += 1
            i = max(j, i + 1)
    return bytes(elf), changed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cache")
    parser.add_argument("--mode", choices=["yield-all", "yield-none", "reuse-none"], required=True)
    parser.add_argument("--match", default="fp8_gemm", help="regex on the spec line of kernel.cu")
    parser.add_argument("--min-run", type=int, default=16)
    args = parser.parse_args()
    for folder, _, files in os.walk(args.cache):
        if "kernel.cu" not in files or "kernel.cubin" not in files:
            continue
        with open(os.path.join(folder, "kernel.cu")) as f:
            spec = f.readline().strip()
        if not re.search(args.match, spec):
            continue
        path = os.path.join(folder, "kernel.cubin")
        with open(path, "rb") as f:
            framed = f.read()
        assert framed[:8] == b"TSRCUB01", path
        elf, changed = patch_elf(framed[24:], args.mode, args.min_run)
        with open(path, "wb") as f:
            f.write(b"TSRCUB01" + struct.pack("<QQ", len(elf), checksum(elf)) + elf)
        print(f"{changed:5d} FFMA hints changed  {spec}")


if __name__ == "__main__":
    main()
