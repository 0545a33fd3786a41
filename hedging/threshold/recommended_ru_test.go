package threshold

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"hedgelab/hedging"
)

// Twelve fleet instances, each a fresh policy that sees ~400 reads in
// 30 s, hedging to an alternate that never answers first: the primary
// answers as a lognormal body (median 1.3 ms, p99 10 ms) with a slow
// replica behind 2% of reads (10-20 ms) and 0.3% at 330-1000 ms; the
// alternate is 222 ms away, so nearly every hedge's leg is cancelled by
// the primary and no instance hears from the alternate. The prior (the
// primary's faster half, shifted by its median) prices it a few ms
// away, and the slow replica makes a low threshold look as if it pays
// (population seed 1796189285, member 56: ~300 hedges in three
// replications, none won). Unheard, the alternate is hedged only by the
// probe budget and the backstop.
func TestUnheardAlternateIsNotHedgedOnThePrior(t *testing.T) {
	const instances, n, far = 12, 400, 222 * time.Millisecond
	rng := rand.New(rand.NewPCG(56, 1796189285))
	hedged, won := 0, 0
	for range instances {
		p, err := NewRecommended(RecommendedConfig{})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Duration(0)
		for range n {
			ms := 1.3 * math.Exp(0.886*rng.NormFloat64())
			switch u := rng.Float64(); {
			case u < 0.003:
				ms = 330 + 670*rng.Float64()
			case u < 0.023:
				ms = 10 + 10*rng.Float64()
			}
			pl := dur(ms)
			h, w := playRead(p, now, pl, far)
			hedged, won = hedged+h, won+w
			now += 75 * time.Millisecond
		}
	}
	t.Logf("hedged %d, won %d", hedged, won)
	// What can win: the 0.3% slow mode (~14 reads); the probe budget, one
	// in Probe operations (48), of which only those whose primary outlasts
	// the probe's threshold send a hedge.
	if budget := instances*n/100 + 2*won; hedged > budget {
		t.Errorf("%d instances hedged %d of %d reads, %d won; want at most %d (the probe budget and twice the wins)", instances, hedged, instances*n, won, budget)
	}
}

// The rule's other side: an alternate that has answered is priced by its
// answers, and a threshold that pays is chosen as before.
func TestHeardAlternateIsHedged(t *testing.T) {
	p, err := NewRecommended(RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	hedged, won := 0, 0
	now := time.Duration(0)
	const n = 6000
	for i := range n {
		pl := time.Millisecond + time.Duration(i*7919%3000)*time.Microsecond
		if i%50 == 3 {
			pl = 60*time.Millisecond + time.Duration(i%5)*time.Millisecond
		}
		al := 2 * time.Millisecond // a near alternate
		h, w := playRead(p, now, pl, al)
		hedged, won = hedged+h, won+w
		now += 10 * time.Millisecond
	}
	// The slow mode is 2% of reads; a threshold below it rescues most.
	if won < n/100 {
		t.Errorf("%d of %d hedges won where 2%% of reads are 60 ms and the alternate answers in 2 ms; want at least %d", won, hedged, n/100)
	}
}

// event is one step of coldBurst's little race loop.
type event struct {
	at   time.Duration
	op   int
	kind int // 0: start, 1: alternate sent, 2: ended
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if e[i].at != e[j].at {
		return e[i].at < e[j].at
	}
	return e[i].op < e[j].op
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// coldBurst drives a fresh key with n reads arriving every gap under a
// 64 ms operation timeout; every primary is slower than the deadline
// (cancelled by it) and every alternate is cut off by it (95 ms or more
// away), as the race reports them: AlternateSent when the threshold
// fires, OperationEnded at the deadline. It returns the hedges sent.
func coldBurst(t *testing.T, n int, gap time.Duration) int {
	t.Helper()
	p, err := NewRecommended(RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 64 * time.Millisecond
	ths := make([]time.Duration, n)
	starts := make([]time.Duration, n)
	var q events
	for i := range n {
		starts[i] = time.Duration(i) * gap
		heap.Push(&q, event{at: starts[i], op: i})
	}
	sent := 0
	for q.Len() > 0 {
		e := heap.Pop(&q).(event)
		switch e.kind {
		case 0:
			th, ok := p.Threshold(e.at, hedging.ThresholdQuery{Primary: "A", Alternate: "B", Kind: hedging.PointRead, Remaining: deadline})
			ths[e.op] = -1
			if ok && th.Get() < deadline {
				ths[e.op] = th.Get()
				heap.Push(&q, event{at: e.at + th.Get(), op: e.op, kind: 1})
			}
			heap.Push(&q, event{at: e.at + deadline, op: e.op, kind: 2})
		case 1:
			sent++
			p.Observe(e.at, hedging.Observation{Event: hedging.AlternateSent, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Cause: hedging.SpawnThreshold})
		case 2:
			o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Latency: deadline}
			o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegCancelled, Elapsed: deadline}
			if ths[e.op] >= 0 {
				o.Cause, o.Threshold = hedging.SpawnThreshold, th(ths[e.op])
				o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegCancelled, Elapsed: deadline - ths[e.op]}
			}
			p.Observe(e.at, o)
		}
	}
	return sent
}

