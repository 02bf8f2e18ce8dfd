"""Does torch's DLPack exchange table (`torch.Tensor.__dlpack_c_exchange_api__`) survive unusual tensors? Calls its
dltensor_from_py_object_no_sync through ctypes on each case in a child process (a crash shows as a signal) and
prints what it returned. The binding guards the table with an is_cuda read per tensor (python/src/bindings.cpp)
because a crash on meta tensors was once reported; this tells whether the installed torch needs that guard.

    python3 dev/exchange_probe.py            (one line per case: rc, device type, data pointer or error)"""
import ctypes
import subprocess
import sys

CASES = {
    "cuda": "torch.randn(4, 4, device='cuda')",
    "cpu": "torch.randn(4, 4)",
    "meta": "torch.empty(4, 4, device='meta')",
    "meta_view": "torch.empty(8, 8, device='meta')[2:, 3:]",
    "meta_empty": "torch.empty(0, 5, device='meta')",
    "meta_fp8": "torch.empty(4, 4, device='meta', dtype=torch.float8_e4m3fn)",
    "cuda_sparse_coo": "torch.randn(4, 4, device='cuda').to_sparse()",
    "cuda_sparse_csr": "torch.randn(4, 4, device='cuda').to_sparse_csr()",
    "cpu_sparse_coo": "torch.randn(4, 4).to_sparse()",
    "cuda_nested": "torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(3, 3)], device='cuda')",
    "cpu_quantized": "torch.quantize_per_tensor(torch.randn(4, 4), 0.1, 0, torch.qint8)",
    "cpu_mkldnn": "torch.randn(4, 4).to_mkldnn()",
    "cuda_neg_bit": "torch.randn(4, 4, dtype=torch.complex64, device='cuda').conj().imag",
    "cuda_conj": "torch.randn(4, 4, dtype=torch.complex64, device='cuda').conj()",
    "cuda_empty": "torch.empty(0, 7, device='cuda')",
    "cuda_0d": "torch.tensor(1.0, device='cuda')",
    "cuda_expand": "torch.randn(1, 5, device='cuda').expand(4, 5)",
    "cuda_grad": "torch.randn(3, 3, device='cuda', requires_grad=True)",
    "cuda_fp8": "torch.randn(4, 4, device='cuda').to(torch.float8_e4m3fn)",
    "functional": "torch._to_functional_tensor(torch.randn(3, 3, device='cuda'))",
    "inference": "(lambda: (torch.inference_mode().__enter__(), torch.randn(3, device='cuda'))[1])()",
}

CHILD = r"""
import ctypes, sys, torch
class View(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]
get = ctypes.pythonapi.PyCapsule_GetPointer
get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
table = get(torch.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api")
# header (version u32 x2, prev_api ptr), then allocator, managed_from, managed_to, dltensor_from, current_stream
fn_addr = ctypes.c_void_p.from_address(table + 8 + 8 + 3 * 8).value
fn = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(View))(fn_addr)
t = eval(sys.argv[1])
v = View()
try:
    rc = fn(t, ctypes.byref(v))
    print(f"rc=0 device_type={v.device_type} data={'null' if not v.data else 'set'} ndim={v.ndim} code={v.code} bits={v.bits}")
except Exception as e:
    print(f"rc=-1 {type(e).__name__}: {str(e).splitlines()[0][:90]}")
"""


def main():
    import torch
    print(f"torch {torch.__version__}")
    for name, expr in CASES.items():
        try:
            r = subprocess.run([sys.executable, "-c", CHILD, expr], capture_output=True, text=True, timeout=120)
            line = (r.stdout.strip().splitlines() or [""])[-1]
            if r.returncode != 0 and not line:
                err = (r.stderr.strip().splitlines() or ["?"])[-1][:100]
                line = f"exit {r.returncode}: {err}"
        except subprocess.TimeoutExpired:
            line = "timeout"
        print(f"{name:18s} {line}")


if __name__ == "__main__":
    main()
