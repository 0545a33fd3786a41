GO ?= go

.PHONY: all build test race test-long ci bench bench-sim pgo lint run results notebooks fuzz slurm-check clean

all: lint test build

build:
	$(GO) build -buildvcs=true -o bin/hedgesim ./cmd/hedgesim

# The test steps of .ci/run (README, Testing): test is the README's test
# command (go test ./...), race the race detector on the packages where
# goroutines meet, test-long the long tests (TestLong…) without -race;
# ci runs lint and all three, as CI does.
test:
	$(GO) test ./...

race:
	./.ci/run race

test-long:
	./.ci/run long

ci:
	./.ci/run

# Benchmarks: hot paths (race core, simulator, distributions, HTTP driver)
# and the default scenario's wall time and peak memory (BenchmarkDefaultScenario).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The simulator against the bare reference model ../shared/bench/simref,
# alternately ROUNDS times (default 3), side by side: prints every round's
# ratios, the best and the median (and the fleet-of-1000 ratio); the
# simulator is built with hedgesim's profile. make bench-sim ROUNDS=4
bench-sim:
	ROUNDS=$(or $(ROUNDS),3) ./scripts/bench-sim.sh

# Regenerate cmd/hedgesim/default.pgo, the CPU profile go build optimises
# hedgesim with (profile-guided optimisation; results do not depend on it).
pgo:
	./scripts/pgo.sh

# Lint as CI does: tidy go.mod, gofmt, vet, staticcheck (pinned).
lint:
	./.ci/run lint

# Charts are written as SVG; PNG=1 also writes PNG copies (for slides; not
# committed, see .gitignore): `make results PNG=1`, `make notebooks PNG=1`.
PNGFLAG = $(if $(PNG),-png,)

# The main job: simulate the embedded default scenario into results/default/.
run:
	$(GO) run ./cmd/hedgesim

# Regenerate results/<scenario>/ for every embedded scenario and the index.
results:
	$(GO) build -buildvcs=true -o bin/hedgesim ./cmd/hedgesim
	rm -rf results
	./bin/hedgesim run -q $(PNGFLAG) $$(./bin/hedgesim list | awk '{print $$1}')
	$(GO) run ./cmd/notebooks -index results

# The adversary (hedgesim fuzz): N generated scenarios (default 300) at a new
# seed (the time) unless SEED is given, every one checked and each failure
# shrunk into fuzz-failures/ (OUT=). `make fuzz N=2000`, `make fuzz SEED=7`;
# SPACE=FILE layers a space file over the default, ARGS= adds flags (--all).
N ?= 300
OUT ?= fuzz-failures
fuzz:
	$(GO) build -buildvcs=true -o bin/hedgesim ./cmd/hedgesim
	./bin/hedgesim fuzz --n $(N) --seed $(if $(SEED),$(SEED),$$(date +%s)) --out $(OUT) $(if $(SPACE),--space $(SPACE),) $(ARGS)

# Regenerate the design-review notebooks in notebooks/.
notebooks:
	$(GO) run ./cmd/notebooks $(PNGFLAG)

# The sharded sweep on a real single-node Slurm started on this machine
# (needs root and Debian's slurmctld, slurmd, slurm-client and munge):
# array job, merge, and a byte-for-byte diff against the single run.
# Not in .ci/run, which needs only Go.
slurm-check:
	./scripts/slurm-check.sh

clean:
	rm -rf bin
