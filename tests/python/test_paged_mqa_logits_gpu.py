"""Paged MQA logits on the GPU, against a float64 reference computed from the dequantized FP8 inputs.

DeepGEMM's 24 SM90 cases (B x avg context in {256 x 8192, 256 x 65536, 4096 x 8192}, next_n 1 and 2, 32 and 64 heads,
FP32 and BF16 logits) with its 2-D context lengths and 20-call bitwise determinism; clean_logits (exact -inf past each
context); edge contexts (0, 1, 63, 64, 65, not multiples of 64, next_n columns in any order, max_context_len past the
last page); NaN-poisoned outputs (what is written, and nothing else); garbage in unused cache blocks, in the token
slots past a context and in block-table entries past a context; padded block strides; schedule reuse across calls
and SM counts; CUDA-graph capture; kernel names; bad inputs.

Per logit the tolerance is 2^-10 of sum_h |w| sf sum_d |q kv| (FP8 wgmma accumulates with ~14 mantissa bits), plus
BF16 rounding for BF16 logits; calc_diff must also stay under DeepGEMM's bounds (5e-6 FP32, 3e-5 BF16).
Timings and copy bandwidth are bench/run.py's (--suite indexer), not a test's.
"""

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]

import tessera  # noqa: E402
from tessera import _C  # noqa: E402
from tessera import paged_mqa_logits as p  # noqa: E402
from tessera.testing import bench_kineto, calc_diff  # noqa: E402

D = 128
PAGE_BYTES = 64 * (D + 4)


class Case:
    """Inputs as DeepGEMM's test builds them: a shuffled pool of cache blocks, one run of blocks per sequence."""

    def __init__(self, ctx2d, heads, pad=0, spare_blocks=0, max_context_len=None, garbage=False, seed=0):
        torch.manual_seed(seed)
        self.ctx2d = ctx2d.to(torch.int32).cuda().contiguous()
        self.batch, self.next_n = self.ctx2d.shape
        self.heads = heads
        longest = self.ctx2d.clamp(min=0).amax(1).cpu()
        self.pages = (longest + 63) // 64
        max_blocks = max(int(self.pages.max()), 1) if self.batch else 1
        self.max_context_len = max_context_len if max_context_len is not None else max_blocks * 64
        used = int(self.pages.sum())
        num_blocks = max(used + spare_blocks, 1)
        self.raw = torch.empty(num_blocks, PAGE_BYTES + pad, dtype=torch.uint8, device="cuda")
        for lo in range(0, num_blocks, 1 << 16):  # chunks keep the float32 temporaries small
            hi = min(lo + (1 << 16), num_blocks)
            x = torch.randn(hi - lo, 64, D, device="cuda")
            sf = x.abs().amax(-1).clamp(min=1e-4) / 448.0
            self.raw[lo:hi, :64 * D] = (x / sf[..., None]).to(torch.float8_e4m3fn).view(torch.uint8).view(hi - lo, -1)
            self.raw[lo:hi, 64 * D:PAGE_BYTES] = sf.view(torch.uint8).view(hi - lo, -1)
        self.raw[:, PAGE_BYTES:] = 0xAB
        perm = torch.randperm(num_blocks, device="cuda", dtype=torch.int32)
        if garbage:  # NaN bytes (E4M3 0xff, FP32 0xffffffff) in every block no sequence uses
            self.raw[perm[used:].long()] = 0xFF
        pos = torch.arange(max_blocks, device="cuda")[None, :]
        pages = self.pages.cuda()
        start = torch.cumsum(pages, 0) - pages
        idx = (start[:, None] + pos).clamp(max=num_blocks - 1)
        filler = torch.where(pos % 2 == 0, -1, 2 ** 31 - 1) if garbage else torch.zeros_like(pos)
        self.block_table = torch.where(pos < pages[:, None], perm[idx], filler).to(torch.int32).contiguous()
        if garbage:  # NaN in the token slots past each sequence's context, inside its last page
            for b in range(self.batch):
                n, tail = int(self.pages[b]), int(longest[b]) % 64
                if n and tail:
                    blk = int(self.block_table[b, n - 1])
                    self.raw[blk, tail * D:64 * D] = 0xFF
                    self.raw[blk, 64 * D + 4 * tail:PAGE_BYTES] = 0xFF
        self.cache = self.raw[:, :PAGE_BYTES].view(num_blocks, 64, 1, D + 4)
        self.q = torch.randn(self.batch, self.next_n, heads, D, device="cuda").to(torch.float8_e4m3fn)
        self.weights = torch.randn(self.batch * self.next_n, heads, device="cuda")

    def schedule(self, num_sms=None):
        return p.get_paged_mqa_logits_metadata(self.ctx2d, 64, num_sms or tessera.get_num_sms())

    def run(self, schedule=None, clean=False, dtype=torch.float32):
        return p.fp8_fp4_paged_mqa_logits((self.q, None), self.cache, self.weights, self.ctx2d, self.block_table,
                                           self.schedule() if schedule is None else schedule, self.max_context_len,
                                           clean_logits=clean, logits_dtype=dtype)

    def reference(self):
        """(logits, magnitude, valid) in float64; logits are -inf and magnitudes 0 outside each context."""
        rows, mcl, n = self.batch * self.next_n, self.max_context_len, self.next_n
        ref = torch.full((rows, mcl), float("-inf"), dtype=torch.float64, device="cuda")
        mag = torch.zeros(rows, mcl, dtype=torch.float64, device="cuda")
        ctx = self.ctx2d.cpu()
        for b in range(self.batch):
            pages = int(self.pages[b])
            if pages == 0:
                continue
            data = self.raw[self.block_table[b, :pages].long()]
            kv = data[:, :64 * D].contiguous().view(torch.float8_e4m3fn).reshape(-1, D).double()
            sf = data[:, 64 * D:PAGE_BYTES].contiguous().view(torch.float32).reshape(-1).double()
            q = self.q[b].reshape(n * self.heads, D).double()
            w = self.weights[b * n:(b + 1) * n].double()[:, :, None]
            s = (q @ kv.T) * sf
            val = (s.relu().view(n, self.heads, -1) * w).sum(1)
            size = (((q.abs() @ kv.abs().T) * sf.abs()).view(n, self.heads, -1) * w.abs()).sum(1)
            for t in range(n):
                c = min(max(int(ctx[b, t]), 0), mcl)
                ref[b * n + t, :c] = val[t, :c]
                mag[b * n + t, :c] = size[t, :c]
        cols = torch.arange(mcl, device="cuda")[None, :]
        valid = cols < self.ctx2d.reshape(-1, 1)
        return ref, mag, valid


