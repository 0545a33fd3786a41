package hedginghttp

import (
	"sync"

	"hedgelab/hedging"
)

// cursorMemory is how many continuations a RoundTripper remembers the
// serving region of (spec §16 Phase 2: a region-affine cursor belongs to
// the region that served the page that handed it out).
const cursorMemory = 4096

// cursors remembers, for the last cursorMemory continuations the
// RoundTripper handed out in responses (a change feed's ETag, a query's
// x-ms-continuation), the region that served that response. A page that
// sends one back belongs to that region, whichever region's URL the
// caller addressed: an http.Client that sends every page to the first
// region's URL still sends the alternate's cursor to the alternate. Older
// continuations fall back to the addressed region. Safe for concurrent
// use.
type cursors struct {
	mu   sync.Mutex
	by   map[string]hedging.Region
	ring [cursorMemory]string // insertion order, for eviction
	next int
}

// record notes that tok was handed out by a response region served.
func (c *cursors) record(tok string, region hedging.Region) {
	if tok == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = make(map[string]hedging.Region)
	}
	if _, ok := c.by[tok]; !ok {
		if old := c.ring[c.next]; old != "" {
			delete(c.by, old)
		}
		c.ring[c.next] = tok
		c.next = (c.next + 1) % cursorMemory
	}
	c.by[tok] = region
}

// servedBy returns the region that served the response that handed out
// tok, if remembered.
func (c *cursors) servedBy(tok string) (hedging.Region, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.by[tok]
	return r, ok
}
