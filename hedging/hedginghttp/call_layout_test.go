package hedginghttp

import (
	"testing"
	"unsafe"
)

// TestCallSizeClass guards the happy path's one per-request object: a call
// (with its 8-byte malloc header, which the runtime adds to objects over
// 512 bytes that hold pointers) fits the 768-byte size class, not 896 (it
// carries no copy of the hedge diagnostics, which RoundTrip never reads).
func TestCallSizeClass(t *testing.T) {
	const header, class = 8, 768
	if n := unsafe.Sizeof(call{}); n+header > class {
		t.Fatalf("call is %d bytes (+%d header): over the %d-byte size class", n, header, class)
	}
}
