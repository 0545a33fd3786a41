package feed_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// Page affinity per policy on one 4-page leaf over West (primary) and East,
// 50 ms threshold (spec §16 Phase 2, §9.5): what each policy hedges and pins.
func TestAffinityPolicies(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policy   feed.Affinity
		cont     hedging.ContinuationAffinity
		slow     []hedging.Region // regions answering in 200 ms (others 10 ms)
		breaker  int
		want     feed.Diagnostics
		wantPins []hedging.Region // Page.Pinned of pages 0..3
	}{
		{name: "none, primary brown-out: every page pays the threshold", policy: feed.AffinityNone, slow: []hedging.Region{"West"},
			want: feed.Diagnostics{Pages: 4, PagesHedged: 4, AlternateWins: 4}, wantPins: []hedging.Region{"", "", "", ""}},
		{name: "pin after hedge win, brown-out: hedged once, then pinned to East", policy: feed.PinAfterHedgeWin, slow: []hedging.Region{"West"},
			want: feed.Diagnostics{Pages: 4, PagesHedged: 1, AlternateWins: 1, PagesPinned: 3}, wantPins: []hedging.Region{"", "East", "East", "East"}},
		{name: "pin after hedge win, healthy: no win, no pin", policy: feed.PinAfterHedgeWin,
			want: feed.Diagnostics{Pages: 4}, wantPins: []hedging.Region{"", "", "", ""}},
		{name: "pin always, healthy: pinned to West after page 0", policy: feed.PinAlways,
			want: feed.Diagnostics{Pages: 4, PagesPinned: 3}, wantPins: []hedging.Region{"", "West", "West", "West"}},
		{name: "pin always, brown-out: pinned to the winner East", policy: feed.PinAlways, slow: []hedging.Region{"West"},
			want: feed.Diagnostics{Pages: 4, PagesHedged: 1, AlternateWins: 1, PagesPinned: 3}, wantPins: []hedging.Region{"", "East", "East", "East"}},
		{name: "breaker-driven N=2, brown-out: pinned once the breaker trips", policy: feed.BreakerDriven, slow: []hedging.Region{"West"}, breaker: 2,
			want: feed.Diagnostics{Pages: 4, PagesHedged: 2, AlternateWins: 2, PagesPinned: 2}, wantPins: []hedging.Region{"", "", "East", "East"}},
		{name: "breaker-driven N=5, brown-out: 4 pages never trip it", policy: feed.BreakerDriven, slow: []hedging.Region{"West"}, breaker: 5,
			want: feed.Diagnostics{Pages: 4, PagesHedged: 4, AlternateWins: 4}, wantPins: []hedging.Region{"", "", "", ""}},
		{name: "region-affine forces the pin under none", policy: feed.AffinityNone, cont: hedging.RegionAffine, slow: []hedging.Region{"West"},
			want: feed.Diagnostics{Pages: 4, PagesHedged: 1, AlternateWins: 1, PagesPinned: 3}, wantPins: []hedging.Region{"", "East", "East", "East"}},
		{name: "region-affine, healthy: pinned to the issuing West", policy: feed.AffinityNone, cont: hedging.RegionAffine,
			want: feed.Diagnostics{Pages: 4, PagesPinned: 3}, wantPins: []hedging.Region{"", "West", "West", "West"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, regions2, tc.breaker, nil)
			srv := &feedServer{pages: map[string]int{"p0": 4}, affinity: tc.cont, latency: slowIn(200, tc.slow...)}
			d, err := feed.New(c, feed.Leaves(hedging.QueryPage, "p0"), feed.Config{Affinity: map[hedging.OperationKind]feed.Affinity{hedging.QueryPage: tc.policy}})
			if err != nil {
				t.Fatal(err)
			}
			dels, runs := drive(t, c, d, srv.answer)
			if got := d.Diagnostics(); got != tc.want {
				t.Errorf("Diagnostics = %+v\nwant          %+v", got, tc.want)
			}
			var pins []hedging.Region
			for i, del := range dels {
				pins = append(pins, del.Page.Pinned)
				for _, a := range runs[i].attempts {
					if del.Page.Pinned != "" && a.Endpoint.Region != del.Page.Pinned {
						t.Errorf("page %d pinned to %s sent an attempt to %s", i, del.Page.Pinned, a.Endpoint.Region)
					}
				}
			}
			if !slices.Equal(pins, tc.wantPins) {
				t.Errorf("pins = %q, want %q", pins, tc.wantPins)
			}
			if len(srv.violations) > 0 || d.Err() != nil {
				t.Errorf("violations %v, err %v", srv.violations, d.Err())
			}
		})
	}
}

