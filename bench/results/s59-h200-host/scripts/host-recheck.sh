# Session 59, on the GPU host's CPU (HYBLAS_DEVICE=cpu): session 58's 2-thread interleaved
# comparison again, with scripts/interleave.py (ab2.py) now sleeping SETTLE = 5 ms before each library's calls (the
# library timed right after MKL had shared the cores with MKL's spinning workers). Builds:
# head = 5395fbd (cpu-stage/libhyblas-old.so), final = b7640bf (cpu-stage/libhyblas.so), MKL;
# the first run with the old order (head right after MKL), the second with final first.
set -u
find cpu-stage -name '*.xz' -exec xz -d -f {} \;
export HYBLAS_DEVICE=cpu MKL_THREADING_LAYER=GNU
G=cpu-stage/gt; MK=$PWD/cpu-stage/peers/mkl/lib/libmkl_rt.so.3
export LD_LIBRARY_PATH=$PWD/cpu-stage/peers/mkl/lib
H=$PWD/cpu-stage/libhyblas-old.so; F=$PWD/cpu-stage/libhyblas.so
for rv in dtrsm:LLNN dtrsm:LUTN ztrsm:LLCN ctrsm:LUNN dtrmm:LLNN; do
  echo "== ${rv} 512 2t, settle 5 ms"; ROUT=${rv%%:*} V=${rv#*:} python3 scripts/interleave.py 2 512 4 head=$H final=$F mkl=$MK
  echo "== ${rv} 512 2t, settle 5 ms, final first"; ROUT=${rv%%:*} V=${rv#*:} python3 scripts/interleave.py 2 512 4 final=$F head=$H mkl=$MK
done
