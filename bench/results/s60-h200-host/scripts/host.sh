# Session 60, on the GPU host's CPU (HYBLAS_DEVICE=cpu), cpu-stage/ carried (scripts/cpu-host-stage.sh at
# d01a637, plus cpu-stage/libhyblas-old.so.xz = 5395fbd, the build before sessions 57-59).
# 1) the issue-44 16-core cells, 2) the 1-2 thread TRSM/TRMM cells, 3) session 58's 2-thread gains
# re-timed with the settled interleaving (scripts/interleave.py), both orders.
set -u
find cpu-stage -name '*.xz' -exec xz -d -f {} \;
export HYBLAS_DEVICE=cpu MKL_THREADING_LAYER=GNU
MK=$PWD/cpu-stage/peers/mkl/lib/libmkl_rt.so.3
export LD_LIBRARY_PATH=$PWD/cpu-stage/peers/mkl/lib
H=$PWD/cpu-stage/libhyblas-old.so; F=$PWD/cpu-stage/libhyblas.so
mkdir -p $OUT/l3-16 $OUT/l3-1-2
OUT=$OUT/l3-16 bash scripts/cpu-host-run.sh --routines dgemm,zgemm,dsyrk,dtrsm --sizes 4096 --threads 16 --rounds 5 --twin mkl > /dev/null 2>&1
tail -12 $OUT/l3-16/cpu-host-blasbench.log
OUT=$OUT/l3-1-2 bash scripts/cpu-host-run.sh --routines dtrsm:LLNN,dtrsm:LUTN,dtrsm:RLNN,dtrsm:RUTN,ztrsm:LLCN,ctrsm:LUNN,dtrmm:LLNN,ztrmm:RUCN,zgemm:NN,zher2k:UN --sizes 512,1024 --threads 1,2 --rounds 5 --idle-wait 3 --twin mkl --peer hyblas-old=$H > /dev/null 2>&1
tail -50 $OUT/l3-1-2/cpu-host-blasbench.log
for rv in dtrsm:LLNN ztrsm:LLCN dtrmm:LLNN; do
  echo "== ${rv} 512 2t"; ROUT=${rv%%:*} V=${rv#*:} python3 scripts/interleave.py 2 512 4 head=$H final=$F mkl=$MK
  echo "== ${rv} 512 2t, final first"; ROUT=${rv%%:*} V=${rv#*:} python3 scripts/interleave.py 2 512 4 final=$F head=$H mkl=$MK
done 2>&1 | tee $OUT/interleave-2t.txt
