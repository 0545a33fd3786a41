#!/bin/sh
# fleet-misses.sh: where a fleet of 1000 client instances costs more per
# operation than one client, in counts a loaded machine does not blur.
#
# Runs BenchmarkSimulatedPointReads and BenchmarkSimulatedPointReadsFleet1000
# under valgrind's cachegrind, each at two b.N (N1 and N2, default 100000
# and 300000), with the garbage collector off (GOGC=off: a collection
# falls in one run and not the other, which swamps the difference) and
# caches of this machine's sizes (D1 48 KiB 12-way, LL = the 2 MiB L2,
# 16-way; override with D1= and LL=). The difference of the two runs,
# divided by N2-N1, is the cost per operation without the setup. It prints
# the totals per operation (instructions, D1 misses, LL misses: misses
# past the L2) of both benchmarks, then the functions whose LL misses, D1
# misses and instructions per operation differ most between them.
#
# Usage: scripts/fleet-misses.sh          (about 2 minutes on an idle core)
#        N1=200000 N2=600000 TOP=30 scripts/fleet-misses.sh
#        KEEP=DIR scripts/fleet-misses.sh (keep the cachegrind files in DIR,
#                                          for cg_annotate by line)
#        FROM=DIR scripts/fleet-misses.sh (no run: read KEEP's files again)
#        FLEET1=1 scripts/fleet-misses.sh (also BenchmarkSimulatedPointReadsFleet1,
#                                          the fleet code with one instance: totals)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
n1=${N1:-100000}
n2=${N2:-300000}
top=${TOP:-15}
d1=${D1:-49152,12,64}
ll=${LL:-2097152,16,64}

if [ -z "${FROM:-}" ] && ! command -v valgrind >/dev/null; then
	echo "fleet-misses: valgrind is not installed (apt-get install valgrind)" >&2
	exit 2
fi
tmp=${FROM:-${KEEP:-$(mktemp -d)}}
mkdir -p "$tmp"
[ -n "${KEEP:-}${FROM:-}" ] || trap 'rm -rf "$tmp"' EXIT
if [ -z "${FROM:-}" ]; then
pgo=off
[ -f "$root/cmd/hedgesim/default.pgo" ] && pgo=$root/cmd/hedgesim/default.pgo
(cd "$root" && "$go" test -c -pgo="$pgo" -o "$tmp/simnet.test" ./simnet)

benches="SimulatedPointReads SimulatedPointReadsFleet1000"
[ -n "${FLEET1:-}" ] && benches="$benches SimulatedPointReadsFleet1"
for b in $benches; do
	for n in "$n1" "$n2"; do
		GOGC=off valgrind --tool=cachegrind --cache-sim=yes --D1="$d1" --LL="$ll" \
			--cachegrind-out-file="$tmp/$b.$n.out" "$tmp/simnet.test" -test.run '^$' \
			-test.bench "^Benchmark$b\$" -test.cpu 1 -test.benchtime "${n}x" >"$tmp/$b.$n.log" 2>&1 &
	done
done
wait
fi

# Per function and benchmark: (run N2 - run N1) / (N2 - N1) of Ir, D1
# misses (read + write) and LL misses (read + write). Cachegrind's events:
# Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw.
awk -v n1="$n1" -v n2="$n2" -v top="$top" -v s="$tmp/SimulatedPointReads" -v f="$tmp/SimulatedPointReadsFleet1000" '
FNR == 1 { file = FILENAME; sign = (file ~ ("\\." n2 "\\.out$")) ? 1 : -1; b = (index(file, f) == 1) ? "f" : "s" }
/^fn=/ { fn = substr($0, 4); next }
/^[0-9]/ {
	w = sign / (n2 - n1)
	ir[b, fn] += $2 * w; d1[b, fn] += ($6 + $9) * w; ll[b, fn] += ($7 + $10) * w
	fns[fn] = 1; tir[b] += $2 * w; td1[b] += ($6 + $9) * w; tll[b] += ($7 + $10) * w
}
END {
	printf "per operation      %10s %10s %10s\n", "instr", "D1 misses", "LL misses"
	printf "one client         %10.1f %10.2f %10.3f\n", tir["s"], td1["s"], tll["s"]
	printf "fleet of 1000      %10.1f %10.2f %10.3f\n", tir["f"], td1["f"], tll["f"]
	printf "difference         %+10.1f %+10.2f %+10.3f\n", tir["f"] - tir["s"], td1["f"] - td1["s"], tll["f"] - tll["s"]
	for (fn in fns) printf "%.6f\t%s\t%.1f\t%.1f\t%.3f\t%.3f\t%.4f\t%.4f\n", ll["f", fn] - ll["s", fn], fn, ir["s", fn], ir["f", fn], d1["s", fn], d1["f", fn], ll["s", fn], ll["f", fn] > (s ".ll.tsv")
	for (fn in fns) printf "%.6f\t%s\t%.1f\t%.1f\t%.3f\t%.3f\t%.4f\t%.4f\n", d1["f", fn] - d1["s", fn], fn, ir["s", fn], ir["f", fn], d1["s", fn], d1["f", fn], ll["s", fn], ll["f", fn] > (s ".d1.tsv")
	for (fn in fns) printf "%.6f\t%s\t%.1f\t%.1f\t%.3f\t%.3f\t%.4f\t%.4f\n", ir["f", fn] - ir["s", fn], fn, ir["s", fn], ir["f", fn], d1["s", fn], d1["f", fn], ll["s", fn], ll["f", fn] > (s ".ir.tsv")
}' "$tmp/SimulatedPointReads.$n1.out" "$tmp/SimulatedPointReads.$n2.out" \
	"$tmp/SimulatedPointReadsFleet1000.$n1.out" "$tmp/SimulatedPointReadsFleet1000.$n2.out"

if [ -f "$tmp/SimulatedPointReadsFleet1.$n2.out" ]; then
	awk -v n1="$n1" -v n2="$n2" '/^summary:/ { w = (FILENAME ~ ("\\." n2 "\\.out$")) ? 1 : -1; ir += $2 * w; d1 += ($6 + $9) * w; ll += ($7 + $10) * w }
		END { printf "one instance       %10.1f %10.2f %10.3f   (BenchmarkSimulatedPointReadsFleet1)\n", ir / (n2 - n1), d1 / (n2 - n1), ll / (n2 - n1) }' \
		"$tmp/SimulatedPointReadsFleet1.$n1.out" "$tmp/SimulatedPointReadsFleet1.$n2.out"
fi

for k in ll d1 ir; do
	echo
	echo "largest differences in $k per operation (function: instr one/fleet, D1 one/fleet, LL one/fleet):"
	sort -t "$(printf '\t')" -k1,1gr "$tmp/SimulatedPointReads.$k.tsv" | head -n "$top" |
		awk -F '\t' '{ printf "  %-64s %8.1f %8.1f %7.2f %7.2f %7.3f %7.3f\n", substr($2, length($2) > 64 ? length($2) - 63 : 1), $3, $4, $5, $6, $7, $8 }'
done
