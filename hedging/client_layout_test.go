package hedging

import (
	"testing"
	"unsafe"
)

// TestClientHotLayout guards the layout Client's doc comment describes:
// the fields every operation reads (hot through defStrategy) end within
// 120 bytes, so that with the allocator's 8-byte header before an object
// of Client's size they fill two cache lines and no more (a fleet of many
// clients misses on each line an operation touches). A field added among
// them fails this test; a cold field belongs after tracker.
func TestClientHotLayout(t *testing.T) {
	var c Client
	if end := unsafe.Offsetof(c.defStrategy) + unsafe.Sizeof(c.defStrategy); end > 120 {
		t.Errorf("Client's hot fields end at byte %d, want at most 120 (two cache lines with the 8-byte malloc header)", end)
	}
	if end := unsafe.Offsetof(c.logging) + unsafe.Sizeof(c.logging); end > 56 {
		t.Errorf("Client's first-line fields (hot, phase, flags) end at byte %d, want at most 56", end)
	}
	// The 8-byte header is there only for objects above 512 bytes that
	// hold pointers (runtime/malloc.go, minSizeForMallocHeader).
	if s := unsafe.Sizeof(c); s <= 512 {
		t.Errorf("Client is %d bytes: without the malloc header its lines start 8 bytes earlier; revisit the layout", s)
	}
	t.Logf("Client: %d bytes; hot fields end at %d", unsafe.Sizeof(c), unsafe.Offsetof(c.defStrategy)+unsafe.Sizeof(c.defStrategy))
}
