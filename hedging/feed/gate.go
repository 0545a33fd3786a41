package feed

import (
	"errors"
	"sync"
)

// Gate bounds the hedge legs in flight across every feed operation of one
// client (spec §16 Phase 2; hedgelab's answer to azure-sdk-for-rust #4914
// and #4916, which ask for a budget in legs, not operations, because one
// operation fans out to K leaves). A page race that may hedge holds one
// slot, its potential alternate, from its start until it is delivered; a
// pinned page never hedges and holds none. With every slot held, a page
// runs unhedged (Strategy Disabled: plain sequential failover) instead of
// waiting, so a fan-out of 100 pages in a brown-out sends at most capacity
// alternates at once, never 100. The same gate with
// [DefaultMetadataBudget] slots is the metadata hedge budget (the Rust
// driver's HedgeBudget, 32 races, non-blocking). Safe for concurrent use;
// share one per client.
type Gate struct {
	mu   sync.Mutex
	cap  int
	used int
	peak int
}

// NewGate returns a gate of capacity slots (>= 1). Errors: a smaller
// capacity.
func NewGate(capacity int) (*Gate, error) {
	if capacity < 1 {
		return nil, errors.New("feed: NewGate: capacity must be >= 1")
	}
	return &Gate{cap: capacity}, nil
}

// tryAcquire takes one slot and reports whether it got it.
func (g *Gate) tryAcquire() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.used >= g.cap {
		return false
	}
	g.used++
	g.peak = max(g.peak, g.used)
	return true
}

// release returns one slot.
func (g *Gate) release() {
	g.mu.Lock()
	g.used--
	g.mu.Unlock()
}

// InUse returns the slots held now.
func (g *Gate) InUse() int { g.mu.Lock(); defer g.mu.Unlock(); return g.used }

// Peak returns the most slots held at once since the gate was built; never
// more than its capacity.
func (g *Gate) Peak() int { g.mu.Lock(); defer g.mu.Unlock(); return g.peak }
