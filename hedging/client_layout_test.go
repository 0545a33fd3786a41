package hedging

import (
	"slices"
	"testing"
	"time"
	"unsafe"
)

// TestClientHotLayout guards the layout Client's doc comment describes:
// the fields every operation reads of a client (hot through the shape
// pointer) end within 56 bytes, so that with the allocator's 8-byte header
// before an object of Client's size they fill its first cache line (a
// fleet of many clients misses on each line an operation touches), and
// the shape Begin adds is one line of its own. A field added among them
// fails this test; a cold field belongs after the shape pointer.
func TestClientHotLayout(t *testing.T) {
	var c Client
	if end := unsafe.Offsetof(c.clientShape) + unsafe.Sizeof(c.clientShape); end > 56 {
		t.Errorf("Client's hot fields end at byte %d, want at most 56 (one cache line with the 8-byte malloc header)", end)
	}
	if s := unsafe.Sizeof(clientShape{}); s != 64 {
		t.Errorf("clientShape is %d bytes, want 64 (one cache line, the 64-byte size class)", s)
	}
	// The 8-byte header is there only for objects above 512 bytes that
	// hold pointers (runtime/malloc.go, minSizeForMallocHeader).
	if s := unsafe.Sizeof(c); s <= 512 {
		t.Errorf("Client is %d bytes: without the malloc header its lines start 8 bytes earlier; revisit the layout", s)
	}
	t.Logf("Client: %d bytes; hot fields end at %d", unsafe.Sizeof(c), unsafe.Offsetof(c.clientShape)+unsafe.Sizeof(c.clientShape))
}

// Clients built from one Config with a stateless strategy share one shape;
// a stateful one (a threshold policy) has its own, and other Regions
// or another threshold gets a new one.
func TestClientShapeSharing(t *testing.T) {
	regions := []Endpoint{{Region: "a", Key: "a"}, {Region: "b", Key: "b"}}
	th, _ := NewThreshold(20e6)
	build := func(cfg Config) *Client {
		t.Helper()
		c, err := NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	static := Config{Regions: regions, Strategy: Hedging(NewHedgingStrategy(th))}
	c1, c2 := build(static), build(static)
	if c1.clientShape != c2.clientShape {
		t.Error("two clients from one Config with a fixed threshold have two shapes, want one shared")
	}
	if c1.defStrategy.threshold != th || len(c1.regions) != 2 || c1.regions[1].Region != "b" {
		t.Errorf("shared shape: threshold %v, regions %v", c1.defStrategy.threshold, c1.regions)
	}
	th2, _ := NewThreshold(30e6)
	other := static
	other.Strategy = Hedging(NewHedgingStrategy(th2))
	if c4 := build(other); c4.clientShape == c1.clientShape || c4.defStrategy.threshold != th2 {
		t.Errorf("a client with another threshold shares the shape (threshold %v)", c4.defStrategy.threshold)
	}
	other = static
	other.Regions = []Endpoint{{Region: "a", Key: "a"}}
	if c3 := build(other); c3.clientShape == c1.clientShape || len(c3.regions) != 1 {
		t.Errorf("a client with other regions shares the shape (regions %v)", c3.regions)
	}
	stateful := static
	stateful.Strategy = Hedging(NewPolicyStrategy(shapeTestPolicy{}))
	if c5, c6 := build(stateful), build(stateful); c5.clientShape == c6.clientShape {
		t.Error("two clients with a threshold policy share a shape, want one each")
	}
}

// shapeTestPolicy is a threshold policy (the kind a strategy keeps state
// in): always the strategy's fallback.
type shapeTestPolicy struct{}

func (shapeTestPolicy) Threshold(time.Duration, ThresholdQuery) (Threshold, bool) {
	return Threshold{}, true
}
func (shapeTestPolicy) Observe(time.Duration, Observation) {}
func (shapeTestPolicy) Name() string                       { return "shape-test" }

// Clients built concurrently from different Configs each get a shape equal
// to their own Config's (a shape shared under a race is never another
// Config's); run under -race.
func TestClientShapeConcurrent(t *testing.T) {
	regions := []Endpoint{{Region: "a", Key: "a"}, {Region: "b", Key: "b"}}
	cfgs := make([]Config, 4)
	for i := range cfgs {
		th, _ := NewThreshold(time.Duration(1+i/2) * time.Millisecond)
		cfgs[i] = Config{Regions: regions[:1+i%2], Strategy: Hedging(NewHedgingStrategy(th))}
	}
	errs := make(chan string, 400)
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := range 50 {
				cfg := cfgs[(g+j)%len(cfgs)]
				c, err := NewClient(cfg)
				if err != nil {
					errs <- err.Error()
					return
				}
				want, _ := cfg.Strategy.HedgingStrategy()
				if c.defStrategy.threshold != want.threshold || !slices.Equal(c.regions, cfg.Regions) {
					errs <- "a client got another Config's shape"
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// A client keeps its own copy of Config.Regions: a caller who reuses its
// slice for the next client (here, swapping the preference order in place)
// changes neither the client built before nor the shape it shares, and the
// next client, its regions now different, gets a shape of its own.
func TestClientShapeOwnsRegions(t *testing.T) {
	regions := []Endpoint{{Region: "east", Key: "east"}, {Region: "west", Key: "west"}}
	th, _ := NewThreshold(20e6)
	cfg := Config{Regions: regions, Strategy: Hedging(NewHedgingStrategy(th))}
	c1, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	regions[0], regions[1] = regions[1], regions[0]
	c2, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c1.regions[0].Region != "east" {
		t.Errorf("client 1's primary is %q after the caller reordered its slice, want east", c1.regions[0].Region)
	}
	if c2.regions[0].Region != "west" || c1.clientShape == c2.clientShape {
		t.Errorf("client 2: primary %q, shares client 1's shape %v; want west, false", c2.regions[0].Region, c1.clientShape == c2.clientShape)
	}
	// Equal regions in another slice: one shape (compared by value).
	c3, err := NewClient(Config{Regions: slices.Clone(regions), Strategy: cfg.Strategy})
	if err != nil {
		t.Fatal(err)
	}
	if c3.clientShape != c2.clientShape {
		t.Error("two clients with equal Regions in two slices have two shapes, want one shared")
	}
}
