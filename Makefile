GO ?= go

.PHONY: all build test race bench lint run results notebooks fuzz clean

all: lint test build

build:
	$(GO) build ./...

test:
	$(GO) test ./...

race:
	$(GO) test -race ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

run:
	$(GO) run ./cmd/hedgesim

clean:
	rm -rf bin
