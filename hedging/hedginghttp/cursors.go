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
// continuations, and those forgotten because their region failed the page
// that sent them back, fall back to the addressed region. Safe for
// concurrent use.
type cursors struct {
	mu   sync.Mutex
	by   map[string]cursorEntry
	ring [cursorMemory]string // insertion order, for eviction
	next int
}

// cursorEntry is a remembered continuation's serving region and its slot
// in the eviction ring (a forgotten and re-recorded token has a newer slot;
// evicting its old slot leaves it).
type cursorEntry struct {
	region hedging.Region
	slot   int
}

// record notes that tok was handed out by a response region served.
func (c *cursors) record(tok string, region hedging.Region) {
	if tok == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = make(map[string]cursorEntry)
	}
	if e, ok := c.by[tok]; ok {
		e.region = region
		c.by[tok] = e
		return
	}
	if old := c.ring[c.next]; old != "" {
		if e, ok := c.by[old]; ok && e.slot == c.next {
			delete(c.by, old)
		}
	}
	c.ring[c.next] = tok
	c.by[tok] = cursorEntry{region: region, slot: c.next}
	c.next = (c.next + 1) % cursorMemory
}

// servedBy returns the region that served the response that handed out
// tok, if remembered.
func (c *cursors) servedBy(tok string) (hedging.Region, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.by[tok]
	return e.region, ok
}

// forget drops tok when it is still remembered as region's: region failed
// the page that sent tok back, so the next page with tok goes to the
// region it addresses (the SDKs' failover of a pinned page, issue 26 A1).
func (c *cursors) forget(tok string, region hedging.Region) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.by[tok]; ok && e.region == region {
		delete(c.by, tok)
	}
}