def check(out, reference, clean, dtype):
    ref, mag, valid = reference
    assert out.dtype == dtype and tuple(out.shape) == tuple(ref.shape)
    o = out.double()
    ov, rv = o[valid], ref[valid]
    assert torch.isfinite(ov).all(), f"{int((~torch.isfinite(ov)).sum())} valid logits not finite"
    tol = 2.0 ** -10 * mag[valid] + (2.0 ** -8 * rv.abs() if dtype == torch.bfloat16 else 0) + 1e-30
    err = (ov - rv).abs()
    bad = err > tol
    assert not bad.any(), f"{int(bad.sum())} of {ov.numel()} logits off, worst error/tolerance " \
                          f"{float((err / tol).max()):.3g}"
    diff = calc_diff(o.masked_fill(~valid, 0), ref.masked_fill(~valid, 0))
    assert diff < (3e-5 if dtype == torch.bfloat16 else 5e-6), f"calc_diff {float(diff)}"
    if clean:
        assert (o[~valid] == float("-inf")).all(), "columns past a context are not exactly -inf"


def deepgemm_ctx(batch, next_n, avg):
    """DeepGEMM's 2-D context lengths: the last column U(0.7, 1.3) x avg, the earlier ones a random part of it."""
    ctx = torch.randint(int(0.7 * avg), int(1.3 * avg), (batch,), device="cuda", dtype=torch.int32)
    ctx2d = ((ctx[:, None] + 1) * torch.rand(batch, next_n, device="cuda")).int()
    ctx2d[:, -1] = ctx
    return ctx2d


DEEPGEMM_CASES = [(dtype, b, avg, n, h) for dtype in (torch.bfloat16, torch.float32)
                  for b, avg in ((256, 8192), (256, 65536), (4096, 8192)) for n in (1, 2) for h in (32, 64)]


def _case_id(c):
    return f"{'bf16' if c[0] == torch.bfloat16 else 'fp32'}-B{c[1]}-L{c[2]}-n{c[3]}-H{c[4]}"


@pytest.mark.parametrize("dtype,batch,avg,next_n,heads", DEEPGEMM_CASES, ids=[_case_id(c) for c in DEEPGEMM_CASES])
def test_deepgemm_cases(dtype, batch, avg, next_n, heads):
    case = Case(deepgemm_ctx(batch, next_n, avg), heads, seed=batch + avg + next_n + heads)
    schedule = case.schedule()
    out = case.run(schedule, dtype=dtype)
    reference = case.reference()
    check(out, reference, False, dtype)
    valid = reference[2]
    bits = torch.int16 if dtype == torch.bfloat16 else torch.int32
    first = out.masked_fill(~valid, 0).view(bits)
    for _ in range(20):
        again = case.run(schedule, dtype=dtype).masked_fill(~valid, 0).view(bits)
        assert torch.equal(again, first), "not bitwise repeatable"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("next_n,heads", [(1, 32), (1, 64), (2, 32), (2, 64)])
