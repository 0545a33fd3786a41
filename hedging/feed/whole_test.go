package feed_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// wholeRun is what driveWhole saw.
type wholeRun struct {
	end       time.Duration
	delivered [2]int // pages delivered with a response, per copy
	cancelled int    // pages of the losing copy in flight when the other won
	stale     error  // what Deliver said to a losing copy's page
	regions   [2][]hedging.Region
}

// driveWhole runs w to the end: every page w offers runs as one race
// (runRace) from the instant it is offered, pages finish in time order
// (the primary copy first at one instant), and Due wakes the driver.
func driveWhole(t *testing.T, c *hedging.Client, w *feed.Whole, answer answerFunc) wholeRun {
	t.Helper()
	type inflight struct {
		leg hedging.Leg
		p   feed.Page
		run raceRun
	}
	var (
		now     time.Duration
		pending []inflight
		out     wholeRun
	)
	for steps := 0; !w.Done(); steps++ {
		if steps > 1000 {
			t.Fatal("whole operation did not finish in 1000 steps")
		}
		for {
			leg, p, ok := w.Next(now)
			if !ok {
				break
			}
			r := runRace(c, now, &p.Op, answer)
			for _, a := range r.attempts {
				out.regions[leg] = append(out.regions[leg], a.Endpoint.Region)
			}
			pending = append(pending, inflight{leg, p, r})
		}
		if w.Done() {
			break
		}
		next := -1
		for i, f := range pending {
			if next < 0 || f.run.end < pending[next].run.end || f.run.end == pending[next].run.end && f.leg < pending[next].leg {
				next = i
			}
		}
		due, hasDue := w.Due()
		switch {
		case hasDue && (next < 0 || due < pending[next].run.end):
			now = due
		case next < 0:
			t.Fatal("whole operation not done, nothing in flight and nothing due")
		default:
			f := pending[next]
			pending = slices.Delete(pending, next, next+1)
			now = f.run.end
			del, err := w.Deliver(now, f.leg, f.p, feed.FromRace(f.run.race))
			if err != nil {
				t.Fatalf("Deliver of copy %v page %d: %v", f.leg, f.p.Seq, err)
			}
			if del.OK {
				out.delivered[f.leg]++
			}
		}
	}
	out.end = now
	for _, f := range pending {
		out.cancelled++
		_, out.stale = w.Deliver(now, f.leg, f.p, feed.FromRace(f.run.race))
	}
	return out
}

