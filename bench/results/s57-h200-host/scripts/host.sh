# The probe run of probe.txt: cpu-stage/gt/ holds probe.so.xz (the probe build), one.py and alt.sh.
find cpu-stage -name '*.xz' -exec xz -d -f {} \;
export HYBLAS_DEVICE=cpu
export LD_LIBRARY_PATH=$PWD/cpu-stage/peers/mkl/lib
P=cpu-stage/gt/probe.so; MK=cpu-stage/peers/mkl/lib/libmkl_rt.so.3
for V in LLNN RUTN; do
  for t in 1 2; do echo "== $V probe $t threads"; V=$V HYBLAS_TRI_PROBE=1 HYBLAS_NUM_THREADS=$t python3 cpu-stage/gt/one.py $P 512 2 2>&1 | tail -5; done
  echo "== $V alternating processes"
  V=$V bash cpu-stage/gt/alt.sh 512 1.0 5 "h1:HYBLAS_NUM_THREADS=1:$P" "h1skip:HYBLAS_NUM_THREADS=1,SKIPPACK=1:$P" "h2:HYBLAS_NUM_THREADS=2:$P" "h2skip:HYBLAS_NUM_THREADS=2,SKIPPACK=1:$P" "mkl1:MKL_NUM_THREADS=1,MKL_THREADING_LAYER=GNU:$MK" "mkl2:MKL_NUM_THREADS=2,MKL_THREADING_LAYER=GNU:$MK"
done
