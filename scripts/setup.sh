#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian/Ubuntu machine that has the CUDA toolkit, and is meant to
# be sourced (scripts/test.sh, scripts/main.sh):
#   - build tools and GoogleTest from apt, only those missing;
#   - a virtual environment (default .venv in the repository; TESSERA_VENV=DIR picks another) with nanobind,
#     scikit-build-core, pytest, numpy and torch from PyPI, plus nvdisasm for the SASS checks. Nothing goes into the
#     system Python (Debian and Ubuntu refuse that: externally-managed-environment).
# Afterwards PYTHON is the environment's interpreter, the environment's bin/ and nvcc are on PATH.
#   PYTHON=python3.12 source scripts/setup.sh      the interpreter the environment is created from (default python3)
#   TESSERA_TORCH_INDEX_URL=URL                     a package index to take torch from (e.g. a CPU-only build);
#                                                   default PyPI, whose Linux torch brings the CUDA libraries (~3 GB)
set -euo pipefail
_tessera_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

_tessera_apt() {  # installs Debian packages, as root or through sudo
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq && $sudo apt-get install -y -qq "$@"
}

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
command -v "${PYTHON:-python3}" >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then _tessera_apt "${need[@]}"; fi

venv=${TESSERA_VENV:-$_tessera_root/.venv}
if [ ! -x "$venv/bin/python" ]; then
    base=${PYTHON:-python3}
    # Debian's python3 carries the venv module without ensurepip until python3-venv is installed.
    if ! "$base" -c "import ensurepip, venv" 2>/dev/null; then _tessera_apt python3-venv; fi
    rm -rf "$venv"  # a half-made environment from an interrupted run
    "$base" -m venv "$venv"
fi
export PYTHON=$venv/bin/python
export VIRTUAL_ENV=$venv
case ":$PATH:" in *":$venv/bin:"*) ;; *) export PATH=$venv/bin:$PATH ;; esac

_tessera_pip() { "$PYTHON" -m pip install -q --disable-pip-version-check "$@"; }
if ! "$PYTHON" -c "import nanobind, scikit_build_core, pytest, numpy" 2>/dev/null; then
    _tessera_pip "nanobind>=2.0" "scikit-build-core>=0.10" pytest numpy
fi
if ! "$PYTHON" -c "import torch" 2>/dev/null; then
    # The CPU-only build when an index for it is given: a tenth of the download of PyPI's CUDA build.
    _tessera_pip ${TESSERA_TORCH_INDEX_URL:+--index-url "$TESSERA_TORCH_INDEX_URL"} torch
fi
# nvdisasm for the SASS checks (tests/python/test_sass_cpu.py); the CUDA toolkit here ships without it. Optional:
# without it that test reports itself skipped.
if ! command -v nvdisasm >/dev/null && ! "$PYTHON" -c "import glob, nvidia; assert glob.glob(nvidia.__path__[0] + '/cu*/bin/nvdisasm')" \
        2>/dev/null; then
    _tessera_pip "nvidia-cuda-nvdisasm>=12.8,<14" || echo "setup: nvdisasm not installed"
fi
if ! command -v nvcc >/dev/null; then
    for d in /usr/local/cuda/bin /usr/local/cuda-13.0/bin; do [ -x $d/nvcc ] && export PATH=$d:$PATH && break; done
fi
unset need venv base
