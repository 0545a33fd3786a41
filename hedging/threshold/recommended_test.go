package threshold_test

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
)

// recAsk returns p's threshold for a point read from region A to
// alternate B with remaining time left (0: no deadline).
func recAsk(p *threshold.Recommended, now, remaining time.Duration) (hedging.Threshold, bool) {
	return p.Threshold(now, hedging.ThresholdQuery{Primary: "A", Alternate: "B", Kind: hedging.PointRead, Remaining: remaining})
}

// recWorld is what one operation meets: the primary answers after pl; a
// hedge's alternate answers al after it is sent, or fails (answers only
// transient statuses) after -al when al < 0.
type recWorld func(i int) (pl, al time.Duration)

// recPlay plays one operation as the race does and reports it to p at
// its end: it returns whether it was hedged and its latency.
func recPlay(p *threshold.Recommended, now time.Duration, pl, al time.Duration) (bool, time.Duration) {
	th, ok := recAsk(p, now, 0)
	o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Won: true}
	o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: pl}
	end := pl
	hedged := ok && th.Get() < pl
	if hedged {
		t := th.Get()
		o.Threshold, o.Cause = th, hedging.SpawnThreshold
		switch {
		case al < 0:
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegFailed, Elapsed: min(-al, pl-t)}
		case t+al < pl:
			end = t + al
			o.Winner = hedging.Alternate
			o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegCancelled, Elapsed: end}
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegAnswered, Elapsed: al}
		default:
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegCancelled, Elapsed: pl - t}
		}
	}
	o.Latency = end
	p.Observe(now+end, o)
	return hedged, end
}

// recRun plays n operations of w, one every gap from start, and returns
// how many of those from index from on were hedged, and the time after
// the last.
func recRun(p *threshold.Recommended, start time.Duration, n int, gap time.Duration, w recWorld, from int) (hedged int, end time.Duration) {
	for i := range n {
		pl, al := w(i)
		if h, _ := recPlay(p, start+time.Duration(i)*gap, pl, al); h && i >= from {
			hedged++
		}
	}
	return hedged, start + time.Duration(n)*gap
}

// body returns a steady near primary's latency: 3 to 15 ms over a cycle
// of 97 operations (median ~6 ms, p99 ~15 ms).
func body(i int) time.Duration {
	x := float64(i%97) / 96
	return time.Duration((3 + 12*x*x*x) * float64(time.Millisecond))
}

// slowTenth is a primary with one read in ten 200 ms slower, and an
// alternate answering in al.
func slowTenth(al time.Duration) recWorld {
	return func(i int) (time.Duration, time.Duration) {
		if i%10 == 0 {
			return 200 * time.Millisecond, al
		}
		return body(i), al
	}
}

