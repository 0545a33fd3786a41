package feed_test

import (
	"errors"
	"fmt"
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

// A pinned chain whose region fails recovers as the SDKs do (spec §16
// Phase 2, A1): a metadata chain (the partition-key-range ETag) restarts
// cold (a new epoch, no continuation, no pin: the Rust driver), a
// change-feed chain resumes from its cursor by failover (the .NET and Java
// retry policies): the same page again, unpinned and unhedged, then pinned
// to the region that served it; nothing is read twice. With no recovery
// left the leaf fails.
func TestPinnedFailureRecovers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kind      hedging.OperationKind
		twice     bool // the region the chain recovered to fails too
		firstPin  hedging.Region
		restarted bool
		pages     int // pages delivered without error
		slowMs    int // West's latency: beyond the threshold of the kind
	}{
		// The cold metadata page hedges (West slow) and East wins: pinned East.
		{"metadata restarts cold", hedging.MetadataRead, false, "East", true, 1 + 3, 2000},
		{"metadata, recovery spent", hedging.MetadataRead, true, "East", true, -1, 2000},
		// The change feed's cold page is not hedged (§5.1 row 4a): West serves it.
		{"change feed resumes by failover", hedging.ChangeFeedPage, false, "West", false, 3, 200},
		{"change feed, recovery spent", hedging.ChangeFeedPage, true, "West", false, -1, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, regions2, 0, nil)
			down := map[hedging.Region]bool{}
			srv := &feedServer{pages: map[string]int{"p0": 3}, affinity: hedging.RegionAffine, latency: slowIn(tc.slowMs, "West")}
			srv.status = func(a hedging.Attempt, op *hedging.Operation) hedging.Status {
				if down[a.Endpoint.Region] {
					return hedging.Status{Code: 503}
				}
				return hedging.Status{Code: 200}
			}
			leaves := feed.Leaves(tc.kind, "p0")
			d, err := feed.New(c, leaves, feed.Config{})
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
				srv.resuming = p.Resume
				run := runRace(c, now, &p.Op, srv.answer)
				now = run.end
				del, err := d.Deliver(now, p, feed.FromRace(run.race))
				if err != nil {
					t.Fatal(err)
				}
				dels = append(dels, del)
				switch {
				case len(dels) == 1:
					if del.Page.Pinned != "" || feed.FromRace(run.race).Region != tc.firstPin {
						t.Fatalf("first page served by %s, want %s", feed.FromRace(run.race).Region, tc.firstPin)
					}
					down[tc.firstPin] = true // the pinned region fails now
				case del.Restarted || del.Resumed:
					if del.Page.Pinned != tc.firstPin || del.Page.Seq != 1 {
						t.Errorf("recovering page = %+v, want page 1 pinned %s", del.Page, tc.firstPin)
					}
					if tc.twice {
						down = map[hedging.Region]bool{"West": true, "East": true}
					}
				case del.OK && del.Page.Resume:
					if !tc.restarted && (del.Page.Seq != 1 || del.Page.Op.Continuation.IssuedBy != tc.firstPin) {
						t.Errorf("resumed page = %+v, want page 1 with the cursor %s issued", del.Page, tc.firstPin)
					}
				}
			}
			diag := d.Diagnostics()
			if tc.restarted && diag.ColdRestarts != 1 || !tc.restarted && diag.Resumes != 1 || diag.ColdRestarts+diag.Resumes != 1 {
				t.Errorf("ColdRestarts %d Resumes %d; want one %s", diag.ColdRestarts, diag.Resumes, map[bool]string{true: "restart", false: "resume"}[tc.restarted])
			}
			if tc.pages < 0 {
				var le *feed.LeafError
				if !errors.As(d.Err(), &le) || le.Leaf != 0 || le.Partition != "p0" {
					t.Errorf("Err = %v, want the leaf's error", d.Err())
				}
				return
			}
			if d.Err() != nil || diag.Pages != tc.pages || !dels[len(dels)-1].LeafDone {
				t.Errorf("err %v, %d pages, last %+v; want %d pages, drained", d.Err(), diag.Pages, dels[len(dels)-1], tc.pages)
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

// The fan-out cap and concurrency: a query plan over the cap is refused, a
// ReadMany plan of any size is not (no SDK caps it, spec §16 Phase 2 A10);
// at most MaxConcurrency leaves have a page in flight, activated in plan
// order.
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
	groups := make([]feed.Group, 250)
	for i := range groups {
		groups[i] = feed.Group{Partition: fmt.Sprint("p", i), IDs: []string{"a", "b"}[:1+i%2]}
	}
	many, err := feed.ReadManyPlan(groups)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := feed.New(c, many, feed.Config{MaxConcurrency: 8})
	if err != nil {
		t.Fatalf("a ReadMany of 250 partitions refused: %v", err)
	}
	n := 0
	for ; ; n++ {
		if _, ok := rm.Next(0); !ok {
			break
		}
	}
	if len(many) != 250 || n != 8 {
		t.Errorf("ReadMany: %d leaves, %d in flight; want 250, 8 (MaxConcurrency)", len(many), n)
	}
	mixed := append(slices.Clone(many), feed.Leaf{Partition: "q", Kind: hedging.QueryPage})
	if _, err := feed.New(c, mixed, feed.Config{}); err == nil {
		t.Error("a plan with a query leaf over the cap accepted")
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
		{"negative concurrency", nil, feed.Config{MaxConcurrency: -1}, "feed: MaxConcurrency, MaxFanOut and MaxPinRecoveries must not be negative"},
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

// The gate bounds the hedge legs in flight, not the pages that might hedge
// (spec §16 Phase 2, A5). 100 one-page leaves start at once: in a
// brown-out every threshold fires, and a gate of 10 lets 10 alternates out
// and refuses 90 (gated: their primaries run alone); with no brown-out the
// one slow leaf's hedge finds a slot and nothing is gated; under a
// Disabled strategy no page takes a slot nor counts as gated.
func TestGateBoundsHedgeLegs(t *testing.T) {
	parts := make([]string, 100)
	for i := range parts {
		parts[i] = string(rune('A'+i/26)) + string(rune('a'+i%26))
	}
	for _, tc := range []struct {
		name                  string
		disabled              bool
		slow                  func(leaf int) bool
		capacity              int
		spawned, gated, inUse int
	}{
		{"brown-out, gate 10", false, func(int) bool { return true }, 10, 10, 90, 10},
		{"brown-out, no gate", false, func(int) bool { return true }, 0, 100, 0, 0},
		{"one slow leaf, gate 1", false, func(l int) bool { return l == 37 }, 1, 1, 0, 1},
		{"disabled, gate 1", true, func(int) bool { return true }, 1, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, regions2, 0, nil)
			var g *feed.Gate
			cfg := feed.Config{}
			if tc.capacity > 0 {
				g, _ = feed.NewGate(tc.capacity)
				cfg.Gate = g
			}
			if tc.disabled {
				cfg.Template.Strategy = hedging.Disabled
			}
			d, err := feed.New(c, feed.Leaves(hedging.QueryPage, parts...), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var pages []feed.Page
			for {
				p, ok := d.Next(0)
				if !ok {
					break
				}
				pages = append(pages, p)
			}
			races := make([]hedging.Race, len(pages))
			sends := make([][]hedging.Attempt, len(pages))
			var e hedging.Effects
			collect := func(i int) {
				for k := range e.Len() {
					if a := e.At(k); a.Kind == hedging.ActSend {
						sends[i] = append(sends[i], a.Attempt)
					}
				}
			}
			for i := range pages {
				c.Begin(&e, &races[i], 0, &pages[i].Op)
				collect(i)
			}
			spawned := 0
			for i := range pages {
				if !tc.slow(i) {
					races[i].Responded(&e, 10*time.Millisecond, &sends[i][0], &hedging.Result{Status: hedging.Status{Code: 200}})
					continue
				}
				races[i].TimerFired(&e, 50*time.Millisecond, hedging.TimerThreshold)
				collect(i)
				if races[i].AlternateSpawned() {
					spawned++
				}
			}
			inUse := 0
			if g != nil {
				inUse = g.InUse()
			}
			if spawned != tc.spawned || inUse != tc.inUse {
				t.Errorf("alternates %d, slots in use %d; want %d, %d", spawned, inUse, tc.spawned, tc.inUse)
			}
			for i := range pages {
				if !races[i].Done() {
					last := sends[i][len(sends[i])-1]
					races[i].Responded(&e, 60*time.Millisecond, &last, &hedging.Result{Status: hedging.Status{Code: 200}})
				}
				if !races[i].Done() {
					races[i].Responded(&e, 500*time.Millisecond, &sends[i][0], &hedging.Result{Status: hedging.Status{Code: 200}})
				}
				if _, err := d.Deliver(500*time.Millisecond, pages[i], feed.FromRace(&races[i])); err != nil {
					t.Fatal(err)
				}
			}
			diag := d.Diagnostics()
			if diag.PagesGated != tc.gated || diag.PagesHedged != tc.spawned || !d.Done() {
				t.Errorf("PagesGated %d, PagesHedged %d, done %v; want %d, %d", diag.PagesGated, diag.PagesHedged, d.Done(), tc.gated, tc.spawned)
			}
			if g != nil && (g.InUse() != 0 || g.Peak() != tc.inUse) {
				t.Errorf("after the operation: in use %d, peak %d; want 0, %d", g.InUse(), g.Peak(), tc.inUse)
			}
		})
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
