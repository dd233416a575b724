# Session 58, on the GPU host's CPU (HYBLAS_DEVICE=cpu): the build with the leaf's triangular
# tile kernel (final, b7640bf) against the one before (head, 5395fbd) and MKL, interleaved in one
# process (ab2.py), then blasbench for the TRSM table. Stage: cpu-stage/ from
# scripts/cpu-host-stage.sh plus gt/{head,final}.so.xz, gt/ab2.py, libhyblas-old.so.xz (= head).
set -u
find cpu-stage -name '*.xz' -exec xz -d -f {} \;
export HYBLAS_DEVICE=cpu MKL_THREADING_LAYER=GNU
G=cpu-stage/gt; MK=$PWD/cpu-stage/peers/mkl/lib/libmkl_rt.so.3
export LD_LIBRARY_PATH=$PWD/cpu-stage/peers/mkl/lib
L="head=$PWD/$G/head.so final=$PWD/$G/final.so mkl=$MK"
for t in 1 2; do for rv in dtrsm:LLNN dtrsm:LUTN ztrsm:LLCN ctrsm:LUNN strsm:LLNN dtrmm:LLNN ztrmm:LUNN zgemm:NN dgemm:TN; do
  echo "== ${rv} 512 ${t}t"; ROUT=${rv%%:*} V=${rv#*:} python3 $G/ab2.py $t 512 4 $L; done; done
mkdir -p $OUT/l3
OUT=$OUT/l3 timeout 150 bash scripts/cpu-host-run.sh --routines dtrsm:LLTN,dtrsm:RUTN,ztrsm:LLCN,ctrsm:LLNN --sizes 512 --threads 1,2 --rounds 4 --idle-wait 2 --twin mkl --peer hyblas-old=cpu-stage/libhyblas-old.so > /dev/null 2>&1
tail -22 $OUT/l3/*.md
