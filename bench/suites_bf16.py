"""The BF16 suite: DeepGEMM's dense BF16 test shapes (tests/test_bf16.py): forward at M = 1, 128, 4096 with BF16 D,
the FP32-output rows at the same M, and the backward layouts at M = 4096 (dgrad with B MN-major, wgrad with both
MN-major into FP32 with C = D). tessera, DeepGEMM's function of the same layout, and cuBLAS (torch.matmul) on the same tensors.
The cuBLASLt suite: cublaslt_gemm_nt of both libraries beside torch.matmul on DeepGEMM's cuBLASLt test shapes.

Also the helpers the suites of the other families share (suites_bf16_grouped, suites_einsum, suites_indexer): tessera's
function looked up by name, the pair of calls, and the HBM copy baseline."""
from rows import OURS, PEER, Row, Suite

try:
    import torch
except ImportError:
    torch = None

NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
FP32_NK = [(256, 7168), (129280, 7168)]
DEVICE = "cuda"  # where randn and hbm_copy place their tensors (the CPU tests dry-run the suites on "cpu")


def randn(*shape):
    return torch.randn(*shape, device=DEVICE, dtype=torch.bfloat16)


def missing(error):
    """A call that raises `error` (an AttributeError): measure() then reports the library 'unavailable'."""
    def call(*args, **kwargs):
        raise error
    return call


def tessera_fn(ctx, name):
    """tessera's public function `name`. Looked up when the row is built; a name that is not there becomes a call
    raising AttributeError, so that only that row's tessera column says so."""
    return getattr(ctx.tessera, name, None) or missing(AttributeError(f"tessera.{name}: not available"))


def paired_calls(ctx, name, call):
    """{library: zero-argument call}: `call(fn)` with tessera's function `name` and, when live, DeepGEMM's
    function of the same name (a peer build without it reports 'unavailable')."""
    ours_fn = tessera_fn(ctx, name)
    calls = {OURS: lambda: call(ours_fn)}
    if ctx.peer is not None:
        peer_fn = peer_public(ctx, name)
        calls[PEER] = lambda: call(peer_fn)
    return calls


def peer_public(ctx, name):
    """DeepGEMM's function `name`, or a call raising AttributeError when this build lacks it."""
    return getattr(ctx.peer, name, None) or missing(AttributeError(f"deep_gemm.{name}: not in this build"))


def hbm_copy(nbytes):
    """A baseline that moves `nbytes` through HBM as a device-to-device copy of nbytes / 2 (read once, written once):
    ours / hbm_copy is then the inverse of the fraction of copy bandwidth the row reaches (report.py prints both)."""
    half = max(nbytes // 2, 1)
    src = torch.empty(half, device=DEVICE, dtype=torch.uint8)
    dst = torch.empty_like(src)
    return lambda: dst.copy_(src)


def ours(ctx, layout):
    return getattr(ctx.tessera, f"bf16_gemm_{layout}")


def row(ctx, label, shape, layout, a_arg, b_arg, d, c, bucket, anchor):
    m, n, k = shape["m"], shape["n"], shape["k"]
    calls = {OURS: lambda: ours(ctx, layout)(a_arg, b_arg, d, c=c)}
    if ctx.peer is not None:
        calls[PEER] = lambda: getattr(ctx.peer, f"bf16_gemm_{layout}")(a_arg, b_arg, d, c=c)
    out_bytes = d.element_size()
    return Row(label, shape, flops=2 * m * n * k,
               nbytes=2 * (m * k + n * k) + out_bytes * m * n * (2 if c is not None else 1),
               calls=calls, baselines={"cublas": anchor}, bucket=bucket)


def bf16_dense(ctx):
    pairs = NK[::3] if ctx.quick else NK
    for m in (1, 128, 4096):
        for n, k in pairs:
            a, b = randn(m, k), randn(n, k)
            d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            yield row(ctx, f"nt {m}x{n}x{k}", dict(layout="nt", m=m, n=n, k=k), "nt", a, b, d, None, f"M={m}",
                      lambda: torch.matmul(a, b.t()))
    for m in (1, 128, 4096):
        for n, k in FP32_NK[:1] if ctx.quick else FP32_NK:
            a, b = randn(m, k), randn(n, k)
            d = torch.empty(m, n, device="cuda", dtype=torch.float32)
            yield row(ctx, f"nt fp32 {m}x{n}x{k}", dict(layout="nt", m=m, n=n, k=k, out="fp32"), "nt", a, b, d, None,
                      "FP32 out", lambda: torch.matmul(a, b.t()))
    for n, k in pairs:
        # dgrad: dX [4096, K] = dY [4096, N] · W [N, K], W being B given K-rows first: DeepGEMM's nn layout.
        dy, w = randn(4096, n), randn(n, k)
        d = torch.empty(4096, k, device="cuda", dtype=torch.bfloat16)
        yield row(ctx, f"nn dgrad 4096x{k}x{n}", dict(layout="nn", m=4096, n=k, k=n), "nn", dy, w, d, None, "dgrad",
                  lambda: torch.matmul(dy, w))
        # wgrad: dW [N, K] += dYᵀ [N, 4096] · X [4096, K], both given K-rows first: DeepGEMM's tn layout, FP32 C = D.
        x = randn(4096, k)
        dw = torch.zeros(n, k, device="cuda", dtype=torch.float32)
        yield row(ctx, f"tn wgrad {n}x{k}x4096", dict(layout="tn", m=n, n=k, k=4096, out="fp32"), "tn", dy, x, dw, dw,
                  "wgrad", lambda: torch.matmul(dy.t(), x))


def cublaslt_cases(quick):
    """DeepGEMM's cuBLASLt test shapes with BF16 D (its dense BF16 enumeration through cublaslt_gemm_nt)."""
    pairs = NK[::3] if quick else NK
    return [(m, n, k) for m in (1, 128, 4096) for n, k in pairs]


def cublaslt_rows(ctx):
    """cublaslt_gemm_nt of both libraries against torch's own cuBLAS call (torch.matmul) on the same tensors: the
    wrapper's cost over the library it wraps."""
    for m, n, k in cublaslt_cases(ctx.quick):
        a, b = randn(m, k), randn(n, k)
        d = torch.empty(m, n, device=DEVICE, dtype=torch.bfloat16)
        yield Row(f"cublaslt nt {m}x{n}x{k}", dict(m=m, n=n, k=k), flops=2 * m * n * k,
                  nbytes=2 * (m * k + n * k + m * n),
                  calls=paired_calls(ctx, "cublaslt_gemm_nt", lambda fn: fn(a, b, d)),
                  baselines={"cublas": lambda: torch.matmul(a, b.t())}, bucket=f"M={m}")


SUITES = [Suite("bf16-dense", bf16_dense), Suite("cublaslt", cublaslt_rows)]
