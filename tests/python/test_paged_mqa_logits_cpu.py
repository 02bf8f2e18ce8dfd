"""tessera.paged_mqa_logits' argument checks, which run before any kernel is reached (CPU tensors suffice): the
SM100-only forms (indices, FP4 queries, block_kv 32, next_n > 2), 1-D context lengths, shapes, dtypes and strides of
every tensor, each refused with a RuntimeError naming the argument; well-formed CPU tensors get as far as the device
check. Also the logits buffer's row stride."""
import pytest

torch = pytest.importorskip("torch")
import tessera  # noqa: E402
from tessera import paged_mqa_logits as p  # noqa: E402

B, NEXT_N, H, D = 3, 2, 32, 128


def inputs(batch=B, next_n=NEXT_N, heads=H, dim=D, blocks=8, max_blocks=4):
    q = torch.zeros(batch, next_n, heads, dim, dtype=torch.float8_e4m3fn)
    kv = torch.zeros(blocks, 64 * (dim + 4), dtype=torch.uint8).view(blocks, 64, 1, dim + 4)
    weights = torch.zeros(batch * next_n, heads)
    context_lens = torch.full((batch, next_n), 100, dtype=torch.int32)
    block_table = torch.zeros(batch, max_blocks, dtype=torch.int32)
    schedule = torch.zeros(133, 2, dtype=torch.int32)
    return dict(q=(q, None), kv_cache=kv, weights=weights, context_lens=context_lens, block_table=block_table,
                schedule_meta=schedule, max_context_len=max_blocks * 64)


def call(**overrides):
    kwargs = inputs()
    kwargs.update(overrides)
    return p.fp8_fp4_paged_mqa_logits(**kwargs)


def test_well_formed_host_tensors_reach_the_device_check():
    with pytest.raises(tessera.InvalidArgument, match="fp8_paged_mqa_logits: argument 'q': expected a CUDA tensor"):
        call()
    with pytest.raises(tessera.InvalidArgument, match="argument 'context_lens': expected a CUDA tensor"):
        p.get_paged_mqa_logits_metadata(torch.zeros(4, 2, dtype=torch.int32), 64, 132)
    k = inputs()
    k["q"] = k["q"][0]
    with pytest.raises(tessera.InvalidArgument, match="expected a CUDA tensor"):
        p.fp8_paged_mqa_logits(**k)


def test_sm100_only_forms_raise_runtime_errors():
    ctx = torch.zeros(4, 2, dtype=torch.int32)
    cases = [
        (lambda: p.get_paged_mqa_logits_metadata(ctx, 64, 132, indices=ctx), "'indices'"),
        (lambda: p.get_paged_mqa_logits_metadata(ctx, 32, 132), "block_kv': 32 is SM100-only"),
        (lambda: call(indices=torch.zeros(3, dtype=torch.int32)), "'indices'"),
        (lambda: call(q=(inputs()["q"][0], torch.ones(B, NEXT_N, H))), "FP4 queries"),
        (lambda: call(q=(torch.zeros(B, 3, H, D, dtype=torch.float8_e4m3fn), None),
                      weights=torch.zeros(3 * B, H)), "next_n = 3 needs SM100"),
        (lambda: call(q=(torch.zeros(B, NEXT_N, 16, D, dtype=torch.float8_e4m3fn), None)), "16 heads"),
        (lambda: call(q=(torch.zeros(B, NEXT_N, H, 64, dtype=torch.float8_e4m3fn), None)), "head dim 64"),
        (lambda: call(kv_cache=torch.zeros(8, 32, 1, D + 4, dtype=torch.uint8)), "block_kv 32 is SM100-only"),
    ]
    for fn, message in cases:
        with pytest.raises(RuntimeError, match=message):
            fn()


def test_one_dimensional_context_lens_are_refused():
    with pytest.raises(tessera.InvalidArgument, match=r"context_lens.dim\(\) == 2"):
        p.get_paged_mqa_logits_metadata(torch.zeros(4, dtype=torch.int32), 64, 132)
    with pytest.raises(tessera.InvalidArgument, match=r"context_lens.dim\(\) == 2"):
        call(context_lens=torch.zeros(B, dtype=torch.int32))


