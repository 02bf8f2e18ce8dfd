import torch, os
from tessera.utils import math as m
import tessera.testing as t
a = torch.rand(100000) * 100
print('scalar-div ulp mismatches cpu vs cuda:', int((a / 448 != (a.cuda() / 448).cpu()).sum()))
x = torch.randn(300, 1000, device='cuda', dtype=torch.bfloat16)
names = ['tok_ue8m0', 'tok_g32', 'block', 'fp4_ue8m0', 'fp4_packed', 'custom', 'channel_ue8m0']
fs = (lambda x: m.per_token_cast_to_fp8(x, True), lambda x: m.per_token_cast_to_fp8(x, False, gran_k=32),
      lambda x: m.per_block_cast_to_fp8(x, False), lambda x: m.per_token_cast_to_fp4(x, True),
      lambda x: m.per_token_cast_to_fp4(x[:, :512], True, use_packed_ue8m0=True),
      lambda x: m.per_custom_dims_cast_to_fp8(x, (0,), False), lambda x: m.per_channel_cast_to_fp8(x[:256], True))
for n, f in zip(names, fs):
    g, c = f(x), f(x.cpu())
    try:
        for a_, b_ in zip(g, c): t.assert_bitwise_equal(a_.cpu(), b_, n)
        print(n, 'bitwise equal cpu/cuda')
    except AssertionError as e:
        print(n, 'DIFF', str(e)[:120], '| sf max rel diff', float(((g[1].cpu()-c[1]).abs()/c[1]).max()))
p, s = m.per_token_cast_to_fp4(x, True)
print('fp4 diff', float(t.calc_diff(m.cast_back_from_fp4(p, s), x)))
xf, sf = m.per_token_cast_to_fp8(x, False)
print('fp8 diff', float(t.calc_diff(xf.float() * sf.repeat_interleave(128, 1)[:, :1000], x)))
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16)
print('bench', t.bench(lambda: a @ a), t.bench(lambda: a @ a, high_precision=True))
calls = []
r = t.bench_kineto(lambda: a @ a, ('nvjet', 'gemm'), num_tests=5, barrier=lambda: calls.append(1),
                   trace_path='/tmp/trace.json', suppress_kineto_output=True)
print('kineto', r, 'barrier calls', len(calls), 'trace', os.path.getsize('/tmp/trace.json'))
print('TFLOPS', 2 * 8192**3 / r[0] / 1e12)
