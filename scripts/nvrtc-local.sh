#!/usr/bin/env bash
# Fetch NVIDIA's NVRTC (the pip wheel nvidia-cuda-nvrtc, no GPU needed) into .nvrtc/ so the
# kernels can be compile-checked on a machine without CUDA:
#   eval "$(scripts/nvrtc-local.sh)"; cargo test --release --test gpu_compile
# Prints the export line for LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
ver=13.0.88
dir=.nvrtc
if [ ! -e "$dir/nvidia/cu13/lib/libnvrtc.so.13" ]; then
    mkdir -p "$dir"
    python3 -m pip download -q --no-deps "nvidia-cuda-nvrtc==$ver" -d "$dir/whl" >&2
    python3 -m zipfile -e "$dir"/whl/nvidia_cuda_nvrtc-*.whl "$dir" >&2
fi
echo "export LD_LIBRARY_PATH=$PWD/$dir/nvidia/cu13/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
