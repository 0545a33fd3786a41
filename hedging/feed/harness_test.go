package feed_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

var (
	regions3 = []hedging.Endpoint{{Region: "West", Key: "w"}, {Region: "East", Key: "e"}, {Region: "North", Key: "n"}}
	regions2 = regions3[:2]
)

// newClient returns a Phase 2 client with a 50 ms threshold, the given
// regions, breaker threshold (0 = default) and environment.
func newClient(t interface {
	Helper()
	Fatal(...any)
}, regions []hedging.Endpoint, breaker int, env map[string]string) *hedging.Client {
	t.Helper()
	ec, err := hedging.LoadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	c, err := hedging.NewClient(hedging.Config{
		Regions:                      regions,
		Strategy:                     hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(50 * time.Millisecond))),
		Phase:                        hedging.Phase2,
		Env:                          ec,
		ConsecutiveHedgeWinThreshold: breaker,
		HedgeWinMinSpan:              -1, // the spec's count-only rule: pages are milliseconds apart
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// answerFunc answers one attempt: after how long, with what.
type answerFunc func(a hedging.Attempt, op *hedging.Operation) (time.Duration, hedging.Result)

// raceRun is one page race run to completion by runRace.
type raceRun struct {
	race     *hedging.Race
	end      time.Duration
	maxLegs  int               // most legs in flight at once
	attempts []hedging.Attempt // every attempt sent
}

// runRace runs op's race from now to its end through the race core, as a
// tiny discrete-event driver: responses before timers at one instant, and
// of two responses the one Leg.WinsTie puts first (the project's tie rule).
func runRace(c *hedging.Client, now time.Duration, op *hedging.Operation, answer answerFunc) raceRun {
	type event struct {
		at    time.Duration
		resp  bool
		a     hedging.Attempt
		res   hedging.Result
		timer hedging.TimerKind
	}
	var (
		run     = raceRun{race: new(hedging.Race)}
		pending []event
		inFl    [2]bool
	)
	var e hedging.Effects // reused by every call into the race
	perform := func() {
		for i := range e.Len() {
			act := e.At(i)
			switch act.Kind {
			case hedging.ActSend:
				lat, res := answer(act.Attempt, op)
				run.attempts = append(run.attempts, act.Attempt)
				pending = append(pending, event{at: now + lat, resp: true, a: act.Attempt, res: res})
				inFl[act.Leg] = true
			case hedging.ActCancel:
				pending = slices.DeleteFunc(pending, func(ev event) bool { return ev.resp && ev.a.Leg == act.Leg })
				inFl[act.Leg] = false
			case hedging.ActTimer:
				pending = append(pending, event{at: act.At, timer: act.Timer})
			}
		}
		n := 0
		for _, b := range inFl {
			if b {
				n++
			}
		}
		run.maxLegs = max(run.maxLegs, n)
	}
	c.Begin(&e, run.race, now, op)
	perform()
	for !run.race.Done() && len(pending) > 0 {
		best := 0
		for i, ev := range pending {
			b := pending[best]
			if ev.at < b.at || ev.at == b.at && (ev.resp && !b.resp || ev.resp && b.resp && ev.a.Leg.WinsTie(b.a.Leg)) {
				best = i
			}
		}
		ev := pending[best]
		pending = slices.Delete(pending, best, best+1)
		now = ev.at
		if ev.resp {
			inFl[ev.a.Leg] = false
			run.race.Responded(&e, now, &ev.a, &ev.res)
			perform()
		} else {
			run.race.TimerFired(&e, now, ev.timer)
			perform()
		}
	}
	run.end = now
	return run
}

// feedServer answers the pages of scripted leaves: partition p has pages[p]
// pages; the token after page n of p served by region R is "p/n+1/R". It
// records any region-affine token resumed outside its issuing region (a
// violation, answered 400).
type feedServer struct {
	pages      map[string]int
	affinity   hedging.ContinuationAffinity
	latency    func(a hedging.Attempt, op *hedging.Operation) time.Duration
	status     func(a hedging.Attempt, op *hedging.Operation) hedging.Status
	violations []string
	// resuming: the page being raced resumes its chain after its pinned
	// region failed, so its region-affine token may go elsewhere (served
	// as if portable there, as the SDKs' failover assumes).
	resuming bool
}

// pageOf returns the page index a continuation resumes at.
func pageOf(c hedging.Continuation) int {
	if c.Cold() {
		return 0
	}
	n, _ := strconv.Atoi(strings.Split(c.Token, "/")[1])
	return n
}

func (s *feedServer) answer(a hedging.Attempt, op *hedging.Operation) (time.Duration, hedging.Result) {
	lat := 10 * time.Millisecond
	if s.latency != nil {
		lat = s.latency(a, op)
	}
	region := a.Endpoint.Region
	if c := op.Continuation; c.Affinity == hedging.RegionAffine && !c.Cold() && region != c.IssuedBy && !s.resuming {
		s.violations = append(s.violations, fmt.Sprintf("%s resumed in %s", c.Token, region))
		return lat, hedging.Result{Status: hedging.Status{Code: 400}}
	}
	st := hedging.Status{Code: 200}
	if s.status != nil {
		st = s.status(a, op)
	}
	res := hedging.Result{Status: st, Page: &hedging.PageInfo{ServedBy: region}, RequestCharge: 2.8}
	if next := pageOf(op.Continuation) + 1; next < s.pages[op.Partition] {
		res.Page.Continuation = hedging.Continuation{Token: fmt.Sprintf("%s/%d/%s", op.Partition, next, region), Affinity: s.affinity, IssuedBy: region}
	}
	return lat, res
}

// slowIn returns a latency function: ms in the listed regions, 10 ms
// elsewhere.
func slowIn(ms int, regions ...hedging.Region) func(hedging.Attempt, *hedging.Operation) time.Duration {
	return func(a hedging.Attempt, _ *hedging.Operation) time.Duration {
		if slices.Contains(regions, a.Endpoint.Region) {
			return time.Duration(ms) * time.Millisecond
		}
		return 10 * time.Millisecond
	}
}

// drive runs d to the end page by page (one page race at a time, in the
// order Next gives them) and returns the deliveries and each page's run.
func drive(t *testing.T, c *hedging.Client, d *feed.Driver, answer answerFunc) ([]feed.Delivery, []raceRun) {
	t.Helper()
	var (
		now  time.Duration
		dels []feed.Delivery
		runs []raceRun
	)
	for steps := 0; !d.Done(); steps++ {
		if steps > 1000 {
			t.Fatal("driver did not finish in 1000 pages")
		}
		p, ok := d.Next(now)
		if !ok {
			t.Fatal("driver not done but offers no page and has none in flight")
		}
		run := runRace(c, now, &p.Op, answer)
		now = run.end
		del, err := d.Deliver(now, p, feed.FromRace(run.race))
		if err != nil {
			t.Fatal(err)
		}
		dels, runs = append(dels, del), append(runs, run)
	}
	return dels, runs
}