func newRec(t *testing.T) *threshold.Recommended {
	t.Helper()
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A fresh instance starts at the conservative prior (350 ms), and where
// the alternate is no faster than a steady primary no threshold gains:
// once it has learned the alternate it hedges at most ~1% (a far primary
// 200 ms away, every hedge loses: probes only).
func TestRecommendedDeclinesWhereNoThresholdGains(t *testing.T) {
	p := newRec(t)
	if th, ok := recAsk(p, 0, 0); !ok || th.Get() != 350*time.Millisecond {
		t.Fatalf("fresh instance: threshold %v, %v; want 350ms (the conservative prior)", th, ok)
	}
	far := func(i int) (time.Duration, time.Duration) {
		return 200*time.Millisecond + time.Duration(i%7)*time.Millisecond/10, 210 * time.Millisecond
	}
	if hedged, _ := recRun(p, 0, 20000, time.Millisecond, far, 0); hedged > 200 || hedged == 0 {
		t.Errorf("hedged %d of 20000 steady 200 ms reads, want a few probes, at most 1%%", hedged)
	}
	if _, err := threshold.NewRecommended(threshold.RecommendedConfig{Quantile: 1.5}); err == nil || err.Error() != "recommended: quantile must be in (0,1), got 1.5" {
		t.Errorf("Quantile 1.5: %v", err)
	}
}

// BenchmarkRecommendedBytesPerInstance reports the bytes one instance's
// policy allocates to learn one (primary region, operation kind) key and
// one alternate: its whole state, which does not grow afterwards.
func BenchmarkRecommendedBytesPerInstance(b *testing.B) {
	const n = 200
	ps := make([]*threshold.Recommended, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range b.N {
		for i := range ps {
			ps[i], _ = threshold.NewRecommended(threshold.RecommendedConfig{})
			recPlay(ps[i], 0, time.Millisecond, time.Millisecond)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n*b.N), "bytes/instance")
	runtime.KeepAlive(ps)
}

// A fresh key has the prior of 350 ms (the longest median round trip
// between two Azure regions), half the time left when the deadline is
// nearer (§5.2's rule on what remains), and once its alternate has answered
// in 13 ms a primary that has not answered in 363 ms (a primary slow from
// the first read, feed-metadata-latest's stale page) is hedged at twice the
// alternate's median, not after the prior again.
func TestRecommendedColdKeyEvidence(t *testing.T) {
	p := newRec(t)
	if th, ok := recAsk(p, 0, 0); !ok || th.Get() != 350*time.Millisecond {
		t.Fatalf("fresh key: threshold %v, %v; want 350ms", th, ok)
	}
	if th, ok := recAsk(p, 0, 400*time.Millisecond); !ok || th.Get() != 200*time.Millisecond {
		t.Errorf("fresh key, 400 ms left: threshold %v, %v; want 200ms (half the time left)", th, ok)
	}
	if h, _ := recPlay(p, 0, 2*time.Second, 13*time.Millisecond); !h {
		t.Fatalf("the first 2 s read was not hedged at the prior")
	}
	th, ok := recAsk(p, time.Second, 0)
	if !ok || th.Get() < 26*time.Millisecond || th.Get() > 30*time.Millisecond {
		t.Errorf("after a primary cancelled at 363 ms and an alternate answer in 13 ms: threshold %v, %v; want ~2 × 13 ms", th, ok)
	}
}

// The warm-up by time (at least 2 × the largest answer) guards the first
// estimate against survivor bias, once: a warm key that sees one read
// answer after 2 s (an explored read behind a slow leaf) keeps its
// threshold (at most the backstop, 2 × p99 ≈ 30 ms) instead of going cold
// for 4 s at Cold × the median (~45 ms).
func TestRecommendedStaysWarmAfterASlowAnswer(t *testing.T) {
	p := newRec(t)
	steady := func(i int) (time.Duration, time.Duration) { return body(i), 2 * time.Millisecond }
	_, now := recRun(p, 0, 1000, time.Millisecond, steady, 0)
	observe(p, now, "A", 2*time.Second)
	_, now = recRun(p, now, 300, time.Millisecond, steady, 0)
	if th, ok := recAsk(p, now, 0); !ok || th.Get() > 35*time.Millisecond {
		t.Errorf("threshold %v, %v after a 2 s answer; want the warm backstop, at most 35 ms", th, ok)
	}
}

// §9.3: while the client's throughput-control gate refuses, an alternate
// would take a token another operation needs. A local 429 the leg's retry
// got past is over (gate-tight-burst: holding hedges 1 s after each kept a
// chronic slow tenth unhedged); one that outlasted every retry of the leg
// (15 ms) holds hedging for as long again. A local 429 is no latency of the
// region: a key fed nothing else stays fresh.
func TestRecommendedLocalThrottleLastsAsLongAsTheGate(t *testing.T) {
	p := newRec(t)
	_, now := recRun(p, 0, 5000, time.Millisecond, slowTenth(20*time.Millisecond), 0)
	if th, ok := recAsk(p, now, 0); !ok || th.Get() > 50*time.Millisecond {
		t.Fatalf("warm key with a slow tenth: threshold %v, %v; want a hedge below 50 ms", th, ok)
	}
	throttled := func(at time.Duration, out hedging.LegOutcome) {
		p.Observe(at, hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Latency: 15 * time.Millisecond,
			Legs: [2]hedging.LegEnd{{Region: "A", Outcome: out, Elapsed: 15 * time.Millisecond, LocalThrottle: true, RetryAfter: 5 * time.Millisecond}}, Won: out == hedging.LegAnswered})
	}
	throttled(now, hedging.LegAnswered)
	if _, ok := recAsk(p, now+time.Millisecond, 0); !ok {
		t.Errorf("after a local 429 the retry got past: no hedge, want hedging")
	}
	now += time.Second
	throttled(now, hedging.LegFailed)
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{now + time.Millisecond, false}, {now + 14*time.Millisecond, false}, {now + 16*time.Millisecond, true}} {
		if _, ok := recAsk(p, c.at, 0); ok != c.want {
			t.Errorf("%v after a leg refused for 15ms: hedge %v, want %v", c.at-now, ok, c.want)
		}
	}

	q := newRec(t)
	for i := range 1000 {
		q.Observe(time.Duration(i)*time.Millisecond, hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.QueryPage,
			Legs: [2]hedging.LegEnd{{Region: "A", Outcome: hedging.LegFailed, LocalThrottle: true}}})
	}
	if th, ok := q.Threshold(3*time.Second, hedging.ThresholdQuery{Primary: "A", Alternate: "B", Kind: hedging.QueryPage}); !ok || th.Get() != 350*time.Millisecond {
		t.Errorf("a key fed only local 429s: threshold %v, %v; want the fresh key's 350ms", th, ok)
	}
}

