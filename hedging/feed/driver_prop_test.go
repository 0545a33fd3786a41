package feed_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// The driver's invariants over random plans, policies, gates, latencies,
// failures and delivery orders, each page raced through the real race core
// (spec §16 Phase 2):
//
//   - no page is delivered twice: a second Deliver is ErrStale, and the
//     pages delivered for one (leaf, epoch) are 0, 1, 2, ... without gaps;
//   - only the winner's continuation is forwarded: a leaf's next page
//     carries exactly the returned result's continuation, which the winning
//     region issued;
//   - at most 2 legs per page race, at most MaxConcurrency pages in flight,
//     and the gate never holds more slots than its capacity;
//   - a pinned page sends every attempt to its pinned region, and a
//     region-affine continuation is never resumed elsewhere, even with the
//     environment override forcing hedging on, except by the page that
//     resumes a data-plane chain after its pinned region failed (Resume:
//     unpinned, unhedged, the same continuation);
//   - the operation ends; without an error every leaf was read to its end.
func TestDriverInvariants(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nLeaves := rapid.IntRange(1, 5).Draw(rt, "leaves")
		srv := &feedServer{pages: map[string]int{}}
		var leaves []feed.Leaf
		for i := range nLeaves {
			part := fmt.Sprintf("p%d", i)
			srv.pages[part] = rapid.IntRange(1, 4).Draw(rt, "pages")
			kind := rapid.SampledFrom([]hedging.OperationKind{hedging.QueryPage, hedging.ChangeFeedPage, hedging.MetadataRead, hedging.ReadManyPage}).Draw(rt, "kind")
			leaves = append(leaves, feed.Leaf{Partition: part, Kind: kind})
		}
		srv.affinity = rapid.SampledFrom([]hedging.ContinuationAffinity{hedging.Portable, hedging.RegionAffine}).Draw(rt, "contAffinity")
		policies := map[hedging.OperationKind]feed.Affinity{}
		for _, k := range []hedging.OperationKind{hedging.QueryPage, hedging.ChangeFeedPage, hedging.MetadataRead, hedging.ReadManyPage} {
			policies[k] = feed.Affinity(rapid.IntRange(0, 3).Draw(rt, "policy"))
		}
		var env map[string]string
		if rapid.Bool().Draw(rt, "override") {
			env = map[string]string{hedging.EnvHedgingEnabledOverride: "true"}
		}
		c := newClient(rt, regions3, rapid.IntRange(1, 3).Draw(rt, "breaker"), env)
		cfg := feed.Config{Affinity: policies, MaxConcurrency: rapid.IntRange(0, nLeaves).Draw(rt, "concurrency")}
		gateCap := rapid.IntRange(0, 3).Draw(rt, "gate")
		if gateCap > 0 {
			cfg.Gate, _ = feed.NewGate(gateCap)
		}
		lats := []time.Duration{5 * time.Millisecond, 30 * time.Millisecond, 80 * time.Millisecond, 300 * time.Millisecond}
		srv.latency = func(hedging.Attempt, *hedging.Operation) time.Duration {
			return rapid.SampledFrom(lats).Draw(rt, "latency")
		}
		srv.status = func(hedging.Attempt, *hedging.Operation) hedging.Status {
			return rapid.SampledFrom([]hedging.Status{{Code: 200}, {Code: 200}, {Code: 200}, {Code: 200}, {Code: 503}}).Draw(rt, "status")
		}
		d, err := feed.New(c, leaves, cfg)
		if err != nil {
			rt.Fatal(err)
		}
		maxConc := cfg.MaxConcurrency
		if maxConc == 0 {
			maxConc = nLeaves
		}
		type key struct{ leaf, epoch int }
		nextSeq := map[key]int{}                    // next page expected per (leaf, epoch)
		forwarded := map[int]hedging.Continuation{} // what the leaf's next page must carry
		var inFlight []feed.Page
		now := time.Duration(0)
		for steps := 0; !d.Done(); steps++ {
			if steps > 500 {
				rt.Fatal("driver did not finish in 500 pages")
			}
			for {
				p, ok := d.Next(now)
				if !ok {
					break
				}
				if want := forwarded[p.Leaf]; p.Op.Continuation != want {
					rt.Fatalf("leaf %d page %d.%d carries %+v, want the winner's %+v", p.Leaf, p.Epoch, p.Seq, p.Op.Continuation, want)
				}
				inFlight = append(inFlight, p)
			}
			if len(inFlight) == 0 {
				rt.Fatal("not done, nothing in flight, no page offered")
			}
			if len(inFlight) > maxConc || d.InFlight() != len(inFlight) {
				rt.Fatalf("%d pages in flight (driver says %d), MaxConcurrency %d", len(inFlight), d.InFlight(), maxConc)
			}
			if cfg.Gate != nil && cfg.Gate.InUse() > gateCap {
				rt.Fatalf("gate holds %d slots, capacity %d", cfg.Gate.InUse(), gateCap)
			}
			i := rapid.IntRange(0, len(inFlight)-1).Draw(rt, "deliver")
			p := inFlight[i]
			inFlight = slices.Delete(inFlight, i, i+1)
			srv.resuming = p.Resume
			run := runRace(c, now, &p.Op, srv.answer)
			now = run.end
			if run.maxLegs > 2 || feed.FromRace(run.race).Legs > 2 {
				rt.Fatalf("page race had %d legs in flight, %d legs", run.maxLegs, feed.FromRace(run.race).Legs)
			}
			for _, a := range run.attempts {
				if p.Pinned != "" && (a.Endpoint.Region != p.Pinned || a.Leg != hedging.Primary) {
					rt.Fatalf("pinned page to %s sent %v attempt to %s", p.Pinned, a.Leg, a.Endpoint.Region)
				}
			}
			out := feed.FromRace(run.race)
			del, err := d.Deliver(now, p, out)
			if err != nil {
				rt.Fatalf("Deliver of an in-flight page: %v", err)
			}
			if _, err := d.Deliver(now, p, out); !errors.Is(err, feed.ErrStale) {
				rt.Fatalf("second Deliver: %v, want ErrStale", err)
			}
			k := key{p.Leaf, p.Epoch}
			if p.Seq != nextSeq[k] {
				rt.Fatalf("leaf %d epoch %d delivered page %d, want %d", p.Leaf, p.Epoch, p.Seq, nextSeq[k])
			}
			switch {
			case del.Restarted:
				forwarded[p.Leaf] = hedging.Continuation{}
			case del.OK:
				nextSeq[k]++
				cont := out.Result.Page.Continuation
				if !cont.Cold() && !strings.HasSuffix(cont.Token, "/"+string(out.Region)) {
					rt.Fatalf("returned continuation %q not issued by the winning region %s", cont.Token, out.Region)
				}
				if cont.IssuedBy == "" && !cont.Cold() {
					cont.IssuedBy = out.Region
				}
				forwarded[p.Leaf] = cont
			}
		}
		if len(srv.violations) > 0 {
			rt.Fatalf("region-affine continuations resumed elsewhere: %v", srv.violations)
		}
		if cfg.Gate != nil && (cfg.Gate.InUse() != 0 || cfg.Gate.Peak() > gateCap) {
			rt.Fatalf("gate in use %d, peak %d (cap %d) at the end", cfg.Gate.InUse(), cfg.Gate.Peak(), gateCap)
		}
		if d.Err() == nil {
			for i, l := range leaves {
				last := 0
				for k := range nextSeq {
					if k.leaf == i {
						last = max(last, k.epoch)
					}
				}
				if n := nextSeq[key{i, last}]; n != srv.pages[l.Partition] {
					rt.Fatalf("leaf %d epoch %d read %d of %d pages", i, last, n, srv.pages[l.Partition])
				}
			}
		}
	})
}
