package feed_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// Metadata reads run at the fixed 1.5 s threshold whatever the client's
// strategy (50 ms here) and a caller's template (spec §16 Phase 2).
func TestMetadataThreshold(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	d, err := feed.New(c, []feed.Leaf{feed.MetadataLeaf(feed.Collection, "coll", "", "")}, feed.MetadataConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := d.Next(0)
	var r hedging.Race
	var e hedging.Effects
	c.Begin(&e, &r, 0, &p.Op)
	if _, hedged := r.Diagnostics(); !hedged || r.Threshold().Get() != 1500*time.Millisecond {
		t.Errorf("metadata read: hedged %v at %v; want hedged at 1.5s", hedged, r.Threshold().Get())
	}
	if p.Op.Request != feed.Collection || p.Op.Kind != hedging.MetadataRead {
		t.Errorf("op = %+v", p.Op)
	}
}

// A warm partition-key-range refresh carries the previous map's ETag, which
// only its issuing region can resume: pinned there even with
// AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE=true, while a cold read hedges.
func TestWarmPKRangeRefreshPinnedUnderOverride(t *testing.T) {
	c := newClient(t, regions2, 0, map[string]string{hedging.EnvHedgingEnabledOverride: "true"})
	leaves := []feed.Leaf{
		feed.MetadataLeaf(feed.PartitionKeyRanges, "coll", "", ""),
		feed.MetadataLeaf(feed.PartitionKeyRanges, "coll", `"etag-9"`, "East"),
	}
	d, err := feed.New(c, leaves, feed.MetadataConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	cold, _ := d.Next(0)
	warm, _ := d.Next(0)
	for _, tc := range []struct {
		p      feed.Page
		hedged bool
		pin    hedging.Region
	}{{cold, true, ""}, {warm, false, "East"}} {
		var r hedging.Race
		var e hedging.Effects
		c.Begin(&e, &r, 0, &tc.p.Op)
		_, hedged := r.Diagnostics()
		if hedged != tc.hedged || tc.p.Pinned != tc.pin || e.At(0).Attempt.Endpoint.Region != map[bool]hedging.Region{true: "West", false: "East"}[tc.hedged] {
			t.Errorf("leaf %d: hedged %v pinned %q first attempt to %s; want hedged %v pinned %q", tc.p.Leaf, hedged, tc.p.Pinned, e.At(0).Attempt.Endpoint.Region, tc.hedged, tc.pin)
		}
	}
}

// The metadata budget is the same gate, counted in alternates in flight:
// two cold reads whose primaries are slow both reach the 1.5 s threshold,
// the first's alternate takes the only slot and the second's is refused
// (its primary runs alone, counted as gated); a pinned read takes none
// (spec §16 Phase 2, A5).
func TestMetadataBudget(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	budget, _ := feed.NewGate(1)
	leaves := []feed.Leaf{
		feed.MetadataLeaf(feed.Collection, "a", "", ""),
		feed.MetadataLeaf(feed.PartitionKeyRanges, "a", "e1", "West"),
		feed.MetadataLeaf(feed.Collection, "b", "", ""),
	}
	d, _ := feed.New(c, leaves, feed.MetadataConfig(budget))
	var pages []feed.Page
	for {
		p, ok := d.Next(0)
		if !ok {
			break
		}
		pages = append(pages, p)
	}
	if len(pages) != 3 || budget.InUse() != 0 {
		t.Fatalf("%d pages, %d slots in use before any threshold; want 3, 0", len(pages), budget.InUse())
	}
	races := make([]hedging.Race, 3)
	sends := make([][]hedging.Attempt, 3)
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
	for i := range pages {
		races[i].TimerFired(&e, hedging.MetadataThreshold, hedging.TimerThreshold)
		collect(i)
	}
	if !races[0].AlternateSpawned() || races[1].AlternateSpawned() || races[2].AlternateSpawned() || budget.InUse() != 1 {
		t.Fatalf("spawned %v %v %v, in use %d; want the first only, 1", races[0].AlternateSpawned(), races[1].AlternateSpawned(), races[2].AlternateSpawned(), budget.InUse())
	}
	if diag, _ := races[2].Diagnostics(); !diag.HedgeRefused() {
		t.Errorf("the second cold read's hedge was not refused")
	}
	for i := range races {
		last := sends[i][len(sends[i])-1]
		races[i].Responded(&e, 2*time.Second, &last, &hedging.Result{Status: hedging.Status{Code: 200}})
		if _, err := d.Deliver(2*time.Second, pages[i], feed.FromRace(&races[i])); err != nil {
			t.Fatal(err)
		}
	}
	if g := d.Diagnostics().PagesGated; g != 1 || budget.InUse() != 0 || budget.Peak() != 1 {
		t.Errorf("PagesGated %d, in use %d, peak %d; want 1, 0, 1", g, budget.InUse(), budget.Peak())
	}
}

// A6: a Disabled client hedges no metadata read (the fixed threshold
// replaces the threshold, not the decision), through the driver.
func TestMetadataReadsUnderDisabled(t *testing.T) {
	c, err := hedging.NewClient(hedging.Config{Regions: regions2, Phase: hedging.Phase2, Strategy: hedging.Disabled})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := feed.New(c, []feed.Leaf{feed.MetadataLeaf(feed.Collection, "coll", "", "")}, feed.MetadataConfig(nil))
	p, _ := d.Next(0)
	var r hedging.Race
	var e hedging.Effects
	c.Begin(&e, &r, 0, &p.Op)
	if _, hedged := r.Diagnostics(); hedged {
		t.Errorf("a metadata read hedged under a Disabled client")
	}
}

// The query plan is a data-plane read (spec §16 Phase 2, A9): its leaf is
// a hedging.QueryPlan read, hedged at the client's 50 ms, not at 1.5 s.
func TestQueryPlanLeaf(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	d, _ := feed.New(c, []feed.Leaf{feed.MetadataLeaf(feed.QueryPlan, "coll", "", "")}, feed.Config{})
	p, _ := d.Next(0)
	var r hedging.Race
	var e hedging.Effects
	c.Begin(&e, &r, 0, &p.Op)
	if p.Op.Kind != hedging.QueryPlan || r.Threshold().Get() != 50*time.Millisecond {
		t.Errorf("query plan: kind %v threshold %v; want query_plan at 50ms", p.Op.Kind, r.Threshold().Get())
	}
}

// staticTransport answers per region after a delay, through Client.Do.
type staticTransport map[hedging.Region]struct {
	after time.Duration
	code  int
}

func (s staticTransport) Send(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	r := s[a.Endpoint.Region]
	select {
	case <-time.After(r.after):
		return hedging.Result{Status: hedging.Status{Code: r.code}, Page: &hedging.PageInfo{ServedBy: a.Endpoint.Region}}
	case <-ctx.Done():
		return hedging.Result{Err: ctx.Err()}
	}
}

// Through Client.Do (the real-time driver obeys the race's rule): a slow
// primary's 200 is not overridden by the alternate's fast 404 on a
// metadata read, and the alternate is sent once; on a query page the 404
// wins (under testing/synctest: fake time, exact order).
func TestPrimaryAuthoritativeThroughDo(t *testing.T) {
	synctest.Test(t, primaryAuthoritativeThroughDo)
}

func primaryAuthoritativeThroughDo(t *testing.T) {
	tr := staticTransport{"West": {2 * time.Second, 200}, "East": {time.Millisecond, 404}}
	for _, tc := range []struct {
		kind hedging.OperationKind
		want int
	}{{hedging.MetadataRead, 200}, {hedging.QueryPage, 404}} {
		c, err := hedging.NewClient(hedging.Config{Regions: regions2, Phase: hedging.Phase2, Transport: tr,
			Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(5 * time.Millisecond)))})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: tc.kind, Partition: "coll"})
		if err != nil || resp.Result.Status.Code != tc.want {
			t.Errorf("%v: %v %v; want %d", tc.kind, resp, err, tc.want)
			continue
		}
		if n := resp.Diagnostics.Leg(hedging.Alternate).Attempts; n != 1 {
			t.Errorf("%v: alternate attempts %d, want 1", tc.kind, n)
		}
	}
}

