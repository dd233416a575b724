# Session 59, on the GPU host's CPU (HYBLAS_DEVICE=cpu). Stage: cpu-stage/ from
# scripts/cpu-host-stage.sh at b7640bf (libhyblas.so; the CPU engine is unchanged since), with
# libhyblas-old.so.xz = 5395fbd, and gt/wide.so.xz (DAXPY/DDOT past 32 MiB on 256-bit vectors)
# and gt/l1.py. Level 1 past the caches on one thread (interleaved in one
# process with OpenBLAS 0.3.34), DGEMM/ZGEMM 4096 on 16 cores under several block settings (one
# blasbench run each, MKL beside), then TRSM/TRMM at 1024-2048 on all 16 cores.
set -u
find cpu-stage -name '*.xz' -exec xz -d -f {} \;
export HYBLAS_DEVICE=cpu MKL_THREADING_LAYER=GNU
OB=cpu-stage/peers/scipy-openblas32/scipy_openblas32/lib/libscipy_openblas.so@scipy_
for n in 33554432 4194304 65536; do for r in daxpy ddot; do echo "== $r $n 1t"
  python3 cpu-stage/gt/l1.py $r $n 5 head=cpu-stage/libhyblas.so wide=cpu-stage/gt/wide.so ob=$OB; done; done
echo "== 16-thread GEMM block settings"
ROUNDS=3 OUT=$OUT timeout 200 bash scripts/cpu-host-gemm-settings.sh "" "HYBLAS_GEMM_NC=4096" "HYBLAS_GEMM_KC=256" "HYBLAS_GEMM_MC=384" "HYBLAS_GEMM_TASKS=1" "HYBLAS_GEMM_PACK_B_THREADS=99"
mkdir -p $OUT/tri16
OUT=$OUT/tri16 timeout 120 bash scripts/cpu-host-run.sh --routines dtrsm:LLNN,dtrsm:RUNN,dtrmm:LLNN,ztrsm:LLNN --sizes 1024,2048 --threads 16 --rounds 4 --twin mkl > /dev/null 2>&1
grep "|" $OUT/tri16/*.md