// A pinned chain whose region fails restarts cold: new epoch, no
// continuation, no pin; with no restart left the leaf fails.
func TestPinnedFailureRestartsCold(t *testing.T) {
	for _, tc := range []struct {
		name     string
		westDown bool // West fails too once the restarted chain is pinned there
		wantErr  bool
	}{{"one restart allowed", false, false}, {"restart budget spent", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, regions2, 0, nil)
			eastDown, westDown := false, false
			srv := &feedServer{pages: map[string]int{"p0": 3}, affinity: hedging.RegionAffine, latency: slowIn(200, "West")}
			srv.status = func(a hedging.Attempt, op *hedging.Operation) hedging.Status {
				if eastDown && a.Endpoint.Region == "East" || westDown && a.Endpoint.Region == "West" {
					return hedging.Status{Code: 503}
				}
				return hedging.Status{Code: 200}
			}
			d, err := feed.New(c, feed.Leaves(hedging.ChangeFeedPage, "p0"), feed.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var dels []feed.Delivery
			now := time.Duration(0)
			for !d.Done() {
				p, ok := d.Next(now)
				if !ok {
					t.Fatal("stuck")
				}
				run := runRace(c, now, &p.Op, srv.answer)
				now = run.end
				del, err := d.Deliver(now, p, feed.FromRace(run.race))
				if err != nil {
					t.Fatal(err)
				}
				dels = append(dels, del)
				if len(dels) == 1 {
					eastDown = true // page 0 went to East (hedge win); East now fails
				}
				if len(dels) == 3 && tc.westDown {
					westDown = true // epoch 1 page 0 went to West, which now fails
				}
				if del.Restarted {
					// After the restart East is down and West slow: the cold page
					// hedges to East (503, transient) and West's answer wins.
					if del.Page.Pinned != "East" || del.Page.Epoch != 0 {
						t.Errorf("restarted page = %+v, want epoch 0 pinned East", del.Page)
					}
				}
			}
			if got := d.Diagnostics().ColdRestarts; got != 1 {
				t.Errorf("ColdRestarts = %d, want 1", got)
			}
			var le *feed.LeafError
			if tc.wantErr != errors.As(d.Err(), &le) {
				t.Fatalf("Err = %v, want error %v", d.Err(), tc.wantErr)
			}
			if tc.wantErr {
				if !errors.Is(d.Err(), hedging.ErrTransient) || le.Leaf != 0 || le.Partition != "p0" || le.Epoch != 1 || le.Seq != 1 {
					t.Errorf("LeafError = %+v", le)
				}
				return
			}
			last := dels[len(dels)-1]
			if last.Page.Epoch != 1 || !last.LeafDone || d.Diagnostics().Pages != 1+3 {
				t.Errorf("last delivery %+v, pages %d; want epoch 1 drained after 1+3 pages", last, d.Diagnostics().Pages)
			}
			if len(srv.violations) > 0 {
				t.Errorf("violations: %v", srv.violations)
			}
		})
	}
}

