#!/bin/sh
# pgo.sh: regenerates cmd/hedgesim/default.pgo, the CPU profile with which
# go build, go run and go install optimise hedgesim (profile-guided
# optimisation: the go command's default -pgo=auto uses a main package's
# default.pgo). The profile is of what hedgesim spends its time on: the
# main job (BenchmarkDefaultScenario: the default scenario, every policy
# and replication, its files written) and the simulator's benchmarks
# (point reads, a fleet of 1000, feed queries, change-feed polls, a
# saturated replica with a bounded queue). Results do not depend on it;
# only speed does (scripts/bench-sim.sh builds the simulator with it, as
# hedgesim is built). Regenerate it after a large change of the simulator
# or the race core: a stale profile still helps, less.
#
# Usage: scripts/pgo.sh            (or: make pgo)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
"$go" test -c -pgo=off -o "$tmp/hedgesim.test" ./cmd/hedgesim
"$go" test -c -pgo=off -o "$tmp/simnet.test" ./simnet
# Built without a profile, so the new one does not learn from the old.
(cd cmd/hedgesim && "$tmp/hedgesim.test" -test.run '^$' -test.bench '^BenchmarkDefaultScenario$' -test.benchtime 3x -test.cpuprofile "$tmp/default.prof" >/dev/null)
"$tmp/simnet.test" -test.run '^$' -test.cpu 1 -test.benchtime 1s -test.cpuprofile "$tmp/simnet.prof" \
	-test.bench '^Benchmark(SimulatedPointReads|SimulatedPointReadsFleet1000|SimulatedFeedQueries|SimulatedChangeFeedPolls|OverloadBoundedQueue)$' >/dev/null
"$go" tool pprof -proto "$tmp/default.prof" "$tmp/simnet.prof" >"$tmp/default.pgo"
mv "$tmp/default.pgo" cmd/hedgesim/default.pgo
echo "pgo: wrote cmd/hedgesim/default.pgo ($(wc -c <cmd/hedgesim/default.pgo) bytes)"
