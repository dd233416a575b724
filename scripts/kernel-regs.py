#!/usr/bin/env python3
"""Registers, spills and shared memory of every kernel in kernels/<family>.cu for sm_90, from
NVRTC's ptxas report: no GPU needed (run `eval "$(scripts/nvrtc-local.sh)"` first, which fetches
NVRTC). Occupancy on a memory-bound kernel is bought with registers, so check a kernel change
here before spending device time on it.

    python3 scripts/kernel-regs.py gemv [-DDEFINE=1 ...] [--filter REGEX]
"""
import ctypes, os, re, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
args = sys.argv[1:]
if not args:
    sys.exit(__doc__)
family, defines, filt = args[0], [a for a in args[1:] if a.startswith("-D")], None
if "--filter" in args:
    filt = re.compile(args[args.index("--filter") + 1])
lib = None
for p in [os.path.join(root, ".nvrtc/nvidia/cu13/lib/libnvrtc.so.13"), "libnvrtc.so.13", "libnvrtc.so"]:
    try:
        lib = ctypes.CDLL(p)
        break
    except OSError:
        pass
if lib is None:
    sys.exit('no NVRTC: eval "$(scripts/nvrtc-local.sh)" first')
src = open(os.path.join(root, "kernels/common.cuh")).read() + f'\n#line 1 "{family}.cu"\n'
src += open(os.path.join(root, f"kernels/{family}.cu")).read()
prog = ctypes.c_void_p()
lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), f"{family}.cu".encode(), 0, None, None)
opts = [b"--std=c++17", b"-lineinfo", b"--gpu-architecture=sm_90", b"-Xptxas=-v"] + [d.encode() for d in defines]
rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
n = ctypes.c_size_t()
lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
buf = ctypes.create_string_buffer(n.value)
lib.nvrtcGetProgramLog(prog, buf)
log = buf.value.decode(errors="replace")
if rc != 0:
    sys.exit(log)
name = None
for line in log.splitlines():
    m = re.search(r"Compiling entry function '(\w+)'", line)
    if m:
        name = m.group(1)
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and name:
        spill = f"stack {m.group(1)} spill st/ld {m.group(2)}/{m.group(3)}"
        continue
    m = re.search(r"Used (\d+) registers", line)
    if m and name and (not filt or filt.search(name)):
        print(f"{name:<22} regs {m.group(1):>4}  {spill}")
