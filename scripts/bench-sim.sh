#!/bin/sh
# bench-sim.sh: the simulator's speed against the bare reference model.
#
# Runs simnet's BenchmarkSimulatedPointReads (one core) and simref, the bare
# model of the same workload in ../shared/bench/simref, alternately ROUNDS
# times (default 3), each for OPS operations (default 1000000), and prints
# every round's figures, then the best and the median ratio simnet /
# simref, against simref with eager timers and with -lazy, and the best
# (lowest) and the median ratio of BenchmarkSimulatedPointReadsFleet1000's
# time per operation to BenchmarkSimulatedPointReads's (the cost of
# spreading the reads over 1000 client instances), with every round's
# ratios listed. On a shared machine absolute figures move a lot between
# runs; the ratio of runs made side by side is the figure to quote, and
# the median is the one a bar is held to (the best is one lucky round).
#
# Usage: scripts/bench-sim.sh            (or: make bench-sim)
#        OPS=2000000 ROUNDS=5 scripts/bench-sim.sh
#        PGO=off scripts/bench-sim.sh   (simnet without hedgesim's profile)
# HEDGELAB_SHARED overrides the location of ../shared.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
shared=${HEDGELAB_SHARED:-$root/../shared}
simref_src=$shared/bench/simref
ops=${OPS:-1000000}
rounds=${ROUNDS:-3}
go=${GO:-go}

if [ ! -f "$simref_src/main.go" ]; then
	echo "bench-sim: the reference model is not there: $simref_src/main.go is missing." >&2
	echo "bench-sim: it lives in ../shared/bench/simref beside the repository (or set HEDGELAB_SHARED); nothing to compare against." >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$simref_src" && "$go" build -o "$tmp/simref" .)
# The simulator is built as hedgesim is: with cmd/hedgesim/default.pgo, the
# profile go build uses for hedgesim (scripts/pgo.sh); PGO=off builds it
# without (for comparison: the figures are then ~10-15% lower).
pgo=off
if [ "${PGO:-auto}" != off ] && [ -f "$root/cmd/hedgesim/default.pgo" ]; then
	pgo=$root/cmd/hedgesim/default.pgo
fi
echo "bench-sim: simnet built with -pgo=$pgo"
(cd "$root" && "$go" test -c -pgo="$pgo" -o "$tmp/simnet.test" ./simnet)

# figure NAME: the number before " NAME" on stdin (e.g. "812345 ops/s").
figure() { awk -v u="$1" '{ for (i = 2; i <= NF; i++) if ($i == u || $i == u ",") { v = $(i-1) } } END { printf "%d\n", v }'; }

# median: the median of the numbers on stdin, one a line (the mean of the
# middle two for an even count).
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

best=0
bestlazy=0
bestfleet=1000
rs=
rls=
rfs=
i=1
while [ "$i" -le "$rounds" ]; do
	out=$("$tmp/simnet.test" -test.run '^$' -test.bench '^BenchmarkSimulatedPointReads(Fleet1000)?$' -test.cpu 1 -test.benchtime "${ops}x")
	sim=$(echo "$out" | awk '$1 == "BenchmarkSimulatedPointReads"' | figure ops/s)
	rf=$(echo "$out" | awk '$1 == "BenchmarkSimulatedPointReads" { s = $3 } $1 == "BenchmarkSimulatedPointReadsFleet1000" { f = $3 } END { printf "%.2f", f / s }')
	ref=$("$tmp/simref" -ops "$ops" | figure ops/s)
	lazy=$("$tmp/simref" -ops "$ops" -lazy | figure ops/s)
	r=$(echo "$sim $ref" | awk '{ printf "%.2f", $1 / $2 }')
	rl=$(echo "$sim $lazy" | awk '{ printf "%.2f", $1 / $2 }')
	echo "round $i: simnet $sim ops/s; simref $ref ops/s (ratio $r); simref -lazy $lazy ops/s (ratio $rl); fleet of 1000 / one client $rf"
	best=$(echo "$best $r" | awk '{ print ($2 > $1) ? $2 : $1 }')
	bestlazy=$(echo "$bestlazy $rl" | awk '{ print ($2 > $1) ? $2 : $1 }')
	bestfleet=$(echo "$bestfleet $rf" | awk '{ print ($2 < $1) ? $2 : $1 }')
	rs="$rs $r"
	rls="$rls $rl"
	rfs="$rfs $rf"
	i=$((i + 1))
done
med=$(echo "$rs" | tr ' ' '\n' | grep . | median)
medlazy=$(echo "$rls" | tr ' ' '\n' | grep . | median)
medfleet=$(echo "$rfs" | tr ' ' '\n' | grep . | median)
echo "per round: simnet/simref$rs; simnet/simref -lazy$rls; fleet of 1000 / one client$rfs"
echo "best ratio simnet/simref over $rounds rounds of $ops ops: $best (eager timers), $bestlazy (-lazy); fleet of 1000 / one client: $bestfleet"
echo "median ratio simnet/simref over $rounds rounds of $ops ops: $med (eager timers), $medlazy (-lazy); fleet of 1000 / one client: $medfleet"