// Errors are not latencies: an alternate that answers only 503s (in 1 ms,
// alternate-503-far-third's nearest region) has never answered, so hedges
// to it cannot win and stop, where its fast 503s read as answers made it
// look the fastest region.
func TestRecommendedAlternateThatFailsIsNotFast(t *testing.T) {
	p := newRec(t)
	hedged, _ := recRun(p, 0, 20000, time.Millisecond, slowTenth(-time.Millisecond), 10000)
	if hedged > 20 {
		t.Errorf("hedged %d of the last 10000 reads to an alternate that answers only 503s, want at most 0.2%% (probes)", hedged)
	}
}

// What was learned of an alternate ages: an alternate that was fast and
// then answers only after 500 ms is hedged to less and less, and after a
// quiet spell longer than the memory the prior and the probes, not the old
// evidence, decide.
func TestRecommendedAlternateEvidenceAges(t *testing.T) {
	p := newRec(t)
	_, now := recRun(p, 0, 20000, time.Millisecond, slowTenth(10*time.Millisecond), 0)
	if h, _ := recRun(p, now, 1000, time.Millisecond, slowTenth(10*time.Millisecond), 0); h < 90 {
		t.Fatalf("fast alternate behind a slow tenth: hedged %d of 1000, want the slow tenth", h)
	}
	// The alternate slows to 500 ms: hedges lose (the primary answers at
	// 200 ms); within two memories they have stopped.
	h, _ := recRun(p, now+time.Second, 120000, time.Millisecond, slowTenth(500*time.Millisecond), 110000)
	if h > 100 {
		t.Errorf("after two minutes of an alternate slower than the primary: hedged %d of the last 10000, want at most 1%%", h)
	}
}

// A probe budget keeps a uniform slow-down from deadlocking: every primary
// read slows by 100 ms at once (a queue), the prior borrows that slowness
// for the alternate and sees no gain, but the probes (at the primary's
// 90th percentile, still the healthy one's) find the alternate fast
// (10 ms), and hedging follows.
func TestRecommendedProbesWhenEveryReadSlows(t *testing.T) {
	p := newRec(t)
	steady := func(i int) (time.Duration, time.Duration) { return body(i), 10 * time.Millisecond }
	_, now := recRun(p, 0, 60000, time.Millisecond, steady, 0)
	slow := func(i int) (time.Duration, time.Duration) {
		return 100*time.Millisecond + body(i), 10 * time.Millisecond
	}
	if h, _ := recRun(p, now, 20000, time.Millisecond, slow, 10000); h < 9000 {
		t.Errorf("every read 100 ms slower, the alternate 10 ms: hedged %d of the last 10000, want nearly all", h)
	}
}

