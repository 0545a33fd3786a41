package hedging

// This file holds a client's shape: the immutable part of its
// configuration that every operation's Begin reads, shared by the clients
// that have the same one.

import (
	"slices"
	"sync/atomic"
)

// clientShape is what Begin reads of a client besides its hot counters:
// the preferred regions (a copy of Config.Regions, in order) and the
// strategy an operation that overrides nothing runs (resolveStrategy's
// answer). It is 64 bytes, one cache line, and never modified after
// NewClient.
type clientShape struct {
	regions     []Endpoint
	defStrategy HedgingStrategy
}

// lastShape is the shape NewClient built last with a stateless strategy:
// a client built next from an equal Config shares it (shareShape).
var lastShape atomic.Pointer[clientShape]

// shareShape returns a shape equal to s, whose regions are the caller's
// Config.Regions: the last one shared when it is equal (the same regions,
// compared by value, and the same stateless default strategy), otherwise
// a new one holding its own copy of the regions, so that a caller who
// reuses or changes its slice after NewClient changes no client (and the
// shape kept here pins none of the caller's memory). A shape with a
// stateful strategy (a threshold policy or a Gate: its own windows or
// budget per client) is never shared. Sharing changes no result (a shape
// is immutable); it lets the clients of a fleet built from one Config
// read one cache line of it instead of one each. Concurrent NewClients
// may miss a sharing; never share a wrong shape.
func shareShape(s clientShape) *clientShape {
	if !s.defStrategy.stateless() {
		s.regions = slices.Clone(s.regions)
		return &s
	}
	if last := lastShape.Load(); last != nil && last.defStrategy.threshold == s.defStrategy.threshold &&
		slices.Equal(last.regions, s.regions) {
		return last
	}
	s.regions = slices.Clone(s.regions)
	p := &s
	lastShape.Store(p)
	return p
}
