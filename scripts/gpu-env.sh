# Sourced (never run) by the scripts that run ON THE GPU HOST with gpu-stage/: the one place for
# what they all need there.
#   - CUDA's libraries (NVRTC for the kernels, cuBLAS for the peer) on the loader path where the
#     loader may not look, each directory once;
#   - stage_exec DIR: the carried stage may lose its execute bits; give them back (and unpack
#     the xz-compressed test executables);
#   - find_ncu: the Nsight Compute command line, or nothing.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    if [ -d "$d" ] && [[ ":${LD_LIBRARY_PATH:-}:" != *":$d:"* ]]; then
        export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
    fi
done

#   - it also unpacks the test executables, which travel xz-compressed (gpu-stage.sh).
stage_exec() {
    local t
    for t in "$1"/*.xz "$1"/tests/*.xz; do
        [ -e "$t" ] && xz -d -f "$t"
    done
    chmod +x "$1"/hyblas "$1"/gpubench "$1"/offloadbench "$1"/blasbench "$1"/ozakibench "$1"/ozakigpubench "$1"/tests/* "$1"/old/gpubench 2>/dev/null || true
}

find_ncu() {
    command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1
}
