package feed

import (
	"errors"
	"sync"

	"hedgelab/hedging"
)

// Gate bounds the hedge legs in flight across every feed operation of one
// client (spec §16 Phase 2; hedgelab's answer to azure-sdk-for-rust #4914
// and #4916, which ask for a budget in legs, not operations or races,
// because one operation fans out to K leaves). It is a [hedging.LegGate]:
// every page a [Driver] sends carries it (Operation.Legs), and the race
// takes a slot only when the page's alternate is about to be sent, and
// returns it when that leg ends. A page whose primary answers before its
// threshold, a pinned page, or any page under a Disabled strategy takes
// none. With every slot held, an alternate that is due is not sent (the
// primary runs alone; a failover upgrade fails over sequentially instead)
// and the page counts in Diagnostics.PagesGated. So a fan-out of 100 pages
// in a brown-out sends at most capacity alternates at once, and with no
// brown-out the few pages that do hedge find a slot. The same gate with
// [DefaultMetadataBudget] slots is the metadata hedge budget (the Rust
// driver's HedgeBudget of 32, non-blocking, which counts races: here
// alternates in flight). Safe for concurrent use; share one per client.
type Gate struct {
	mu   sync.Mutex
	cap  int
	used int
	peak int
}

var _ hedging.LegGate = (*Gate)(nil)

// NewGate returns a gate of capacity slots (>= 1). Errors: a smaller
// capacity.
func NewGate(capacity int) (*Gate, error) {
	if capacity < 1 {
		return nil, errors.New("feed: NewGate: capacity must be >= 1")
	}
	return &Gate{cap: capacity}, nil
}

// AcquireLeg takes one slot and reports whether it got it
// ([hedging.LegGate]); it never blocks.
func (g *Gate) AcquireLeg() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.used >= g.cap {
		return false
	}
	g.used++
	g.peak = max(g.peak, g.used)
	return true
}

// ReleaseLeg returns one slot taken by AcquireLeg ([hedging.LegGate]).
func (g *Gate) ReleaseLeg() {
	g.mu.Lock()
	g.used--
	g.mu.Unlock()
}

// InUse returns the slots held now.
func (g *Gate) InUse() int { g.mu.Lock(); defer g.mu.Unlock(); return g.used }

// Peak returns the most slots held at once since the gate was built; never
// more than its capacity.
func (g *Gate) Peak() int { g.mu.Lock(); defer g.mu.Unlock(); return g.peak }