// Whole-operation hedging of one 4-page leaf over West (primary) and East at
// the client's 50 ms threshold: when the alternate copy starts, who wins,
// and that every page of a copy stays in its region.
func TestWholeOperation(t *testing.T) {
	down := func(regions ...hedging.Region) func(hedging.Attempt, *hedging.Operation) hedging.Status {
		return func(a hedging.Attempt, _ *hedging.Operation) hedging.Status {
			if slices.Contains(regions, a.Endpoint.Region) {
				return hedging.Status{Code: 404}
			}
			return hedging.Status{Code: 200}
		}
	}
	for _, tc := range []struct {
		name        string
		regions     []hedging.Endpoint
		slow        []hedging.Region // 200 ms per page there, 10 ms elsewhere
		fail        []hedging.Region // 404 there
		wantSpawned bool
		wantWinner  hedging.Leg
		wantErr     bool
		wantEnd     time.Duration
		wantPages   [2]int
		wantCancel  int
		wantRegions [2]hedging.Region // "" = the copy sent nothing
	}{
		{name: "brown-out: the alternate copy starts at 50 ms and wins at 90 ms", regions: regions2, slow: []hedging.Region{"West"},
			wantSpawned: true, wantWinner: hedging.Alternate, wantEnd: 90 * time.Millisecond, wantPages: [2]int{0, 4}, wantCancel: 1,
			wantRegions: [2]hedging.Region{"West", "East"}},
		{name: "healthy: 4 × 10 ms end before the threshold, one copy", regions: regions2,
			wantWinner: hedging.Primary, wantEnd: 40 * time.Millisecond, wantPages: [2]int{4, 0}, wantRegions: [2]hedging.Region{"West", ""}},
		{name: "one region: not hedged, one copy", regions: regions3[:1], slow: []hedging.Region{"West"},
			wantWinner: hedging.Primary, wantEnd: 800 * time.Millisecond, wantPages: [2]int{4, 0}, wantRegions: [2]hedging.Region{"West", ""}},
		{name: "primary copy fails before the threshold: the alternate copy starts at once", regions: regions2, fail: []hedging.Region{"West"},
			wantSpawned: true, wantWinner: hedging.Alternate, wantEnd: 50 * time.Millisecond, wantPages: [2]int{0, 4}, wantRegions: [2]hedging.Region{"West", "East"}},
		{name: "both copies fail", regions: regions2, fail: []hedging.Region{"West", "East"},
			wantSpawned: true, wantErr: true, wantEnd: 20 * time.Millisecond, wantRegions: [2]hedging.Region{"West", "East"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.regions, 0, nil)
			srv := &feedServer{pages: map[string]int{"p0": 4}, latency: slowIn(200, tc.slow...), status: down(tc.fail...)}
			w, err := feed.NewWhole(c, feed.Leaves(hedging.QueryPage, "p0"), feed.Config{})
			if err != nil {
				t.Fatal(err)
			}
			got := driveWhole(t, c, w, srv.answer)
			winner, won := w.Winner()
			if w.Spawned() != tc.wantSpawned || won == tc.wantErr || won && winner != tc.wantWinner || (w.Err() != nil) != tc.wantErr {
				t.Errorf("spawned %v, winner %v (%v), err %v; want spawned %v, winner %v, error %v", w.Spawned(), winner, won, w.Err(), tc.wantSpawned, tc.wantWinner, tc.wantErr)
			}
			if got.end != tc.wantEnd || got.delivered != tc.wantPages || got.cancelled != tc.wantCancel {
				t.Errorf("ended at %v with pages %v delivered, %d cancelled; want %v, %v, %d", got.end, got.delivered, got.cancelled, tc.wantEnd, tc.wantPages, tc.wantCancel)
			}
			if got.cancelled > 0 && !errors.Is(got.stale, feed.ErrStale) {
				t.Errorf("Deliver of the losing copy's page = %v, want ErrStale", got.stale)
			}
			for leg, want := range tc.wantRegions {
				rs := slices.Compact(slices.Clone(got.regions[leg]))
				if want == "" && len(rs) > 0 || want != "" && !slices.Equal(rs, []hedging.Region{want}) {
					t.Errorf("copy %d sent attempts to %v, want only %q", leg, rs, want)
				}
			}
			for _, leg := range []hedging.Leg{hedging.Primary, hedging.Alternate} {
				if d := w.Copy(leg); d != nil && d.Diagnostics().PagesHedged != 0 {
					t.Errorf("copy %v hedged %d pages, want none (each copy is pinned)", leg, d.Diagnostics().PagesHedged)
				}
			}
		})
	}
}

// NewWhole refuses a preset pin; Next before anything plans the hedge
// from the client's threshold rule (Due = start + 50 ms).
func TestWholeOperationSetup(t *testing.T) {
	c := newClient(t, regions2, 0, nil)
	if _, err := feed.NewWhole(c, feed.Leaves(hedging.QueryPage, "p0"), feed.Config{Pin: "East"}); err == nil {
		t.Error("NewWhole with Config.Pin set: no error")
	}
	if _, err := feed.NewWhole(c, nil, feed.Config{}); err == nil {
		t.Error("NewWhole with no leaves: no error")
	}
	w, err := feed.NewWhole(c, feed.Leaves(hedging.QueryPage, "p0"), feed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Due(); ok {
		t.Error("Due before the first Next: want none")
	}
	leg, p, ok := w.Next(time.Second)
	if !ok || leg != hedging.Primary || p.Pinned != "West" {
		t.Errorf("first page: copy %v pinned %q (%v); want the primary copy pinned to West", leg, p.Pinned, ok)
	}
	if due, ok := w.Due(); !ok || due != time.Second+50*time.Millisecond {
		t.Errorf("Due = %v, %v; want 1.05 s", due, ok)
	}
	for _, s := range []string{"page", "operation"} {
		if u, err := feed.ParseUnit(s); err != nil || u.String() != s {
			t.Errorf("ParseUnit(%q) = %v, %v", s, u, err)
		}
	}
	if _, err := feed.ParseUnit("query"); err == nil {
		t.Error(`ParseUnit("query"): no error`)
	}
}
