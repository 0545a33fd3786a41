GO ?= go

.PHONY: all build test race bench bench-sim lint run results notebooks fuzz clean

all: lint test build

build:
	$(GO) build -buildvcs=true -o bin/hedgesim ./cmd/hedgesim

test:
	$(GO) test ./...

race:
	$(GO) test -race -timeout 45m ./...

# Benchmarks: hot paths (race core, simulator, distributions, HTTP driver)
# and the default scenario's wall time and peak memory (BenchmarkDefaultScenario).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The simulator against the bare reference model ../shared/bench/simref,
# alternately three times, side by side: prints the best ratio.
bench-sim:
	./scripts/bench-sim.sh

# Lint as CI does (.ci/run): tidy go.mod, gofmt, vet, staticcheck (pinned).
lint:
	$(GO) mod tidy -diff
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

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

clean:
	rm -rf bin