// Hedges must win as the estimate says: an estimate that a hedge at the
// threshold wins (its alternate answered in 10 ms) facing hedges that
// did not win — their alternates answered after the primary — stops
// hedging to that alternate (the backstop and the probes go on). The
// ledger remembers about the last 2 × MinSamples hedges, all winning
// before, and stops them once less than one of those won: within
// ~8 × MinSamples hedges.
func TestRecommendedHedgesThatDoNotWinStop(t *testing.T) {
	p := newRec(t)
	_, now := recRun(p, 0, 20000, time.Millisecond, slowTenth(10*time.Millisecond), 0)
	lost := 0
	for i := range 2000 {
		at := now + time.Duration(i)*time.Millisecond
		pl := body(i)
		if i%10 == 0 {
			pl = 200 * time.Millisecond
		}
		th, ok := recAsk(p, at, 0)
		if !ok || th.Get() >= pl {
			observe(p, at+pl, "A", pl)
			continue
		}
		lost++
		p.Observe(at+pl, hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Latency: pl,
			Cause: hedging.SpawnThreshold, Threshold: th, Won: true, Winner: hedging.Primary,
			Legs: [2]hedging.LegEnd{{Region: "A", Outcome: hedging.LegAnswered, Elapsed: pl}, {Region: "B", Outcome: hedging.LegAnswered, Elapsed: 10 * time.Millisecond}}})
	}
	if lost == 0 || lost > 160 {
		t.Errorf("%d hedges sent that did not win, want them to stop within 160 (and at least one sent)", lost)
	}
}

// With a deadline, a hedge goes out only where it can answer inside it:
// the alternate answers in ~78 ms and 100 ms are left, so the backstop
// (~30 ms) is not sent, where capping it at 22 ms hedged healthy reads
// for nothing (deadline-far-alternate); with 200 ms left it is.
func TestRecommendedHedgesOnlyInsideTheDeadline(t *testing.T) {
	p := newRec(t)
	far := func(i int) (time.Duration, time.Duration) {
		if i%10 == 0 {
			return 300 * time.Millisecond, 78 * time.Millisecond // learn the alternate
		}
		return body(i), 78 * time.Millisecond
	}
	_, now := recRun(p, 0, 5000, time.Millisecond, far, 0)
	steady := func(i int) (time.Duration, time.Duration) { return body(i), 78 * time.Millisecond }
	_, now = recRun(p, now, 30000, time.Millisecond, steady, 0)
	if _, ok := recAsk(p, now, 100*time.Millisecond); ok {
		t.Errorf("100 ms left, alternate ~78 ms: hedged, want no hedge that cannot answer in time")
	}
	if _, ok := recAsk(p, now+time.Millisecond, 200*time.Millisecond); !ok {
		t.Errorf("200 ms left: no hedge, want the backstop")
	}
}

// A slow mode whose share sits just under 1 - q (0.9% of a fan-out's
// leaves take 2 s): the attempt's p99 is in the body, but the operation's
// p99 is not. The policy judges a threshold by the band [p99, p99.5] and
// hedges the slow mode (p99 alone: no threshold gains, only the backstop
// at 2 × the p99, ~60 ms), at the cheapest threshold within MinGain of the
// best gain: below 60 ms.
func TestRecommendedSlowModeAtTheQuantile(t *testing.T) {
	p := newRec(t)
	w := func(i int) (time.Duration, time.Duration) {
		if i%111 == 55 {
			return 2 * time.Second, 80 * time.Millisecond
		}
		return body(i) + body(i/97), 80 * time.Millisecond
	}
	_, now := recRun(p, 0, 20000, 2*time.Millisecond, w, 0)
	if th, ok := recAsk(p, now, 0); !ok || th.Get() >= 60*time.Millisecond {
		t.Errorf("threshold %v, %v; want a hedge below 60 ms", th, ok)
	}
}

// lognormal returns the quantile (i%97 + 0.5)/97 of a lognormal latency
// with median 6 ms and p99 15 ms (feed-cold-metadata's pages).
func lognormal(i int) time.Duration {
	u := (float64(i%97) + 0.5) / 97
	z := math.Sqrt2 * math.Erfinv(2*u-1)
	return time.Duration(6 * math.Exp(z*math.Log(2.5)/2.326) * float64(time.Millisecond))
}

// A near, steady primary (lognormal, median 6 ms, p99 15 ms) whose
// alternate is a region farther (it answers in 14 ms, after the primary):
// before the alternate has been seen, the prior takes it to be as far
// again as the primary's median, so no threshold gains and only the
// probes go out (feed-cold-metadata's pages at ~6 a second; taking the
// alternate to be as fast as the primary's faster half hedged ~30% of
// them until the alternate was learned).
func TestRecommendedPriorKeepsTheAlternateFar(t *testing.T) {
	p := newRec(t)
	const n = 720 // 2 minutes at 6/s
	w := func(i int) (time.Duration, time.Duration) { return lognormal(i), 14 * time.Millisecond }
	if hedged, _ := recRun(p, 0, n, time.Second/6, w, 0); hedged > n/100 {
		t.Errorf("hedged %d of %d reads; want at most 1%% (probes)", hedged, n)
	}
}

