package feed

import (
	"errors"
	"sync"
)

// GateUnit is what a [Gate] counts.
type GateUnit uint8

// Gate units.
const (
	// Legs counts data-plane legs in flight: a page that may hedge holds two
	// slots for its race, a pinned or gated page one (spec §6.5 #1: at most
	// two legs per race). The per-client cap azure-sdk-for-rust #4916 asks
	// for: a race count is the wrong unit when one operation fans out to K
	// leaves.
	Legs GateUnit = iota
	// Races counts hedged metadata races, as the Rust driver's HedgeBudget
	// (default [DefaultMetadataBudget]): a race that may hedge takes one
	// token, a pinned one none; with no token left the race runs unhedged
	// (sequential failover) instead of waiting.
	Races
)

// Gate bounds concurrent hedging across every feed operation of one client:
// a counting semaphore that never blocks (spec §16 Phase 2; hedgelab's
// answer to azure-sdk-for-rust #4914/#4916). With a [Legs] gate full, a page
// that could have two legs runs unhedged on one slot, and one with no slot
// at all waits for a release; a [Races] gate never makes a page wait. Safe
// for concurrent use.
type Gate struct {
	unit    GateUnit
	mu      sync.Mutex
	cap     int
	used    int
	peak    int
	changed chan struct{}
}

// NewGate returns a gate of capacity slots (>= 2 for Legs, so a hedged page
// can run at all; >= 1 for Races). Errors: a smaller capacity.
func NewGate(unit GateUnit, capacity int) (*Gate, error) {
	if capacity < 1 || (unit == Legs && capacity < 2) {
		return nil, errors.New("feed: NewGate: capacity must be >= 2 for Legs and >= 1 for Races")
	}
	return &Gate{unit: unit, cap: capacity, changed: make(chan struct{})}, nil
}

// admit reserves the slots of one race that may hedge unless pinned. It
// returns the slots taken, whether the race may hedge, and false when a
// Legs gate has no slot at all (the page must wait).
func (g *Gate) admit(pinned bool) (slots int, hedge, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	free := g.cap - g.used
	switch {
	case g.unit == Races && pinned:
		return 0, false, true
	case g.unit == Races && free >= 1:
		slots, hedge = 1, true
	case g.unit == Races:
		return 0, false, true
	case pinned && free >= 1:
		slots = 1
	case !pinned && free >= 2:
		slots, hedge = 2, true
	case free >= 1:
		slots = 1
	default:
		return 0, false, false
	}
	g.used += slots
	g.peak = max(g.peak, g.used)
	return slots, hedge, true
}

// release returns n slots and wakes waiters.
func (g *Gate) release(n int) {
	if n == 0 {
		return
	}
	g.mu.Lock()
	g.used -= n
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
}

// InUse returns the slots held now.
func (g *Gate) InUse() int { g.mu.Lock(); defer g.mu.Unlock(); return g.used }

// Peak returns the most slots held at once since the gate was built; never
// more than its capacity.
func (g *Gate) Peak() int { g.mu.Lock(); defer g.mu.Unlock(); return g.peak }

// Changed returns a channel closed at the next release: a real-time driver
// whose page waits for a slot selects on it.
func (g *Gate) Changed() <-chan struct{} { g.mu.Lock(); defer g.mu.Unlock(); return g.changed }