// Region switches count consecutive pages of one leaf served by different
// regions: a one-page brown-out of West gives West, East, West: 2 switches.
func TestRegionSwitches(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	srv := &feedServer{pages: map[string]int{"p0": 3}}
	srv.latency = func(a hedging.Attempt, op *hedging.Operation) time.Duration {
		if a.Endpoint.Region == "West" && pageOf(op.Continuation) == 1 {
			return 300 * time.Millisecond
		}
		return 10 * time.Millisecond
	}
	d, err := feed.New(c, feed.Leaves(hedging.QueryPage, "p0"), feed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	drive(t, c, d, srv.answer)
	if got := d.Diagnostics(); got.RegionSwitches != 2 || got.AlternateWins != 1 || got.Pages != 3 {
		t.Errorf("Diagnostics = %+v; want 3 pages, 1 alternate win, 2 region switches", got)
	}
}

// A final non-success fails the leaf and stops the operation: no new page
// is offered, and the error names leaf, partition, page and status.
func TestFinalErrorFailsOperation(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	srv := &feedServer{pages: map[string]int{"a": 3, "b": 3}, status: func(a hedging.Attempt, op *hedging.Operation) hedging.Status {
		if op.Partition == "b" && pageOf(op.Continuation) == 1 {
			return hedging.Status{Code: 404}
		}
		return hedging.Status{Code: 200}
	}}
	d, err := feed.New(c, feed.Leaves(hedging.QueryPage, "a", "b"), feed.Config{MaxConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	drive(t, c, d, srv.answer)
	var le *feed.LeafError
	if !errors.As(d.Err(), &le) || le.Leaf != 1 || le.Seq != 1 || le.Status.Code != 404 {
		t.Fatalf("Err = %v, want leaf 1 page 0.1 status 404", d.Err())
	}
	if want := `feed: leaf 1 (partition "b") page 0.1: status 404`; d.Err().Error() != want {
		t.Errorf("Error() = %q, want %q", d.Err().Error(), want)
	}
	if _, ok := d.Next(0); ok {
		t.Error("Next offered a page after the operation failed")
	}
}

// The template's per-operation settings reach every page: a per-request
// Disabled stops every page's hedge (the .NET ReadMany option drop), and
// ExcludeRegions and Request are propagated.
func TestTemplatePropagatesToEveryPage(t *testing.T) {
	c := newClient(t, regions3, 0, nil)
	srv := &feedServer{pages: map[string]int{"a": 3, "b": 2}, latency: slowIn(200, "West")}
	d, err := feed.New(c, feed.Leaves(hedging.QueryPage, "a", "b"), feed.Config{
		Template: hedging.Operation{Strategy: hedging.Disabled, ExcludeRegions: []hedging.Region{"North"}, Request: "SELECT *", Timeout: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	dels, runs := drive(t, c, d, srv.answer)
	for i, del := range dels {
		op := del.Page.Op
		if op.Strategy != hedging.Disabled || !slices.Equal(op.ExcludeRegions, []hedging.Region{"North"}) || op.Request != "SELECT *" || op.Timeout != time.Second {
			t.Errorf("page %d op = %+v, want the template's settings", i, op)
		}
		if _, hedged := runs[i].race.Diagnostics(); hedged {
			t.Errorf("page %d hedged under a per-request Disabled", i)
		}
	}
	if len(dels) != 5 {
		t.Errorf("%d pages, want 5", len(dels))
	}
}

// The fan-out cap and concurrency: a plan over the cap is refused; at most
// MaxConcurrency leaves have a page in flight, activated in plan order.
func TestFanOutAndConcurrency(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	parts := make([]string, 101)
	for i := range parts {
		parts[i] = "p" + string(rune('0'+i%10)) + string(rune('a'+i/10))
	}
	if _, err := feed.New(c, feed.Leaves(hedging.QueryPage, parts...), feed.Config{}); err == nil {
		t.Error("101 leaves accepted under the default fan-out cap of 100")
	}
	if _, err := feed.New(c, feed.Leaves(hedging.QueryPage, parts...), feed.Config{MaxFanOut: 101}); err != nil {
		t.Errorf("MaxFanOut 101: %v", err)
	}
	d, err := feed.New(c, feed.Leaves(hedging.QueryPage, parts[:10]...), feed.Config{MaxConcurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for {
		p, ok := d.Next(0)
		if !ok {
			break
		}
		got = append(got, p.Leaf)
	}
	if !slices.Equal(got, []int{0, 1, 2}) || d.InFlight() != 3 {
		t.Errorf("first pages from leaves %v, in flight %d; want leaves [0 1 2]", got, d.InFlight())
	}
}

// Bad plans and settings are refused with an error naming the leaf.
func TestNewRejects(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	for _, tc := range []struct {
		name   string
		leaves []feed.Leaf
		cfg    feed.Config
		want   string
	}{
		{"empty partition", []feed.Leaf{{Kind: hedging.QueryPage}}, feed.Config{}, "feed: leaf 0: empty partition"},
		{"write kind", []feed.Leaf{{Partition: "a", Kind: hedging.QueryPage}, {Partition: "b", Kind: hedging.Upsert}}, feed.Config{}, "feed: leaf 1: kind upsert is not a read"},
		{"region-affine without issuer", []feed.Leaf{{Partition: "a", Kind: hedging.ChangeFeedPage, Start: hedging.Continuation{Token: "e", Affinity: hedging.RegionAffine}}}, feed.Config{}, "feed: leaf 0: region-affine start continuation names no issuing region"},
		{"negative concurrency", nil, feed.Config{MaxConcurrency: -1}, "feed: MaxConcurrency, MaxFanOut and MaxColdRestarts must not be negative"},
	} {
		if _, err := feed.New(c, tc.leaves, tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	d, err := feed.New(c, nil, feed.Config{})
	if err != nil || !d.Done() {
		t.Errorf("empty plan: err %v, done %v; want done at once", err, d.Done())
	}
}

// ReadMany: a one-id group is a point read, a larger one query pages of at
// most 1,000 ids (.NET ReadManyQueryHelper).
func TestReadManyPlan(t *testing.T) {
	ids := make([]string, 2500)
	for i := range ids {
		ids[i] = "id"
	}
	leaves, err := feed.ReadManyPlan([]feed.Group{{Partition: "a", IDs: []string{"x"}}, {Partition: "b", IDs: ids}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []hedging.OperationKind
	var sizes []int
	for _, l := range leaves {
		kinds = append(kinds, l.Kind)
		sizes = append(sizes, len(l.Request.([]string)))
	}
	if !slices.Equal(kinds, []hedging.OperationKind{hedging.PointRead, hedging.ReadManyPage, hedging.ReadManyPage, hedging.ReadManyPage}) ||
		!slices.Equal(sizes, []int{1, 1000, 1000, 500}) {
		t.Errorf("kinds %v sizes %v", kinds, sizes)
	}
	if _, err := feed.ReadManyPlan([]feed.Group{{Partition: "a"}}); err == nil || err.Error() != "feed: ReadMany group 0: partition and ids must be non-empty" {
		t.Errorf("empty group: err = %v", err)
	}
}

// The gate bounds the hedge legs in flight across a fan-out of 100 leaves
// during a brown-out of the primary: with 10 slots, 10 pages may hedge and
// 90 run unhedged (one leg each), so at most 100+10 legs are in flight
// instead of 200; delivering a page frees its slot.
func TestGateBoundsHedgeLegs(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	parts := make([]string, 100)
	for i := range parts {
		parts[i] = string(rune('A'+i/26)) + string(rune('a'+i%26))
	}
	srv := &feedServer{pages: map[string]int{}, latency: slowIn(500, "West")}
	for _, gated := range []bool{false, true} {
		var g *feed.Gate
		if gated {
			g, _ = feed.NewGate(10)
		}
		d, err := feed.New(c, feed.Leaves(hedging.QueryPage, parts...), feed.Config{Gate: g})
		if err != nil {
			t.Fatal(err)
		}
		var pages []feed.Page
		legs := 0
		for {
			p, ok := d.Next(0)
			if !ok {
				break
			}
			pages = append(pages, p)
			run := runRace(c, 0, &p.Op, srv.answer)
			legs += feed.FromRace(run.race).Legs
		}
		want := 200
		if gated {
			want = 110
			if g.InUse() != 10 || g.Peak() != 10 {
				t.Errorf("gate in use %d peak %d, want 10", g.InUse(), g.Peak())
			}
		}
		if len(pages) != 100 || legs != want {
			t.Errorf("gated %v: %d pages with %d legs, want 100 pages with %d legs", gated, len(pages), legs, want)
		}
		if gated {
			if _, err := d.Deliver(0, pages[0], feed.Outcome{Result: hedging.Result{Status: hedging.Status{Code: 200}}, Legs: 2}); err != nil || g.InUse() != 9 {
				t.Errorf("after a delivery: err %v, in use %d; want 9", err, g.InUse())
			}
			if d.Diagnostics().PagesGated != 90 {
				t.Errorf("PagesGated = %d, want 90", d.Diagnostics().PagesGated)
			}
		}
	}
	if _, err := feed.NewGate(0); err == nil {
		t.Error("NewGate(0) accepted")
	}
}

// A delivered page cannot be delivered again, nor a page of an earlier
// epoch.
func TestDeliverTwiceIsStale(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	d, _ := feed.New(c, feed.Leaves(hedging.QueryPage, "a"), feed.Config{})
	p, _ := d.Next(0)
	out := feed.Outcome{Result: hedging.Result{Status: hedging.Status{Code: 200}, Page: &hedging.PageInfo{Continuation: hedging.Continuation{Token: "t"}}}, Legs: 1}
	if _, err := d.Deliver(0, p, out); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Deliver(0, p, out); !errors.Is(err, feed.ErrStale) {
		t.Errorf("second Deliver: err = %v, want ErrStale", err)
	}
	if d.Diagnostics().Pages != 1 {
		t.Errorf("Pages = %d after a stale delivery, want 1", d.Diagnostics().Pages)
	}
	if d.Continuation(0).Token != "t" {
		t.Errorf("Continuation = %+v", d.Continuation(0))
	}
}

// Setup contacts count the attempts of setup stages reported before the
// first page, not after (§16 G2 caveat).
func TestSetupContacts(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	d, _ := feed.New(c, feed.Leaves(hedging.QueryPage, "a"), feed.Config{})
	d.NoteSetup(feed.Outcome{Attempts: 3})
	d.NoteSetup(feed.Outcome{Attempts: 2})
	d.Next(0)
	d.NoteSetup(feed.Outcome{Attempts: 7})
	if got := d.Diagnostics().SetupContacts; got != 5 {
		t.Errorf("SetupContacts = %d, want 5", got)
	}
}

func TestAffinityNames(t *testing.T) {
	for a := feed.AffinityNone; a <= feed.BreakerDriven; a++ {
		if got, err := feed.ParseAffinity(a.String()); err != nil || got != a {
			t.Errorf("ParseAffinity(%q) = %v, %v", a.String(), got, err)
		}
	}
	if _, err := feed.ParseAffinity("sticky"); err == nil || err.Error() != `feed: unknown affinity "sticky"` {
		t.Errorf("ParseAffinity(sticky) err = %v", err)
	}
	if feed.Affinity(9).String() != "Affinity(9)" || feed.DefaultAffinity(hedging.MetadataRead) != feed.PinAfterHedgeWin || feed.DefaultAffinity(hedging.ChangeFeedPage) != feed.AffinityNone {
		t.Error("String or DefaultAffinity wrong")
	}
}

func TestNewRejectsUnknownAffinity(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	_, err := feed.New(c, nil, feed.Config{Affinity: map[hedging.OperationKind]feed.Affinity{hedging.QueryPage: 7}})
	if err == nil || err.Error() != "feed: Config.Affinity[query]: unknown policy Affinity(7)" {
		t.Errorf("err = %v", err)
	}
}
