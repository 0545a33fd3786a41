package feed_test

import (
	"context"
	"errors"
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

// The metadata budget is the same gate: with its tokens spent a metadata
// read runs unhedged instead of waiting; a pinned read takes no token.
func TestMetadataBudget(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	budget, _ := feed.NewGate(1)
	leaves := []feed.Leaf{
		feed.MetadataLeaf(feed.Collection, "a", "", ""),
		feed.MetadataLeaf(feed.PartitionKeyRanges, "a", "e1", "West"),
		feed.MetadataLeaf(feed.Collection, "b", "", ""),
	}
	d, _ := feed.New(c, leaves, feed.MetadataConfig(budget))
	var gated []bool
	for {
		p, ok := d.Next(0)
		if !ok {
			break
		}
		gated = append(gated, p.Gated)
	}
	if len(gated) != 3 || gated[0] || gated[1] || !gated[2] || budget.InUse() != 1 {
		t.Errorf("gated = %v, in use %d; want [false false true], 1", gated, budget.InUse())
	}
}

// Primary is authoritative: an alternate's final non-success is downgraded
// to transient; the primary's answers and the alternate's successes pass.
func TestAuthoritative(t *testing.T) {
	for _, tc := range []struct {
		leg       hedging.Leg
		code      int
		downgrade bool
	}{
		{hedging.Alternate, 404, true}, {hedging.Alternate, 409, true}, {hedging.Alternate, 412, true},
		{hedging.Alternate, 200, false}, {hedging.Alternate, 304, false}, {hedging.Alternate, 503, false},
		{hedging.Primary, 404, false}, {hedging.Primary, 200, false},
	} {
		res := feed.Authoritative(hedging.Attempt{Leg: tc.leg}, hedging.Result{Status: hedging.Status{Code: tc.code}})
		var na *feed.NotAuthoritativeError
		if errors.As(res.Err, &na) != tc.downgrade || res.Final() == tc.downgrade && tc.code < 500 {
			t.Errorf("%v %d: Err = %v, Final %v; want downgraded %v", tc.leg, tc.code, res.Err, res.Final(), tc.downgrade)
		}
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

// Through Client.Do: a slow primary's 200 is not overridden by the
// alternate's fast 404 under PrimaryAuthoritative; without it, the 404 wins
// (under testing/synctest: fake time, exact order).
func TestPrimaryAuthoritativeThroughDo(t *testing.T) {
	synctest.Test(t, primaryAuthoritativeThroughDo)
}

func primaryAuthoritativeThroughDo(t *testing.T) {
	tr := staticTransport{"West": {30 * time.Millisecond, 200}, "East": {time.Millisecond, 404}}
	for _, tc := range []struct {
		wrap bool
		want int
	}{{true, 200}, {false, 404}} {
		var transport hedging.Transport = tr
		if tc.wrap {
			transport = feed.PrimaryAuthoritative(tr)
		}
		c, err := hedging.NewClient(hedging.Config{Regions: regions2, Phase: hedging.Phase2, Transport: transport,
			Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(5 * time.Millisecond)))})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.MetadataRead, Partition: "coll"})
		if err != nil || resp.Result.Status.Code != tc.want {
			t.Errorf("wrapped %v: %v %v; want %d", tc.wrap, resp, err, tc.want)
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