// A queue that builds after hedges that mostly lost (rate-surge-10x-
// queueing): the alternate has answered often (9 to 20 ms) and been
// cancelled at 20 to 25 ms where the primary answered first, so its
// Kaplan–Meier estimate leaves a seventh of its mass past its last
// observation. That mass is the alternate's unknown, not the primary's:
// taking it in the shape of the primary's latency, which the queue then
// stretches, had the alternate's p99 follow the primary's, no threshold
// gained, and hedging stayed off while every read slowed by up to 200 ms
// (the alternate known, so no probe either).
func TestRecommendedAlternateTailDoesNotFollowTheQueue(t *testing.T) {
	p := newRec(t)
	healthy := func(i int) (time.Duration, time.Duration) { return body(i), 10 * time.Millisecond }
	_, now := recRun(p, 0, 20000, time.Millisecond, healthy, 0)
	ms := func(x int) time.Duration { return time.Duration(x) * time.Millisecond }
	for i := range 500 {
		o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Won: true,
			Cause: hedging.SpawnThreshold}
		if i < 400 { // answered: the alternate won
			al := ms(9 + i%12)
			o.Winner, o.Latency = hedging.Alternate, ms(5)+al
			o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegCancelled, Elapsed: o.Latency}
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegAnswered, Elapsed: al}
		} else { // cancelled: the primary answered first
			o.Latency = ms(45)
			o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: o.Latency}
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegCancelled, Elapsed: ms(20 + i%6)}
		}
		p.Observe(now, o)
	}
	queue := func(i int) (time.Duration, time.Duration) {
		return ms(i/200) + body(i), ms(9 + i%12) // a queue growing 5 ms a second; the alternate idle
	}
	if h, _ := recRun(p, now, 40000, time.Millisecond, queue, 30000); h < 9000 {
		t.Errorf("every read 150 to 200 ms slower, the alternate 9-20 ms: hedged %d of the last 10000, want nearly all", h)
	}
}

// A primary slow from the start (every read 2 s late, the alternate 8 ms
// away: spec §15.2 hedging_read_primary_slow) is hedged from the first
// second on. Operations overlap as in a client (one started every
// millisecond, each reported when it ends): the first hedges win and
// cancel their primaries before any primary has answered, so the primary's
// median is unknown (+Inf), and the ledger must not read 2 s wins as gains
// below MinGain of an infinite median (it stopped hedging for a memory,
// ~5 s: 4.7% of reads at 2 s, p99 2002 ms in primary-slow).
func TestRecommendedPrimarySlowFromTheStart(t *testing.T) {
	p := newRec(t)
	const pl, al = 2 * time.Second, 8 * time.Millisecond
	type ended struct {
		at time.Duration
		o  hedging.Observation
	}
	var pending []ended // in order of their end
	hedged := 0
	for i := range 10000 {
		now := time.Duration(i) * time.Millisecond
		for len(pending) > 0 && pending[0].at <= now {
			p.Observe(pending[0].at, pending[0].o)
			pending = pending[1:]
		}
		th, ok := recAsk(p, now, 0)
		o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Won: true, Latency: pl}
		o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: pl}
		if ok && th.Get()+al < pl {
			o.Threshold, o.Cause, o.Winner, o.Latency = th, hedging.SpawnThreshold, hedging.Alternate, th.Get()+al
			o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegCancelled, Elapsed: o.Latency}
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegAnswered, Elapsed: al}
			if i >= 1000 {
				hedged++
			}
		}
		e := ended{now + o.Latency, o}
		j, _ := slices.BinarySearchFunc(pending, e.at, func(x ended, at time.Duration) int { return cmp.Compare(x.at, at+1) })
		pending = slices.Insert(pending, j, e)
	}
	if hedged < 8900 {
		t.Errorf("every primary 2 s, the alternate 8 ms: hedged %d of the last 9000 operations, want nearly all", hedged)
	}
}