// A cold key under a burst: reads arrive every 5 ms, each hedged at half
// the time left (32 ms) while the alternate is unknown, and none of its
// hedges can report before the deadline, 64 ms after its read's start.
// Once the first hedge is in flight, the reads that start after it are
// not hedged on the same guess: only the 7 that started before it was
// sent (0-30 ms) are. On main at ac6967e every read until the first
// hedge had ended was, 15 (population seed 1796189285, member 50:
// fourteen fleet instances, ~460 such hedges in three replications,
// none won).
func TestColdKeyHasOneBlindHedgeInFlight(t *testing.T) {
	if sent := coldBurst(t, 30, 5*time.Millisecond); sent > 7 {
		t.Errorf("a cold key sent %d hedges in a burst of 30 reads 5 ms apart, none of which could report before the next; want at most 7 (those armed before the first was sent)", sent)
	}
}

// priorOdds is the prior's likelihood given the legs that ran unanswered:
// 1 with none (and once the alternate has answered), the product of the
// prior's survival at each leg's time, and 0 once a leg ran past the
// prior's support.
func TestPriorOdds(t *testing.T) {
	prior := func(i int) float32 { // survival 0.5 up to bin 40, 0 past it
		if i < 40 {
			return 0.5
		}
		return 0
	}
	var a recAlt
	if got := a.priorOdds(prior); got != 1 {
		t.Errorf("no legs: %v, want 1", got)
	}
	a.aC[10] = 2
	if got := a.priorOdds(prior); math.Abs(got-0.25) > 1e-9 {
		t.Errorf("two legs where the prior's survival is 0.5: %v, want 0.25", got)
	}
	a.aD[50] = 1
	if got := a.priorOdds(prior); got != 0 {
		t.Errorf("a leg cut off past the prior's support: %v, want 0", got)
	}
	a.aU[20] = 1 // heard
	if got := a.priorOdds(prior); got != 1 {
		t.Errorf("an alternate that answered: %v, want 1", got)
	}
}

// A warm key's probe under a deadline nearer than the primary's 90th
// percentile: the primary answers in 50-150 ms, its alternate has never
// answered (so one operation in Probe is a probe at ~140 ms), and each
// read has 64 ms left. On main at ac6967e the probe was halved to 32 ms
// (§5.2's half of the time left), a hedge of every probe turn slower
// than that (population seed 1796189285, member 50). A probe keeps its
// own threshold and is not sent past the time left; the floor probe
// (one probe in ten, at the primary's fastest answer, ~50 ms) still is.
func TestWarmProbeIsNotHalvedByTheDeadline(t *testing.T) {
	p, err := NewRecommended(RecommendedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Duration(0)
	halved, floor := 0, 0
	for i := range 3000 {
		pl := 50*time.Millisecond + time.Duration(i*7919%1000)*100*time.Microsecond
		th, ok := p.Threshold(now, hedging.ThresholdQuery{Primary: "A", Alternate: "B", Kind: hedging.PointRead, Remaining: 64 * time.Millisecond})
		warm := i >= 100 // the cold phase (Cold × the median, halved) is over
		if warm && ok && th.Get() == 32*time.Millisecond {
			halved++
		}
		if warm && ok && th.Get() < 64*time.Millisecond && th.Get() != 32*time.Millisecond {
			floor++
		}
		o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Latency: pl, Won: true}
		o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: pl}
		p.Observe(now+pl, o)
		now += 10 * time.Millisecond
	}
	if halved > 0 {
		t.Errorf("%d warm probes sent at half the time left (32 ms); want none", halved)
	}
	if floor == 0 {
		t.Errorf("no floor probe sent inside the deadline; want one in ten probes")
	}
}

// playRead plays one point read from region A, answering pl after it is
// sent, against alternate B, answering al after the hedge is sent, under
// p's threshold at now; it feeds p the operation's observation and counts
// the hedge sent (0 or 1) and the hedge won (0 or 1).
func playRead(p *Recommended, now, pl, al time.Duration) (hedged, won int) {
	th, ok := p.Threshold(now, hedging.ThresholdQuery{Primary: "A", Alternate: "B", Kind: hedging.PointRead})
	o := hedging.Observation{Event: hedging.OperationEnded, Primary: "A", Alternate: "B", Kind: hedging.PointRead, Latency: pl, Won: true}
	o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegAnswered, Elapsed: pl}
	if ok && th.Get() < pl {
		hedged = 1
		o.Threshold, o.Cause = th, hedging.SpawnThreshold
		if th.Get()+al < pl {
			won = 1
			o.Latency, o.Winner = th.Get()+al, hedging.Alternate
			o.Legs[hedging.Primary] = hedging.LegEnd{Region: "A", Outcome: hedging.LegCancelled, Elapsed: th.Get() + al}
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegAnswered, Elapsed: al}
		} else {
			o.Legs[hedging.Alternate] = hedging.LegEnd{Region: "B", Outcome: hedging.LegCancelled, Elapsed: pl - th.Get()}
		}
	}
	p.Observe(now+o.Latency, o)
	return hedged, won
}
