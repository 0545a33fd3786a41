// Package longtest is the switch of the test suite's long step (README,
// Testing): tests that simulate for more than about a second are named
// TestLong… and start with [Skip], so `go test ./...` stays short and
//
//	HEDGELAB_LONG=1 go test -count=1 -p 1 -v -run '^TestLong' ./...
//
// (the long step of .ci/run) runs exactly them, streaming their output;
// [Progress] keeps such a test from being silent while it simulates.
package longtest

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Env is the environment variable that enables the long tests: any
// non-empty value.
const Env = "HEDGELAB_LONG"

// prefix starts the name of every long test, so that -run '^TestLong'
// selects the long step.
const prefix = "TestLong"

// progressEvery is how often [Progress] logs.
const progressEvery = 10 * time.Second

// enabled reports whether the long tests run ($HEDGELAB_LONG is set).
func enabled() bool { return os.Getenv(Env) != "" }

// Skip marks t as a long test: it skips t unless $HEDGELAB_LONG is set, and
// fails t at once if its name does not start with TestLong (the long step
// selects long tests by name).
func Skip(t testing.TB) {
	t.Helper()
	if !strings.HasPrefix(t.Name(), prefix) {
		t.Fatalf("longtest: %s calls longtest.Skip but is not named %s…: the long step (-run '^%s') would not run it", t.Name(), prefix, prefix)
	}
	if !enabled() {
		t.Skipf("long test: %s=1 go test -run '^%s' runs it (README, Testing)", Env, prefix)
	}
}

// Progress returns a counter for study.Options.Progress or
// simnet.RunOptions.Progress (one per finished operation) and logs it
// every progressEvery until t ends, so that a long simulation run under
// -v prints something at least that often.
func Progress(t testing.TB) *atomic.Int64 {
	var n atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				t.Logf("%s: %d operations simulated in %.0f s", t.Name(), n.Load(), time.Since(start).Seconds())
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		wg.Wait()
	})
	return &n
}