// Fastest vs latest by an ordered version within a grace period.
func TestChoiceDecide(t *testing.T) {
	ok := func(at time.Duration, leg hedging.Leg, lsn int64) feed.Answer {
		return feed.Answer{At: at * time.Millisecond, Leg: leg, Result: hedging.Result{Status: hedging.Status{Code: 200}, Page: &hedging.PageInfo{AppliedLSN: lsn}}}
	}
	nf := func(at time.Duration, leg hedging.Leg) feed.Answer {
		return feed.Answer{At: at * time.Millisecond, Leg: leg, Result: hedging.Result{Status: hedging.Status{Code: 404}}}
	}
	latest50, err := feed.LatestWithGrace(50 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	P, A := hedging.Primary, hedging.Alternate
	for _, tc := range []struct {
		name    string
		choice  feed.Choice
		now     time.Duration
		answers []feed.Answer
		pending bool
		want    int
		done    bool
	}{
		{"fastest takes the first clean", feed.Fastest, 20, []feed.Answer{ok(20, A, 5)}, true, 0, true},
		{"fastest ignores a later higher version", feed.Fastest, 30, []feed.Answer{ok(30, P, 9), ok(20, A, 5)}, false, 1, true},
		{"tie goes to the primary", feed.Fastest, 20, []feed.Answer{ok(20, A, 5), ok(20, P, 4)}, false, 1, true},
		{"nothing yet, pending", feed.Fastest, 10, nil, true, -1, false},
		{"nothing, none pending", feed.Fastest, 10, nil, false, -1, true},
		{"primary 404 first is authoritative", feed.Fastest, 30, []feed.Answer{nf(10, P), ok(30, A, 5)}, false, 0, true},
		{"primary 404 after the hedge won", feed.Fastest, 30, []feed.Answer{nf(30, P), ok(10, A, 5)}, false, 1, true},
		{"latest waits the grace", latest50, 40, []feed.Answer{ok(20, A, 5)}, true, -1, false},
		{"latest after the grace takes what it has", latest50, 70, []feed.Answer{ok(20, A, 5)}, true, 0, true},
		{"latest takes the higher version within grace", latest50, 60, []feed.Answer{ok(20, A, 5), ok(60, P, 9)}, false, 1, true},
		{"latest ignores a version after the grace", latest50, 90, []feed.Answer{ok(20, A, 5), ok(90, P, 9)}, false, 0, true},
		{"latest equal versions: the earlier", latest50, 60, []feed.Answer{ok(20, A, 5), ok(60, P, 5)}, false, 0, true},
		{"latest decides early when nothing is pending", latest50, 30, []feed.Answer{ok(20, A, 5), ok(30, P, 3)}, false, 0, true},
		{"primary 404 within grace is authoritative", latest50, 60, []feed.Answer{ok(20, A, 5), nf(60, P)}, false, 1, true},
	} {
		got, done := tc.choice.Decide(tc.now*time.Millisecond, tc.answers, tc.pending)
		if got != tc.want || done != tc.done {
			t.Errorf("%s: Decide = %d, %v; want %d, %v", tc.name, got, done, tc.want, tc.done)
		}
	}
	if _, err := feed.LatestWithGrace(-1); err == nil {
		t.Error("negative grace accepted")
	}
	if feed.Fastest.String() != "fastest" || latest50.String() != "latest(50ms)" || feed.Resource(9).String() != "Resource(9)" || feed.QueryPlan.String() != "query_plan" {
		t.Error("String wrong")
	}
}
