package hedginghttp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's test binary when any goroutine started by a
// test or benchmark (an attempt, an httptest server, an HTTP connection) is
// still running once all of them have finished. The only exception is
// cristalhq/hedgedhttp's worker pool, used by a comparison benchmark, whose
// workers idle for 10 s by design.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/cristalhq/hedgedhttp.runInPool.func1"))
}