def test_metadata_arguments():
    ctx = torch.zeros(4, 2, dtype=torch.int32)
    with pytest.raises(tessera.InvalidArgument, match="'block_kv': expected 64, got 16"):
        p.get_paged_mqa_logits_metadata(ctx, 16, 132)
    with pytest.raises(tessera.InvalidArgument, match="'num_sms': expected >= 1, got 0"):
        p.get_paged_mqa_logits_metadata(ctx, 64, 0)
    with pytest.raises(tessera.TypeMismatch, match="'context_lens': expected dtype int32, got int64"):
        p.get_paged_mqa_logits_metadata(ctx.long(), 64, 132)
    with pytest.raises(tessera.InvalidArgument, match="'context_lens': expected a contiguous tensor"):
        p.get_paged_mqa_logits_metadata(torch.zeros(2, 4, dtype=torch.int32).T, 64, 132)
    with pytest.raises(tessera.TypeMismatch, match="'context_lens': expected a torch.Tensor"):
        p.get_paged_mqa_logits_metadata([[1, 2]], 64, 132)


def test_dtypes_are_named():
    k = inputs()
    with pytest.raises(tessera.TypeMismatch, match="'q': expected dtype float8_e4m3fn, got bfloat16"):
        call(q=(k["q"][0].to(torch.bfloat16), None))
    with pytest.raises(tessera.TypeMismatch, match="'kv_cache': expected dtype uint8, got int8"):
        call(kv_cache=k["kv_cache"].view(torch.int8))
    with pytest.raises(tessera.TypeMismatch, match="'weights': expected dtype float32, got bfloat16"):
        call(weights=k["weights"].to(torch.bfloat16))
    with pytest.raises(tessera.TypeMismatch, match="'block_table': expected dtype int32, got int64"):
        call(block_table=k["block_table"].long())
    with pytest.raises(tessera.TypeMismatch, match="'schedule_meta': expected dtype int32"):
        call(schedule_meta=k["schedule_meta"].float())
    with pytest.raises(tessera.TypeMismatch, match="'logits_dtype': expected torch.float32 or torch.bfloat16"):
        call(logits_dtype=torch.float16)
    with pytest.raises(tessera.TypeMismatch, match="'q': expected a pair"):
        call(q=k["q"][0])


def test_shapes_and_strides_are_named():
    k = inputs()
    with pytest.raises(tessera.InvalidArgument, match=r"'q': expected 4 dimensions"):
        call(q=(k["q"][0][0], None))
    with pytest.raises(tessera.InvalidArgument, match=r"'kv_cache': expected shape \[num_blocks, 64, 1, 132\]"):
        call(kv_cache=torch.zeros(8, 64, 1, 136, dtype=torch.uint8))
    # A block stride that is not a multiple of 16 bytes cannot be a TMA stride.
    padded = torch.zeros(8, 64 * 132 + 4, dtype=torch.uint8)[:, :64 * 132].view(8, 64, 1, 132)
    with pytest.raises(tessera.InvalidArgument, match="block stride .* multiple of 16 .* got 8452"):
        call(kv_cache=padded)
    with pytest.raises(tessera.InvalidArgument, match=r"'weights': expected shape \[6, 32\]"):
        call(weights=torch.zeros(B, H))
    with pytest.raises(tessera.InvalidArgument, match=r"'context_lens': expected shape \[3, 2\]"):
        call(context_lens=torch.zeros(B, 1, dtype=torch.int32))
    with pytest.raises(tessera.InvalidArgument, match=r"'block_table': expected 3 rows"):
        call(block_table=torch.zeros(B + 1, 4, dtype=torch.int32))
    with pytest.raises(tessera.InvalidArgument, match=r"'block_table': expected stride\(1\) == 1"):
        call(block_table=torch.zeros(4, B, dtype=torch.int32).T)
    with pytest.raises(tessera.InvalidArgument, match=r"'schedule_meta': expected shape \[num_sms \+ 1, 2\]"):
        call(schedule_meta=torch.zeros(133, 3, dtype=torch.int32))
    with pytest.raises(tessera.InvalidArgument, match="'max_context_len': expected >= 0"):
        call(max_context_len=-1)
    with pytest.raises(tessera.InvalidArgument, match="'weights': expected a contiguous tensor"):
        call(weights=torch.zeros(H, B * NEXT_N).T)


def test_padded_block_stride_passes_the_checks():
    padded = torch.zeros(8, 64 * 132 + 48, dtype=torch.uint8)[:, :64 * 132].view(8, 64, 1, 132)
    with pytest.raises(tessera.InvalidArgument, match="'q': expected a CUDA tensor"):
        call(kv_cache=padded)


def test_logits_row_stride_is_deepgemms():
    stride = tessera._C.paged_mqa_logits_row_stride
    for mcl in (0, 1, 64, 1000, 8192, 10649, 85184):
        aligned = (mcl + 255) // 256 * 256
        assert stride(mcl, False) == (aligned + 255) // 256 * 256
        assert stride(mcl, True) == (aligned + 511) // 512 * 512
