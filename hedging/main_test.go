package hedging_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's test binary when any goroutine started by a
// test or benchmark (an attempt of Client.Do, abandoned ones included once
// their transport returned) is still running once all of them have
// finished.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