def test_clean_logits_are_exactly_minus_inf_past_each_context(dtype, next_n, heads):
    case = Case(deepgemm_ctx(37, next_n, 3000), heads, seed=next_n * heads)
    reference = case.reference()
    schedule = case.schedule()
    out = case.run(schedule, clean=True, dtype=dtype)
    check(out, reference, True, dtype)
    for _ in range(20):
        assert torch.equal(case.run(schedule, clean=True, dtype=dtype).view(torch.uint8), out.view(torch.uint8))


EDGE_CTX = [[0, 0], [0, 1], [1, 63], [64, 65], [65, 64], [127, 128], [0, 300], [4095, 4097], [5000, 5000], [13, 2],
            [2048, 0], [191, 192]]


@pytest.mark.parametrize("clean", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("next_n", [1, 2])
def test_edge_contexts_with_poisoned_output(clean, dtype, next_n):
    ctx2d = torch.tensor(EDGE_CTX, dtype=torch.int32)[:, -next_n:]
    extra = 37  # max_context_len past the last page and not a multiple of 64 or 4
    case = Case(ctx2d, 64, max_context_len=int(ctx2d.max() + 63) // 64 * 64 + extra, seed=3)
    reference = case.reference()
    # The private entry with a NaN-filled buffer: every column the call must write is checked, and nothing else
    # (columns past a context without clean_logits, the buffer's padding) may be written.
    mcl = case.max_context_len
    buffer = torch.full((case.batch * next_n, _C.paged_mqa_logits_row_stride(mcl, dtype == torch.bfloat16)),
                        float("nan"), dtype=dtype, device="cuda")
    out = buffer[:, :mcl]
    _C.paged_mqa_logits(case.q, case.cache, case.weights, case.ctx2d, case.block_table, case.schedule(), mcl, clean,
                        out)
    check(out, reference, clean, dtype)
    assert torch.isnan(buffer[:, mcl:]).all(), "the buffer's padding was written"
    if not clean:
        assert torch.isnan(out[~reference[2]]).all(), "columns past a context were written without clean_logits"
    # The public signature on the same inputs.
    check(case.run(clean=clean, dtype=dtype), reference, clean, dtype)


def test_many_sms_per_sequence_and_sequences_per_sm():
    # 3 short sequences over all SMs (most SMs get one page or none), then 3000 short ones (many per SM).
    for ctx in (torch.tensor([[70], [0], [130]]), torch.randint(0, 400, (3000, 2))):
        case = Case(ctx, 32, seed=int(ctx.sum()))
        for clean in (False, True):
            check(case.run(clean=clean), case.reference(), clean, torch.float32)


@pytest.mark.parametrize("clean", [False, True])
def test_garbage_outside_the_contexts_is_never_read(clean):
    ctx = torch.tensor([[100, 1000], [63, 64], [0, 5], [777, 776], [2500, 2600]], dtype=torch.int32)
    case = Case(ctx, 64, spare_blocks=40, garbage=True, seed=9)
    check(case.run(clean=clean), case.reference(), clean, torch.float32)


def test_padded_block_stride():
    case = Case(deepgemm_ctx(64, 2, 2000), 32, pad=48, seed=5)
    assert case.cache.stride(0) == PAGE_BYTES + 48
    check(case.run(dtype=torch.bfloat16), case.reference(), False, torch.bfloat16)


def test_schedule_is_reused_across_layers_and_lengths():
    case = Case(deepgemm_ctx(96, 2, 4000), 64, seed=21)
    schedule = case.schedule()
    before = schedule.clone()
    for layer in range(2):  # new queries, weights and cache values per layer, one schedule
        check(case.run(schedule), case.reference(), False, torch.float32)
        case.q = torch.randn_like(case.q, dtype=torch.float32).to(torch.float8_e4m3fn)
        case.weights = torch.randn_like(case.weights)
        case.raw[:, :64 * D] = torch.randint_like(case.raw[:, :64 * D], 0, 0x7e)
    assert torch.equal(schedule, before), "the logits call changed the schedule"
    # A schedule made for other lengths is still exact (only its balance differs).
    other = Case(deepgemm_ctx(96, 2, 1000), 64, seed=22).schedule()
    check(case.run(other, clean=True), case.reference(), True, torch.float32)


def test_schedule_format_and_sm_count():
    case = Case(deepgemm_ctx(300, 1, 5000), 32, seed=2)
    num_sms = tessera.get_num_sms()
    schedule = case.schedule()
    assert schedule.dtype == torch.int32 and tuple(schedule.shape) == (num_sms + 1, 2)
    assert schedule.device == case.ctx2d.device
    assert schedule[-1].tolist() == [case.batch, 0]
    starts = [tuple(r) for r in schedule.tolist()]
    assert starts == sorted(starts), "ranges out of order"
    try:
        tessera.set_num_sms(num_sms // 2)
        with pytest.raises(tessera.InvalidArgument, match="schedule_meta': expected .* rows"):
            case.run(schedule)
        check(case.run(case.schedule(num_sms // 2)), case.reference(), False, torch.float32)
    finally:
        tessera.set_num_sms(0)


def test_cuda_graph_capture_and_replay():
    case = Case(deepgemm_ctx(128, 2, 3000), 64, seed=13)
    ctx_in = case.ctx2d.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # first calls outside the capture: compile and load the kernels
        case.run(p.get_paged_mqa_logits_metadata(ctx_in, 64, tessera.get_num_sms()), clean=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        schedule = p.get_paged_mqa_logits_metadata(ctx_in, 64, tessera.get_num_sms())
        out = p.fp8_fp4_paged_mqa_logits((case.q, None), case.cache, case.weights, ctx_in, case.block_table,
                                          schedule, case.max_context_len, clean_logits=True)
    # New lengths (shorter: the block table still covers them) and queries, written into the captured inputs.
    case.ctx2d = (case.ctx2d.double() * torch.rand(case.ctx2d.shape, device="cuda", dtype=torch.float64)).int()
    ctx_in.copy_(case.ctx2d)
    case.q.copy_(torch.randn(case.q.shape, device="cuda").to(torch.float8_e4m3fn))
    graph.replay()
    torch.cuda.synchronize()
    check(out, case.reference(), True, torch.float32)


def test_kernel_names_match_deepgemms_substring():
    case = Case(deepgemm_ctx(64, 1, 2000), 32, seed=4)
    schedule = case.schedule()
    case.run(schedule)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        case.run(schedule)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert len([n for n in names if "paged_mqa_logits" in n]) == 1, names
    assert not any("clean_logits" in n for n in names), names
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        case.schedule()
        torch.cuda.synchronize()
    assert any("paged_mqa_logits_metadata" in e.name for e in prof.events()), "metadata kernel name"


def test_legacy_entry_returns_fp32():
    case = Case(deepgemm_ctx(16, 2, 700), 32, seed=6)
    out = p.fp8_paged_mqa_logits(case.q, case.cache, case.weights, case.ctx2d, case.block_table, case.schedule(),
                                  case.max_context_len)
    check(out, case.reference(), False, torch.float32)


def test_bad_inputs_raise_on_the_gpu():
    case = Case(deepgemm_ctx(8, 2, 500), 32, seed=8)
    schedule = case.schedule()
    with pytest.raises(tessera.InvalidArgument, match="schedule_meta': expected"):
        case.run(schedule[:-1].contiguous())
    with pytest.raises(tessera.InvalidArgument, match=r"context_lens.dim\(\) == 2"):
        p.get_paged_mqa_logits_metadata(case.ctx2d[:, -1].contiguous(), 64, tessera.get_num_sms())
    with pytest.raises(NotImplementedError, match="block_kv"):
        p.get_paged_mqa_logits_metadata(case.ctx2d, 32, tessera.get_num_sms())
    with pytest.raises(tessera.InvalidArgument, match="'kv_cache': expected the device"):
        p.fp8_fp4_paged_mqa_logits((case.q, None), case.cache.cpu(), case.weights, case.ctx2d, case.block_table,
                                    schedule, case.max_context_len)
    odd = torch.zeros(4, PAGE_BYTES + 4, dtype=torch.uint8, device="cuda")[:, :PAGE_BYTES].view(4, 64, 1, D + 4)
    with pytest.raises(tessera.InvalidArgument, match="multiple of 16"):
        p.fp8_fp4_paged_mqa_logits((case.q, None), odd, case.weights, case.ctx2d, case.block_table, schedule,
                                    case.max_context_len)


def test_empty_batch_and_width():
    ctx = torch.zeros(0, 2, dtype=torch.int32, device="cuda")
    schedule = p.get_paged_mqa_logits_metadata(ctx, 64, tessera.get_num_sms())
    assert (schedule == 0).all()
    case = Case(torch.tensor([[10, 20]]), 32, max_context_len=0)
    assert case.run(clean=True).shape == (2, 0)
