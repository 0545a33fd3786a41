package hedging

// This file holds a client group: many clients of one Config, built on
// first use into arrays of adjacent clients.

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// ClientGroup is n clients built from one Config, numbered 0..n-1: one per
// shard of a sharded service, or per instance of a simulated fleet. Each
// client is a [Client] of its own, with its own location store, hedge-win
// tracker (the partition breaker of §9.5), session tokens and strategy
// (its own threshold-policy state). They share the Config: its
// Transport, Observer and Logger are called by every client, concurrently,
// as by one client's concurrent operations. What else they share is
// immutable: the group's copy of the Regions and, for the clients whose
// strategy is stateless and equal to Config.Strategy, the part of it every
// operation reads. A client is built on its first [ClientGroup.Client]
// call, so a large group of which few clients run operations holds few
// clients' state. The clients are stored side by side, one cache line
// each, in arrays of 1024 (64 KiB) allocated when one of their clients is
// first used, so that finding client i loads no pointer of its own. Safe
// for concurrent use.
type ClientGroup struct {
	blocks      []atomic.Pointer[groupBlock]
	n           int
	cfg         Config
	shared      *clientShape
	newStrategy func(i int) (AvailabilityStrategy, error)
	// mu serialises building: built counts the clients built.
	mu    sync.Mutex
	built int
}

// groupBlockLen is the number of clients a groupBlock holds: a power of
// two, and enough that a block is a large allocation (above 32 KiB), which
// starts on a page, with no allocation header before its first client:
// every client of a block starts on a cache line (a client is one).
const groupBlockLen = 1024

type groupBlock [groupBlockLen]Client

// NewClientGroup validates cfg as [NewClient] does and returns a group of
// n clients built from it; client i's strategy is newStrategy(i), called
// once, on the client's first use (a constructor error is returned by
// that Client call, and the next call for i calls newStrategy again).
// newStrategy must not call the group (it runs under the group's lock).
// A nil newStrategy gives every client cfg.Strategy, which must then be
// stateless (a fixed threshold, no threshold policy and no Gate: a
// policy's windows or a budget are never shared between clients). The
// group keeps its own copy of cfg.Regions. Errors: NewClient's, n below
// 1, or a stateful cfg.Strategy with a nil newStrategy.
func NewClientGroup(cfg Config, n int, newStrategy func(i int) (AvailabilityStrategy, error)) (*ClientGroup, error) {
	if n < 1 {
		return nil, fmt.Errorf("hedging: NewClientGroup: n must be at least 1, got %d", n)
	}
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	if hs, ok := cfg.Strategy.HedgingStrategy(); ok && newStrategy == nil && !hs.stateless() {
		return nil, errors.New("hedging: NewClientGroup: Config.Strategy keeps state (a threshold policy or a Gate) and newStrategy is nil: the clients would share it")
	}
	cfg.Regions = slices.Clone(cfg.Regions)
	g := &ClientGroup{
		blocks:      make([]atomic.Pointer[groupBlock], (n+groupBlockLen-1)/groupBlockLen),
		n:           n,
		cfg:         cfg,
		newStrategy: newStrategy,
	}
	var proto Client
	proto.init(&g.cfg, nil)
	g.shared = proto.clientShape
	return g, nil
}

// Len returns the number of clients in the group, n.
func (g *ClientGroup) Len() int { return g.n }

// Built returns the number of clients built so far (those that Client
// returned at least once).
func (g *ClientGroup) Built() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.built
}

// Client returns client i (0 <= i < Len()), building it on its first call.
// Errors: i out of range, or newStrategy's error for i (returned as is) or
// a strategy it returned with a nil policy or Gate (see NewClient); the
// client is then not built.
func (g *ClientGroup) Client(i int) (*Client, error) {
	// Only a built client is returned here, and only clients 0..n-1 are
	// built (build checks i): a block beyond n's is never allocated.
	if u := uint(i); u/groupBlockLen < uint(len(g.blocks)) {
		if b := g.blocks[u/groupBlockLen].Load(); b != nil && b[u%groupBlockLen].built.Load() {
			return &b[u%groupBlockLen], nil
		}
	}
	return g.build(i)
}

// build is Client for a client not built yet (or i out of range).
func (g *ClientGroup) build(i int) (*Client, error) {
	if uint(i) >= uint(g.n) {
		return nil, fmt.Errorf("hedging: ClientGroup.Client(%d): the group has clients 0..%d", i, g.n-1)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.blocks[i/groupBlockLen].Load()
	if b == nil {
		b = new(groupBlock)
		g.blocks[i/groupBlockLen].Store(b)
	}
	c := &b[i%groupBlockLen]
	if c.built.Load() {
		return c, nil
	}
	cfg := g.cfg
	if g.newStrategy != nil {
		st, err := g.newStrategy(i)
		if err != nil {
			return nil, err
		}
		if err := checkStrategy(st); err != nil {
			return nil, err
		}
		cfg.Strategy = st
	}
	c.init(&cfg, g.shared) // sets c.built last
	g.built++
	return c, nil
}