// An alternate whose fastest answer (its floor, 100 ms) cannot arrive
// inside the time left is not hedged to, whatever the phase: here a warm
// key whose alternate evidence is thin (probes, and §5.2's half of the
// time left, which alone would hedge at ~10 ms with 101 ms left).
func TestRecommendedNoHedgeBeyondTheAlternateFloor(t *testing.T) {
	p := newRec(t)
	rare := func(i int) (time.Duration, time.Duration) {
		if i%500 == 0 {
			return 300 * time.Millisecond, 100 * time.Millisecond // the alternate answers in 100 ms
		}
		return body(i), 100 * time.Millisecond
	}
	_, now := recRun(p, 0, 3000, time.Millisecond, rare, 0)
	for i := range 400 {
		if th, ok := recAsk(p, now+time.Duration(i)*time.Millisecond, 101*time.Millisecond); ok {
			t.Fatalf("101 ms left, the alternate's floor 100 ms: hedged at %v, want no hedge", th)
		}
	}
}

// A cold key (before MinSamples and the warm-up) whose hedges to the
// alternate got no final answer (it fails every one) spends only the
// probe budget on it, not a hedge on every primary past Cold × its
// median: one read in ten takes 200 ms here, 20 × the median.
func TestRecommendedColdKeySpendsOnlyTheProbeBudget(t *testing.T) {
	p := newRec(t)
	failing := func(i int) (time.Duration, time.Duration) {
		if i%10 == 5 {
			return 200 * time.Millisecond, -5 * time.Millisecond
		}
		return body(i), -5 * time.Millisecond
	}
	// Operations overlap as in a client: each reported when it ends.
	hedged := 0
	for i := range 400 {
		pl, al := failing(i)
		if h, _ := recPlay(p, time.Duration(i)*time.Millisecond, pl, al); h {
			hedged++
		}
	}
	if hedged > 10 {
		t.Errorf("a cold key, the alternate failing every hedge: hedged %d of 400 (%d slow), want at most the probes", hedged, 40)
	}
}

// farAlternateTenth is a primary with one read in ten at 60 ms and an
// alternate 270 ms away (Japan East to Brazil South): no hedge can win,
// every alternate is cancelled before it answers, and the prior (an
// alternate as far again as the primary's median) keeps expecting wins.
func farAlternateTenth(i int) (time.Duration, time.Duration) {
	if i%10 == 0 {
		return 60 * time.Millisecond, 270 * time.Millisecond
	}
	return body(i), 270 * time.Millisecond
}

// Every hedge the policy sends past the probe budget is held to account:
// where none wins (m27, m33 of the population at seed 1796178436: 2.1% of
// reads hedged, none won, +2.4 RU points over disabled), hedges stop at
// whatever threshold sent them — the chosen one, which moves between a
// hedge's send and its end, or the backstop — and only probes go on.
func TestRecommendedLedgerHoldsEveryHedge(t *testing.T) {
	p := newRec(t)
	_, now := recRun(p, 0, 5000, time.Millisecond, farAlternateTenth, 0)
	const n = 30000
	hedged, _ := recRun(p, now, n, time.Millisecond, func(i int) (time.Duration, time.Duration) { return farAlternateTenth(i + 5000) }, 0)
	// The probe budget: at most one operation in Probe (100) carries a probe.
	if budget := n / 100; hedged > budget {
		t.Errorf("hedged %d of %d reads where no hedge wins, want at most the probe budget %d", hedged, n, budget)
	}
}

// The backstop is held to account too: a primary with one read in fifty
// at 100 ms (past the backstop, twice the p99) and an alternate 270 ms
// away, so every hedge loses; once the ledger holds MinSamples of them,
// hedges stop but for probes (they went on at the backstop, 2% of reads).
func TestRecommendedBackstopThatDoesNotWinStops(t *testing.T) {
	p := newRec(t)
	w := func(i int) (time.Duration, time.Duration) {
		if i%50 == 0 {
			return 100 * time.Millisecond, 270 * time.Millisecond
		}
		return body(i), 270 * time.Millisecond
	}
	_, now := recRun(p, 0, 10000, time.Millisecond, w, 0)
	const n = 40000
	hedged, _ := recRun(p, now, n, time.Millisecond, func(i int) (time.Duration, time.Duration) { return w(i + 10000) }, 0)
	if budget := n / 100; hedged > budget {
		t.Errorf("hedged %d of %d reads where no hedge wins, want at most the probe budget %d", hedged, n, budget)
	}
}
