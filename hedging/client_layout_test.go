package hedging

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// TestClientHotLayout guards the layout Client's doc comment describes:
// a client is one 64-byte cache line (an object of that size, holding
// pointers, has no allocator header and starts on a line), and so is its
// shape; a group's block is a large allocation (no header before its
// first client, which starts on a page), so every client of a group
// starts on a line. A field added to Client fails this test; a cold field
// belongs in clientState.
func TestClientHotLayout(t *testing.T) {
	if s := unsafe.Sizeof(Client{}); s != 64 {
		t.Errorf("Client is %d bytes, want 64 (one cache line, the 64-byte size class)", s)
	}
	if s := unsafe.Sizeof(clientShape{}); s != 64 {
		t.Errorf("clientShape is %d bytes, want 64 (one cache line, the 64-byte size class)", s)
	}
	if sz := unsafe.Sizeof(groupBlock{}); sz <= 32<<10 {
		t.Errorf("groupBlock is %d bytes, want a large allocation (above 32 KiB)", sz)
	}
	c := build(t, Config{Regions: []Endpoint{{Region: "a", Key: "a"}}})
	if a := uintptr(unsafe.Pointer(c)); a%64 != 0 {
		t.Errorf("NewClient's client starts at %#x, not on a cache line", a)
	}
	g := buildGroup(t, Config{Regions: []Endpoint{{Region: "a", Key: "a"}}}, 3000, nil)
	for _, i := range []int{0, 1, 63, 1023, 1024, 2999} {
		if a := uintptr(unsafe.Pointer(groupClient(t, g, i))); a%64 != 0 {
			t.Errorf("group client %d starts at %#x, not on a cache line", i, a)
		}
	}
}

// TestTrackerHotLine guards the layout HedgeWinTracker's doc comment
// describes: in a client built by a group (or NewClient), what a won
// hedge and a primary final that resets its streak read of the tracker
// besides its pair's slot (mu, slots, threshold, minSpan, streakers,
// nstreakers) lie on one cache line; and a pair's slot is 64 bytes (one
// line in a table of minPairSlots, whose 512-byte allocation has no
// header).
func TestTrackerHotLine(t *testing.T) {
	if s := unsafe.Sizeof(pairSlot{}); s != 64 {
		t.Errorf("pairSlot is %d bytes, want 64 (one cache line)", s)
	}
	if s := unsafe.Sizeof(pairSlot{}) * minPairSlots; s != 512 {
		t.Errorf("the first table is %d bytes, want 512 (the largest size class without an allocator header)", s)
	}
	g := buildGroup(t, Config{Regions: []Endpoint{{Region: "a", Key: "a"}}}, 3, nil)
	c := build(t, Config{Regions: []Endpoint{{Region: "a", Key: "a"}}})
	for i, c := range []*Client{groupClient(t, g, 0), groupClient(t, g, 1), groupClient(t, g, 2), c} {
		tr := &c.tracker
		line := uintptr(unsafe.Pointer(&tr.mu)) / 64
		for name, end := range map[string]uintptr{
			"mu": uintptr(unsafe.Pointer(&tr.mu)) + unsafe.Sizeof(tr.mu), "slots": uintptr(unsafe.Pointer(&tr.slots)) + unsafe.Sizeof(tr.slots),
			"threshold": uintptr(unsafe.Pointer(&tr.threshold)) + unsafe.Sizeof(tr.threshold), "minSpan": uintptr(unsafe.Pointer(&tr.minSpan)) + unsafe.Sizeof(tr.minSpan),
			"streakers": uintptr(unsafe.Pointer(&tr.streakers)) + unsafe.Sizeof(tr.streakers), "nstreakers": uintptr(unsafe.Pointer(&tr.nstreakers)) + unsafe.Sizeof(tr.nstreakers),
		} {
			if (end-1)/64 != line {
				t.Errorf("client %d: HedgeWinTracker.%s ends at %#x, past the line of its mu (%#x)", i, name, end, uintptr(unsafe.Pointer(&tr.mu)))
			}
		}
		tr.recordHedgeWin(tr.hot, time.Second, "p", "a")
		if a := uintptr(unsafe.Pointer(&tr.slots[0])); a%64 != 0 {
			t.Errorf("client %d: the first table starts at %#x, not on a cache line", i, a)
		}
	}
}

