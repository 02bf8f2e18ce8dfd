import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs torch with a CUDA GPU (run by ctest's python_gpu)")
