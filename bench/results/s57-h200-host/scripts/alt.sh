# alt.sh N SECS ROUNDS cfg... ; cfg = name:ENV=V,ENV=V:libpath ; prints per-config median of p10s and medians
n=$1; secs=$2; rounds=$3; shift 3
declare -A P M
for r in $(seq $rounds); do for cfg in "$@"; do
  name=${cfg%%:*}; rest=${cfg#*:}; envs=${rest%%:*}; lib=${rest#*:}
  out=$(env $(echo $envs | tr ',' ' ') python3 /tmp/gt/one.py $lib $n $secs)
  P[$name]+="$(echo $out | cut -d' ' -f1) "; M[$name]+="$(echo $out | cut -d' ' -f2) "
done; done
fl=$(python3 -c "print($n**3*(2 if \"${ROUT:-dtrsm}\".endswith(\"gemm\") else 1))")
for cfg in "$@"; do name=${cfg%%:*}; python3 -c "
import statistics as s; p=[float(x) for x in '${P[$name]}'.split()]; m=[float(x) for x in '${M[$name]}'.split()]
print(f'{\"$name\":14s} p10 {s.median(p):.3f} ms ({$fl/s.median(p)/1e6:.1f} GF)  med {s.median(m):.3f} ms ({$fl/s.median(m)/1e6:.1f} GF)  p10s {min(p):.3f}-{max(p):.3f}')"; done
