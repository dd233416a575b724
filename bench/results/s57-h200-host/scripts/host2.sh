find cpu-stage -name '*.xz' -exec xz -d -f {} \;
export HYBLAS_DEVICE=cpu MKL_THREADING_LAYER=GNU
export LD_LIBRARY_PATH=$PWD/cpu-stage/peers/mkl/lib
G=cpu-stage/gt; MK=cpu-stage/peers/mkl/lib/libmkl_rt.so.3
L="even=$G/even.so head=$G/head.so tr=$G/tr.so sw=$G/sw.so team=$G/team.so mkl=$MK"
for t in 2 1; do
  for rv in dtrsm:LLNN dtrsm:RUTN dtrsm:RLNN dtrmm:RUTN; do
    echo "== ${rv} 512, $t threads"; ROUT=${rv%%:*} V=${rv#*:} python3 $G/ab2.py $t 512 7 $L
  done
done
for t in 1 2; do echo "== dgemm TN 512, $t threads"; ROUT=dgemm V=TN python3 $G/ab2.py $t 512 5 head=$G/head.so tr=$G/tr.so mkl=$MK; done
echo "== dgemm NN 512, 1 thread"; ROUT=dgemm V=NN python3 $G/ab2.py 1 512 5 head=$G/head.so tr=$G/tr.so mkl=$MK
