"""Kernel timing: bench (CUDA events) and bench_kineto (profiler, per kernel name)."""
import os
import sys

import torch

__all__ = ['bench', 'bench_kineto', 'empty_suppress', 'suppress_stdout_stderr']


class empty_suppress:
    """No-op stand-in for suppress_stdout_stderr."""

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False


class suppress_stdout_stderr:
    """Silence file descriptors 1 and 2 (so C/C++ and CUPTI output too), not just sys.stdout."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self._devnull = open(os.devnull, 'w')
        self._saved_fds = (os.dup(1), os.dup(2))
        self._saved_streams = (sys.stdout, sys.stderr)
        os.dup2(self._devnull.fileno(), 1)
        os.dup2(self._devnull.fileno(), 2)
        sys.stdout = sys.stderr = self._devnull
        return self

    def __exit__(self, *_):
        sys.stdout, sys.stderr = self._saved_streams
        for fd, saved in zip((1, 2), self._saved_fds):
            os.dup2(saved, fd)
            os.close(saved)
        self._devnull.close()
        return False


def bench(fn, num_warmups: int = 5, num_tests: int = 10, high_precision: bool = False) -> float:
    """Mean seconds per fn() call, timed with CUDA events after an L2 flush and warm-up."""
    torch.cuda.synchronize()
    # Writing 256 MB evicts everything fn's inputs may have left in the (50 MB) L2.
    torch.empty(int(256e6 // 4), dtype=torch.int32, device='cuda').zero_()
    for _ in range(num_warmups):
        fn()
    if high_precision:
        # Queue a long GEMM first so the host enqueues every timed call before the GPU reaches
        # them: the measurement then has no launch gaps between calls.
        a = torch.randn(8192, 8192, dtype=torch.float32, device='cuda')
        a @ a
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(num_tests):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / num_tests / 1e3


def _use_nvidia_tools() -> bool:
    # Under Nsight or compute-sanitizer the CUPTI profiler cannot run, so timing is skipped.
    return any(os.environ.get(k, '0') not in ('', '0')
               for k in ('DG_USE_NVIDIA_TOOLS', 'TESSERA_USE_NVIDIA_TOOLS'))


def _kernel_events(prof):
    """(name, device microseconds) of every GPU-side event the profiler recorded."""
    cuda = torch.autograd.DeviceType.CUDA
    return [(e.name, e.time_range.elapsed_us()) for e in prof.events() if e.device_type == cuda]


def bench_kineto(fn, kernel_names, num_tests: int = 30, suppress_kineto_output: bool = False,
                 trace_path=None, flush_l2: bool = True, with_multiple_kernels: bool = False,
                 barrier=None):
    """Average device seconds per launch of the kernels whose names contain each substring.

    `kernel_names` is a str (returns a float) or a tuple of str (returns a tuple). A substring
    with no match gives 0; one matching several distinct kernels asserts unless
    `with_multiple_kernels`, in which case the launches of all of them are averaged together.
    """
    assert isinstance(kernel_names, (str, tuple)), 'kernel_names must be a str or a tuple of str'
    names = kernel_names if isinstance(kernel_names, tuple) else (kernel_names, )
    if _use_nvidia_tools():
        return tuple(1 for _ in names) if isinstance(kernel_names, tuple) else 1

    fn()  # First call outside the profiler: compiles or loads whatever fn needs.
    # 8 GB, far beyond L2, so every timed call starts cold; allocated once, rewritten per call.
    flush_buffer = torch.empty(int(8e9 // 4), dtype=torch.int32, device='cuda') if flush_l2 else None
    suppress = suppress_stdout_stderr if suppress_kineto_output else empty_suppress
    with suppress():
        # Two rounds: the first warms the profiler up and is discarded, the second is recorded.
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=1)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA],
                                    schedule=schedule) as prof:
            for _ in range(2):
                for _ in range(num_tests):
                    if barrier is not None:
                        # ~10 ms of GPU spin lets every rank's host catch up before the barrier.
                        torch.cuda._sleep(int(2e7))
                        barrier()
                    if flush_buffer is not None:
                        flush_buffer.zero_()
                    fn()
                prof.step()
    del flush_buffer

    if trace_path is not None:
        prof.export_chrome_trace(trace_path)

    events = _kernel_events(prof)
    times = []
    for name in names:
        matched = [(n, us) for n, us in events if name in n]
        distinct = {n for n, _ in matched}
        assert with_multiple_kernels or len(distinct) <= 1, \
            f'{name!r} matches {len(distinct)} kernels: {sorted(distinct)}'
        times.append(sum(us for _, us in matched) / len(matched) / 1e6 if matched else 0)
    return tuple(times) if isinstance(kernel_names, tuple) else times[0]
