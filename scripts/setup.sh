#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian/Ubuntu machine that has the CUDA toolkit: build tools
# and GoogleTest from apt (only when missing), nanobind / scikit-build-core / pytest / numpy from PyPI.
set -euo pipefail
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${need[@]}"
fi
PY=${PYTHON:-python3}
$PY -c "import nanobind, pytest, numpy" 2>/dev/null || \
    $PY -m pip install -q --disable-pip-version-check "nanobind>=2.0" "scikit-build-core>=0.10" pytest numpy
# nvdisasm for the SASS checks (tests/python/test_sass_cpu.py); the CUDA toolkit here ships without it. Optional: without
# it (an offline machine) that test reports itself skipped.
if ! command -v nvdisasm >/dev/null && ! $PY -c "import glob, nvidia; assert glob.glob(nvidia.__path__[0] + '/cu*/bin/nvdisasm')" \
        2>/dev/null; then
    $PY -m pip install -q --disable-pip-version-check "nvidia-cuda-nvdisasm>=12.8,<14" || echo "setup: nvdisasm not installed"
fi
if ! command -v nvcc >/dev/null; then
    for d in /usr/local/cuda/bin /usr/local/cuda-13.0/bin; do [ -x $d/nvcc ] && export PATH=$d:$PATH && break; done
fi