func buildGroup(t *testing.T, cfg Config, n int, newStrategy func(int) (AvailabilityStrategy, error)) *ClientGroup {
	t.Helper()
	g, err := NewClientGroup(cfg, n, newStrategy)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func groupClient(t *testing.T, g *ClientGroup, i int) *Client {
	t.Helper()
	c, err := g.Client(i)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The clients of a group whose strategy is stateless and Config.Strategy's
// share one shape; a client with a stateful strategy (a threshold policy)
// or another threshold has its own; clients built by NewClient never
// share one. Each client is its own (its own tracker), built once.
func TestClientGroupShape(t *testing.T) {
	regions := []Endpoint{{Region: "a", Key: "a"}, {Region: "b", Key: "b"}}
	th, _ := NewThreshold(20e6)
	th2, _ := NewThreshold(30e6)
	static := Config{Regions: regions, Strategy: Hedging(NewHedgingStrategy(th))}
	g := buildGroup(t, static, 5, func(i int) (AvailabilityStrategy, error) {
		switch i {
		case 3:
			return Hedging(NewHedgingStrategy(th2)), nil
		case 4:
			return Hedging(NewPolicyStrategy(shapeTestPolicy{})), nil
		}
		return Hedging(NewHedgingStrategy(th)), nil
	})
	c0, c1, c2 := groupClient(t, g, 0), groupClient(t, g, 1), groupClient(t, g, 2)
	if c0.clientShape != c1.clientShape || c1.clientShape != c2.clientShape {
		t.Error("clients of one group with Config's fixed threshold have several shapes, want one shared")
	}
	if c0 == c1 || c0.HedgeWinTracker() == c1.HedgeWinTracker() {
		t.Error("two clients of a group are one client")
	}
	if c0.defStrategy.threshold != th || len(c0.regions) != 2 || c0.regions[1].Region != "b" {
		t.Errorf("shared shape: threshold %v, regions %v", c0.defStrategy.threshold, c0.regions)
	}
	if c3 := groupClient(t, g, 3); c3.clientShape == c0.clientShape || c3.defStrategy.threshold != th2 {
		t.Errorf("a client with another threshold shares the shape (threshold %v)", c3.defStrategy.threshold)
	}
	if c4 := groupClient(t, g, 4); c4.clientShape == c0.clientShape || c4.defStrategy.policy == nil {
		t.Error("a client with a threshold policy shares the shape, want its own")
	}
	if again := groupClient(t, g, 1); again != c1 {
		t.Error("Client(1) built client 1 twice")
	}
	if g.Built() != 5 || g.Len() != 5 {
		t.Errorf("Built %d, Len %d; want 5, 5", g.Built(), g.Len())
	}
	a, b := build(t, static), build(t, static)
	if a.clientShape == b.clientShape {
		t.Error("two clients from NewClient share a shape")
	}
}

func build(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewClientGroup's and Client's errors: n below 1, a stateful strategy
// with no newStrategy (the clients would share its state), a client out
// of range, newStrategy's error (the client stays unbuilt: the next call
// tries again) and a strategy with a nil policy.
func TestClientGroupErrors(t *testing.T) {
	regions := []Endpoint{{Region: "a", Key: "a"}}
	if _, err := NewClientGroup(Config{Regions: regions}, 0, nil); err == nil {
		t.Error("a group of 0 clients: no error")
	}
	stateful := Config{Regions: regions, Strategy: Hedging(NewPolicyStrategy(shapeTestPolicy{}))}
	if _, err := NewClientGroup(stateful, 2, nil); err == nil || !strings.Contains(err.Error(), "share") {
		t.Errorf("a stateful Config.Strategy with a nil newStrategy: %v, want an error", err)
	}
	if _, err := NewClientGroup(Config{Regions: append(regions, regions...)}, 2, nil); err == nil {
		t.Error("a region listed twice: no error")
	}
	calls := 0
	boom := errors.New("boom")
	g := buildGroup(t, Config{Regions: regions}, 3, func(i int) (AvailabilityStrategy, error) {
		calls++
		switch {
		case i == 1 && calls < 3:
			return AvailabilityStrategy{}, boom
		case i == 2:
			return Hedging(NewPolicyStrategy((*nilPolicy)(nil))), nil
		}
		return AvailabilityStrategy{}, nil
	})
	for _, i := range []int{-1, 3, 1 << 20} {
		if c, err := g.Client(i); err == nil || c != nil {
			t.Errorf("Client(%d) = %v, %v; want an error", i, c, err)
		}
	}
	if _, err := g.Client(1); !errors.Is(err, boom) {
		t.Errorf("Client(1) = %v, want newStrategy's error", err)
	}
	if _, err := g.Client(1); !errors.Is(err, boom) || g.Built() != 0 {
		t.Errorf("Client(1) again = %v (built %d), want newStrategy called again and its error", err, g.Built())
	}
	if _, err := g.Client(1); err != nil || g.Built() != 1 {
		t.Errorf("Client(1) a third time = %v (built %d), want the client", err, g.Built())
	}
	if _, err := g.Client(2); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("Client(2) with a nil policy = %v, want an error", err)
	}
}

// nilPolicy is a threshold policy type whose nil pointer a strategy holds.
type nilPolicy struct{}

func (*nilPolicy) Threshold(time.Duration, ThresholdQuery) (Threshold, bool) {
	return Threshold{}, true
}
func (*nilPolicy) Observe(time.Duration, Observation) {}
func (*nilPolicy) Name() string                       { return "nil" }

// shapeTestPolicy is a threshold policy (the kind a strategy keeps state
// in): always the strategy's fallback.
type shapeTestPolicy struct{}

func (shapeTestPolicy) Threshold(time.Duration, ThresholdQuery) (Threshold, bool) {
	return Threshold{}, true
}
func (shapeTestPolicy) Observe(time.Duration, Observation) {}
func (shapeTestPolicy) Name() string                       { return "shape-test" }

// Goroutines asking a group for the same clients at once get one client
// each, built once, with newStrategy called once per client; run under
// -race.
func TestClientGroupConcurrent(t *testing.T) {
	const n = 300
	var calls [n]atomic.Int32
	th, _ := NewThreshold(time.Millisecond)
	g := buildGroup(t, Config{Regions: []Endpoint{{Region: "a", Key: "a"}}}, n, func(i int) (AvailabilityStrategy, error) {
		calls[i].Add(1)
		return Hedging(NewHedgingStrategy(th)), nil
	})
	got := make([][n]*Client, 8)
	var wg sync.WaitGroup
	for w := range got {
		wg.Go(func() {
			for j := range n {
				i := (j*7 + w*31) % n
				c, err := g.Client(i)
				if err != nil {
					t.Error(err)
					return
				}
				got[w][i] = c
			}
		})
	}
	wg.Wait()
	for i := range n {
		if calls[i].Load() != 1 {
			t.Errorf("client %d: newStrategy called %d times, want once", i, calls[i].Load())
		}
		for w := range got {
			if got[w][i] != got[0][i] || got[w][i] == nil {
				t.Fatalf("client %d: goroutines got different clients", i)
			}
		}
	}
	if g.Built() != n {
		t.Errorf("Built = %d, want %d", g.Built(), n)
	}
}

// A client keeps its own copy of Config.Regions, and a group one for all
// its clients: a caller who reuses its slice (here, swapping the
// preference order in place) changes no client built before or after.
func TestClientShapeOwnsRegions(t *testing.T) {
	regions := []Endpoint{{Region: "east", Key: "east"}, {Region: "west", Key: "west"}}
	th, _ := NewThreshold(20e6)
	cfg := Config{Regions: regions, Strategy: Hedging(NewHedgingStrategy(th))}
	c1 := build(t, cfg)
	g := buildGroup(t, cfg, 2, nil)
	g0 := groupClient(t, g, 0)
	regions[0], regions[1] = regions[1], regions[0]
	g1 := groupClient(t, g, 1)
	for name, c := range map[string]*Client{"NewClient's": c1, "group client 0": g0, "group client 1": g1} {
		if c.regions[0].Region != "east" {
			t.Errorf("%s primary is %q after the caller reordered its slice, want east", name, c.regions[0].Region)
		}
	}
	if c2 := build(t, cfg); c2.regions[0].Region != "west" {
		t.Errorf("a client built after the reorder: primary %q, want west", c2.regions[0].Region)
	}
}

// A nil newStrategy takes any strategy that keeps no state (unset,
// Disabled, a fixed threshold) and refuses one that does: a fixed
// threshold with a Gate (a budget) would be one budget for every client.
func TestClientGroupNilNewStrategy(t *testing.T) {
	regions := []Endpoint{{Region: "a", Key: "a"}, {Region: "b", Key: "b"}}
	th, _ := NewThreshold(20e6)
	gated := NewHedgingStrategy(th)
	gated.Gate = groupTestGate{}
	for _, c := range []struct {
		name string
		s    AvailabilityStrategy
		ok   bool
	}{
		{"unset", AvailabilityStrategy{}, true},
		{"disabled", Disabled, true},
		{"fixed threshold", Hedging(NewHedgingStrategy(th)), true},
		{"fixed threshold with a Gate", Hedging(gated), false},
		{"threshold policy", Hedging(NewPolicyStrategy(shapeTestPolicy{})), false},
	} {
		g, err := NewClientGroup(Config{Regions: regions, Strategy: c.s}, 2, nil)
		if (err == nil) != c.ok {
			t.Errorf("%s: NewClientGroup error %v, want ok=%v", c.name, err, c.ok)
			continue
		}
		if err != nil {
			continue
		}
		c0, c1 := groupClient(t, g, 0), groupClient(t, g, 1)
		if c0.clientShape != c1.clientShape {
			t.Errorf("%s: the group's clients have two shapes, want one shared", c.name)
		}
	}
	// With a newStrategy, each client gets its own gated strategy.
	g := buildGroup(t, Config{Regions: regions, Strategy: Hedging(gated)}, 2, func(int) (AvailabilityStrategy, error) {
		s := NewHedgingStrategy(th)
		s.Gate = groupTestGate{}
		return Hedging(s), nil
	})
	if c0, c1 := groupClient(t, g, 0), groupClient(t, g, 1); c0.clientShape == c1.clientShape {
		t.Error("two clients with a Gate share a shape, want one each")
	}
}

// groupTestGate is a hedge gate (the kind a strategy keeps state in): it
// admits every hedge.
type groupTestGate struct{}

func (groupTestGate) Admit(time.Duration, Admission) bool { return true }
func (groupTestGate) Observe(time.Duration, Observation)  {}
func (groupTestGate) Name() string                        { return "group-test" }
