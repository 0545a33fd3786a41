package threshold

import (
	"cmp"
	"fmt"
	"math"
	"sync"
	"time"

	"hedgelab/hedging"
)

// RecommendedConfig configures [Recommended]. The zero value is the
// recommended configuration; zero fields take the defaults noted on each,
// and each default says where its value comes from.
type RecommendedConfig struct {
	// Quantile is the latency quantile the policy minimises; default 0.99
	// (the spec's p99 threshold, §3.4).
	Quantile float64
	// HedgeCost is what hedging every operation must buy, as a fraction of
	// the unhedged quantile: a threshold hedging a fraction h of operations
	// is chosen only if it lowers the quantile by more than HedgeCost × h
	// of it. Default 0.5: hedging everything (twice the RU) must at least
	// halve the quantile's excess, a hedge paying for itself at half its
	// price in RU; in [0, 10].
	HedgeCost float64
	// MinGain is the smallest relative gain in the quantile worth hedging
	// for, and the smallest expected saving per hedge (as a fraction of the
	// unhedged quantile) that keeps hedges going to an alternate; default
	// 0.05 (5%: below the scorecard's 10% gain, above the ~1% noise of a
	// histogram bin); in [0, 1).
	MinGain float64
	// MaxHedgeRate caps the fraction of operations the chosen threshold
	// may hedge, in (0, 1]; default 1. Set it to a hedge budget's ratio so
	// the threshold fits the budget instead of the budget refusing
	// hedges at random.
	MaxHedgeRate float64
	// Warmup is the least time after a key's first observation before it
	// hedges; it is also at least 2 × the largest latency seen, so the
	// first estimate is not of the fastest operations only (warm-up by
	// time, not by arrival count). Default 50 ms (a few round trips
	// within a region).
	Warmup time.Duration
	// MinSamples is the decayed observation weight a key needs before it
	// hedges, and the weight of alternate evidence below which the prior
	// stands in for it and probes are sent; default 20 (the fewest answers
	// whose median is within a bin or two of the truth).
	MinSamples float64
	// TargetSamples, MinMemory and MaxMemory set how fast the primary's
	// old observations fade: their weight decays with time constant
	// TargetSamples / rate, clamped to [MinMemory, MaxMemory]. Defaults
	// 2000 (10 observations beyond the band's top quantile, p99.5), 5 s
	// (20 Refresh periods), 60 s (the sliding window of TPS §4.2). The
	// alternate's evidence and the hedge ledger fade with MaxMemory: they
	// come only from hedges, which are rare.
	TargetSamples        float64
	MinMemory, MaxMemory time.Duration
	// Refresh is how often a key's threshold is recomputed; default 250 ms
	// (a quarter of TPS §4.2's 1 s refresh: a slow-down shows within it).
	Refresh time.Duration
	// Explore is the period, in operations of a key, of an operation sent
	// without a hedge while hedging is on, so the primary's latency beyond
	// the threshold stays observed; default 200 (0.5%, half the share the
	// p99 leaves beyond it). Negative: never.
	Explore int
	// Max is the largest threshold; default 4 s (TPS §4.2's clamp).
	Max time.Duration
	// Backstop is the threshold, as a multiple of the unhedged quantile,
	// used while no threshold pays; default 2 (beyond p99.99 of a
	// lognormal body whose p99 is 3 × its median, so it hedges almost
	// nothing but catches a sudden slow-down); >= 1.
	Backstop float64
	// Cold is the threshold, as a multiple of the median primary latency
	// observed so far, before Warmup and MinSamples; default 10 (a
	// lognormal body's p99.99 is under 10 × its median for p99/p50 up to
	// 4); >= 1.
	Cold float64
	// Initial is the threshold before a key's first answered primary (and
	// while most of its primaries were cancelled); default 350 ms, just
	// above the longest median round trip between two Azure regions (344
	// ms): a conservative prior, under which a healthy primary anywhere
	// answers first, and after which a primary slow from the start is
	// hedged. With a deadline and no alternate evidence, an operation's
	// threshold is at most half the time left (§5.2's rule, on what
	// remains).
	Initial time.Duration
	// Probe is the period, in operations of a key, of an operation hedged
	// at the primary's 90th percentile while fewer than MinSamples of the
	// alternate's answers are in its evidence, and one in ten of those at
	// the primary region's floor (the probe budget: at most 1/Probe of
	// operations carry a probe; about a tenth of the 90th-percentile ones,
	// and nearly every floor one, send a hedge: ~0.2% of operations), so an
	// alternate is observed even when every primary read slows together
	// and the prior sees no gain; default 100 (1%, the share the p99
	// leaves). Negative: never.
	Probe int
}

func (c *RecommendedConfig) setDefaults() {
	c.Quantile = cmp.Or(c.Quantile, 0.99)
	c.HedgeCost = cmp.Or(c.HedgeCost, 0.5)
	c.MinGain = cmp.Or(c.MinGain, 0.05)
	c.MaxHedgeRate = cmp.Or(c.MaxHedgeRate, 1)
	c.Warmup = cmp.Or(c.Warmup, 50*time.Millisecond)
	c.MinSamples = cmp.Or(c.MinSamples, 20)
	c.TargetSamples = cmp.Or(c.TargetSamples, 2000)
	c.MinMemory = cmp.Or(c.MinMemory, 5*time.Second)
	c.MaxMemory = cmp.Or(c.MaxMemory, 60*time.Second)
	c.Refresh = cmp.Or(c.Refresh, 250*time.Millisecond)
	c.Explore = cmp.Or(c.Explore, 200)
	c.Max = cmp.Or(c.Max, 4000*time.Millisecond)
	c.Backstop = cmp.Or(c.Backstop, 2)
	c.Cold = cmp.Or(c.Cold, 10)
	c.Probe = cmp.Or(c.Probe, 100)
	c.Initial = cmp.Or(c.Initial, recInitial)
}

// Validate reports the first impossible setting after defaults, naming the
// field ("recommended: quantile must be in (0,1), got 1.5").
func (c RecommendedConfig) Validate() error {
	c.setDefaults()
	bad := func(f string, v any, want string) error {
		return fmt.Errorf("recommended: %s must be %s, got %v", f, want, v)
	}
	switch {
	case !(c.Quantile > 0 && c.Quantile < 1):
		return bad("quantile", c.Quantile, "in (0,1)")
	case !(c.HedgeCost >= 0 && c.HedgeCost <= 10):
		return bad("hedge cost", c.HedgeCost, "in [0, 10]")
	case !(c.MinGain >= 0 && c.MinGain < 1):
		return bad("min gain", c.MinGain, "in [0, 1)")
	case !(c.MaxHedgeRate > 0 && c.MaxHedgeRate <= 1):
		return bad("max hedge rate", c.MaxHedgeRate, "in (0, 1]")
	case c.Warmup < 0:
		return bad("warmup", c.Warmup, ">= 0")
	case !(c.MinSamples >= 1 && c.MinSamples <= 1e6):
		return bad("min samples", c.MinSamples, "in [1, 1e6]")
	case !(c.TargetSamples >= 1 && c.TargetSamples <= 1e9):
		return bad("target samples", c.TargetSamples, "in [1, 1e9]")
	case c.MinMemory <= 0 || c.MaxMemory < c.MinMemory:
		return fmt.Errorf("recommended: memory must satisfy 0 < min (%v) <= max (%v)", c.MinMemory, c.MaxMemory)
	case c.Refresh <= 0:
		return bad("refresh", c.Refresh, "> 0")
	case c.Max <= 0:
		return bad("max", c.Max, "> 0")
	case c.Initial <= 0:
		return bad("initial", c.Initial, "> 0")
	case !(c.Backstop >= 1 && c.Backstop <= 1000):
		return bad("backstop", c.Backstop, "in [1, 1000]")
	case !(c.Cold >= 1 && c.Cold <= 1000):
		return bad("cold", c.Cold, "in [1, 1000]")
	}
	return nil
}

// recInitial is the default [RecommendedConfig.Initial]: just above the
// longest median round trip between two Azure regions (344 ms, Brazil South
// to Indonesia Central, ../shared/data/azure_rtt_p50_ms_2026-07.csv), so a
// healthy primary anywhere answers a fresh key's first operations before
// it, and a primary slow from the start is hedged after it.
const recInitial = 350 * time.Millisecond

// recKey is what the policy learns a primary under: a primary region and
// an operation kind.
type recKey struct {
	primary hedging.Region
	kind    hedging.OperationKind
}

// recState is one key's evidence of its primary — decayed weights of its
// answered and cancelled attempt latencies — and its alternates. Its size
// is fixed but for one recAlt per alternate region (bounded by the
// regions).
type recState struct {
	pU, pC         recHist
	first, decayed time.Duration
	maxMs          float64 // largest answered primary latency
	rate           float64 // smoothed primary observations per second
	since          float64 // primary observations since the last decay
	warmed         bool    // the warm-up by time has ended once
	ops            int     // operations asked for, for Explore and Probe
	deadline       time.Duration
	region         *recRegion // the primary region's shared evidence
	alts           []*recAlt
	survP          recHist  // scratch: the primary's survival, after decide
	fails          recFails // the primary's failure times (recommended_errors.go)
}

// recAlt is what a key knows of one alternate region: the alternate
// leg's answer times (answered, cancelled, and failed legs as never
// answering), the hedge ledger (decayed hedges sent at the threshold, how
// many won, and their expected saving), and the decision made from them.
type recAlt struct {
	region hedging.Region
	aU, aC recHist
	// aD holds the elapsed times of the legs the deadline cut off (also
	// in aU's never-answered bin), aged as aU: how long each ran
	// unanswered, which priorOdds holds the prior to (recommended_ru.go).
	aD recHist
	// inFlight is the number of this key's threshold hedges to the
	// alternate sent and not yet ended (blind, recommended_ru.go).
	inFlight int
	// failed is the decayed weight of the alternate legs that failed on
	// transient answers (not a local throttle), aged as aU: the share of
	// aU's never-answered bin that is the region failing, not the
	// deadline cutting a slow leg off.
	failed float64
	// finalErr is the decayed weight of the alternate legs whose final
	// response was an error ([hedging.LegEnd] FinalError), aged as aU and
	// counted in failed too (recommended_errors.go).
	finalErr float64
	// aE holds the elapsed times of those final errors, aged as aU.
	aE      recHist
	decayed time.Duration
	// The ledger: decayed hedges sent at the threshold, how many won, how
	// many the estimate expected to win, and the wins' expected saving
	// (ms, summed).
	hedges, wins, expWins, gain float64
	nextCalc                    time.Duration
	hedge                       bool          // t applies (the chosen threshold or the backstop)
	pays                        bool          // t is a threshold chosen because it pays
	vetoUntil                   time.Duration // the ledger's veto stands until then (recommended_veto.go)
	vetoCap                     float64       // the veto's hedge-rate cap (0: the chosen threshold is stopped)
	span, lastHedge             time.Duration // the ledger's evidence span and its last hedge
	heldT, heldUntil            time.Duration // the last threshold whose hedges paid, held until then
	t, probeT, altMed           time.Duration // probeT > 0: the alternate's evidence is thin
	floorT                      time.Duration // the floor probe's threshold (with probeT)
	survA                       recHist       // scratch

	// sentMs is the ledger's mean hedge threshold (ms), weighted as its
	// counts are (provenT, recommended_ru_hold.go).
	sentMs float64
}

// Recommended is the threshold policy notebook 01 recommends (scenario type
// "recommended"; hedgelab's proposal for spec §17 Q11), designed from what
// a hedge is for: send the alternate only when it is expected to answer
// sooner, inside the deadline, and only as much as it pays. It learns
// from the race's [hedging.Observation]s of ended operations only: a leg's
// final response is a latency, a cancelled leg a lower bound of one, and a
// transient answer or a local throttle no latency at all; an alternate's
// final error is a failed leg, and the hedge it ends no win.
//
// Per (primary region, operation kind) it keeps the primary's latency P,
// and per alternate region the alternate leg's answer time A (a leg that
// failed counts as never answering, unless only a local throttle stopped
// it, and so does an alternate cancelled by the deadline), as
// time-decayed histograms read as Kaplan–Meier estimates over answered and
// cancelled attempts; a cancelled primary is a hedge that won, a cancelled
// alternate one that lost. Each Refresh, per alternate, [Recommended.decide]
// runs its phases:
//
//  1. age: the primary's evidence fades with memory TargetSamples/rate
//     (within [MinMemory, MaxMemory]); the alternate's and the hedge
//     ledger with MaxMemory, so what was learned of an alternate does not
//     stand for ever.
//  2. cold: until MinSamples primary observations and Warmup, a fresh key
//     hedges at Initial (350 ms) until a primary answers, then at Cold ×
//     the median, or twice the alternate's median once the alternate has
//     answered in under half the primary's. Below Initial, once hedges
//     have gone to the alternate and none got a final answer, only the
//     probe budget hedges, until the alternate answers.
//  3. estimate: until MinSamples of alternate evidence, A is borrowed: the
//     faster half of P shifted by how much farther the alternate is (the
//     difference of the pair's floors over every kind, or P's median while
//     the pair has no floor), and one operation in Probe is hedged at P's
//     90th percentile (the probe budget: an alternate is observed even
//     when every region slows together and the prior sees no gain), but
//     not a probe that the alternate's cancelled legs say would be
//     answered less often than the ledger's reach (probeLearns). Past
//     its last observation A takes the prior's shape only until MinSamples
//     alternates have answered, and ends there after (a queue that
//     stretches P does not stretch A). Where the alternate has never
//     answered, the prior's share is weighed by its likelihood given the
//     legs that ran unanswered (priorOdds, recommended_ru.go).
//  4. choose (not on the prior's word alone: while the alternate is
//     unheard — no leg answered, no floor for the pair — no threshold
//     pays, and the backstop and the probes stand; unheard,
//     recommended_ru.go): for each candidate threshold T, the Quantile of min(P, T +
//     A), capped at the deadline, and the hedge rate P(P > T); the T with
//     the largest relative gain over not hedging, net of HedgeCost × the
//     hedge rate, with T + A's median inside the time left. Where the
//     unhedged quantile at least doubles between Quantile and the band's
//     top, 1 - (1 - Quantile)/2 (a slow mode at the quantile's edge, the
//     deeper quantile a query's leaves see), a threshold is judged by the
//     larger of its two gains. Where none gains MinGain there and no
//     threshold whose hedges paid is held (check, below), but the
//     unhedged quantile at least doubles again by 1 - (1 - Quantile)/10
//     (a slow mode past the band, the p99.9), thresholds are judged by
//     their gain at that deeper quantile (recommended_deep.go). Where
//     the unhedged quantile is no latency — unknown (most primaries past
//     it cancelled by hedges that won), a failure, or the deadline — a
//     lower threshold replaces the one chosen when its hedged quantile is
//     lower by more than the scorecard's price of its extra hedges, 5%
//     per point of hedge rate (recommended_latency.go). Where
//     none gains MinGain, a backstop at Backstop × the unhedged quantile
//     catches a sudden slow-down; so it does where the quantile lies
//     among failures at every threshold (the estimated failed share, after
//     what a hedge rescues, at least 1 - Quantile: a failure ranks slower
//     than any answer, so no threshold moves it; recommended_ru_failed.go).
//     Failures count in error points, not
//     as latencies (recommended_errors.go): where the primary's failures
//     (transient, or a final error: [hedging.LegEnd] FinalError; not
//     those the race's failover answers) are estimated to be rescued by
//     some threshold, by more than three quarters of an error point (1%
//     of operations, the scorecard's), a threshold failing more than that
//     above the lowest reached gives way to the highest within it.
//  5. check: hedges must win and save what they cost. The ledger holds
//     every hedge a warm key sends (chosen, held, backstop and probe),
//     about the last 2 × MinSamples of them. With MinSamples of hedges in
//     it, it fails when none won where the estimate expected at least
//     two, or when their saving per hedge — the primary's expected
//     remaining time past each win, up to Max — is below MinGain × the
//     primary's median. A failed check is a veto (recommended_veto.go):
//     the ledger starts empty and, where the chosen threshold hedged more
//     than half the operations and no cap stands, the hedge rate is
//     capped at half for one memory of the primary and the threshold
//     chosen again under the cap;
//     otherwise every hedge to the alternate but the probes stops, for as
//     long as the ledger's evidence took to gather (within [Refresh,
//     memory]). Hedges the ledger cannot test — estimated to win less
//     often than recLostWins / (2 × MinSamples), 2/40 — to an alternate
//     whose legs mostly fail or that has never answered within the
//     deadline stop but for the probes (failing). A ledger that passes with at least half the wins expected
//     holds its threshold for one memory, no lower than the mean
//     threshold its hedges were sent at (recommended_ru_hold.go): where
//     choose then finds none that pays, the held threshold stands in for
//     a higher backstop.
//
// Per operation ([Recommended.Threshold]): no hedge while the client's
// throughput-control gate is refusing (§9.3: an alternate would take a
// token another operation needs) — after a leg whose every retry met a
// local 429, for as long again as it was refused; a 429 the leg's retry
// got past is already over, and the race itself sends no alternate for
// the operation that met it (§9.3 #2); one in Explore
// is not hedged, so the primary's latency past the threshold stays
// observed; with a deadline, no hedge whose threshold plus the
// alternate's median answer time does not fit in the time left, or, while
// the alternate is unknown, a threshold of at most half the time left
// (§5.2's rule on what remains) — but the backstop and the held
// threshold, insurance, and a warm key's probes keep their own value and
// are not sent at or past the time left; a cold key whose alternate is
// unheard keeps one threshold hedge in flight at a time (blind,
// recommended_ru.go); and, whatever the phase, no hedge whose
// alternate could not answer before the deadline even at its floor (its
// fastest answer in the last one to two MaxMemory/2 windows).
//
// The failure kinds it survives and those it does not are named, with
// the case that shows each, in notebook 01 (notebooks/01-q11-static-vs-p99.md).
//
// State per key is fixed, plus one alternate record per alternate region
// and a small record per primary region; keys are bounded by regions ×
// operation kinds. Safe for concurrent use; time is a parameter, never
// read from a clock.
type Recommended struct {
	cfg     RecommendedConfig
	mu      sync.Mutex
	keys    map[recKey]*recState
	regions map[hedging.Region]*recRegion
	// throttledUntil is when the client's throughput-control gate is
	// taken to stop refusing (§9.3 #2); hedging is off before it.
	throttledUntil time.Duration
}

// NewRecommended returns the policy, or the error of cfg.Validate.
func NewRecommended(cfg RecommendedConfig) (*Recommended, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Recommended{cfg: cfg, keys: make(map[recKey]*recState), regions: make(map[hedging.Region]*recRegion)}, nil
}

// Config returns the configuration with defaults applied.
func (p *Recommended) Config() RecommendedConfig { return p.cfg }

// Name returns "recommended".
func (p *Recommended) Name() string { return "recommended" }

// state returns key k's state, creating it at now; p.mu must be held.
func (p *Recommended) state(now time.Duration, k recKey) *recState {
	s := p.keys[k]
	if s == nil {
		s = &recState{first: -1, decayed: now}
		p.keys[k] = s
		r := p.regions[k.primary]
		if r == nil {
			r = &recRegion{prim: newFloor(now)}
			p.regions[k.primary] = r
		}
		s.region = r
	}
	return s
}

// alt returns s's record of alternate region a, creating it at now.
func (s *recState) alt(now time.Duration, a hedging.Region) *recAlt {
	for _, x := range s.alts {
		if x.region == a {
			return x
		}
	}
	x := &recAlt{region: a, decayed: now, nextCalc: now}
	s.alts = append(s.alts, x)
	return x
}

// Observe learns from an ended operation ([hedging.OperationEnded]; the
// other events are ignored): the primary leg's answer or cancellation
// under its key, the alternate leg's under its alternate region (a leg
// that failed as never answering), the hedge's outcome in the ledger, and
// a local throttle as a pause of hedging.
func (p *Recommended) Observe(now time.Duration, o hedging.Observation) {
	if o.Event == hedging.AlternateSent && o.Cause == hedging.SpawnThreshold {
		p.mu.Lock()
		p.state(now, recKey{o.Primary, o.Kind}).alt(now, o.Alternate).inFlight++
		p.mu.Unlock()
		return
	}
	if o.Event != hedging.OperationEnded {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, leg := range o.Legs {
		if leg.LocalThrottle && leg.Outcome == hedging.LegFailed {
			// Not a latency of the region: the attempt never left the
			// client. A refusal the leg's retry got past lasted less than
			// its backoff and is over; one that outlasted every retry has
			// been refusing for the leg's elapsed time, and an episode
			// seen that far in is expected to last about as long again.
			p.throttledUntil = max(p.throttledUntil, now+leg.Elapsed)
		}
	}
	s := p.state(now, recKey{o.Primary, o.Kind})
	w := p.cfg.MaxMemory / 2
	prim := o.Legs[hedging.Primary]
	ms := msOf
	s.fails.noteFailure(prim, o.Cause, o.Won)
	switch prim.Outcome {
	case hedging.LegAnswered:
		s.region.prim.add(now, w, ms(prim.Elapsed))
		s.pU[recBin(ms(prim.Elapsed))]++
		s.maxMs = max(s.maxMs, ms(prim.Elapsed)) // survivor bias concerns answers: the first to arrive are the fastest
	case hedging.LegCancelled:
		s.pC[recBin(ms(prim.Elapsed))]++
	case hedging.LegFailed:
		if !prim.LocalThrottle {
			// A primary that stopped on transient answers never answered the
			// operation: slower than any bin (as a failed alternate), so an
			// alternate that answers is seen to rescue it. Not its Elapsed,
			// which is no latency; a local 429 is the client's, not the
			// region's.
			s.pU[recBins-1]++
		}
	}
	if prim.Outcome == hedging.LegAnswered || prim.Outcome == hedging.LegCancelled ||
		prim.Outcome == hedging.LegFailed && !prim.LocalThrottle {
		s.since++
		if s.first < 0 {
			s.first = now
		}
	}
	alt := o.Legs[hedging.Alternate]
	if alt.Outcome == hedging.LegNotSent || alt.Region == "" {
		return
	}
	a := s.alt(now, alt.Region)
	if o.Cause == hedging.SpawnThreshold && a.inFlight > 0 {
		a.inFlight--
	}
	p.age(now, a)
	switch {
	case alt.Outcome == hedging.LegAnswered && alt.FinalError:
		// A final error is no answer of the alternate's: it fails the
		// operation it wins (recommended_errors.go), so it counts as a
		// failed leg, never answering, and not in the region's floor.
		a.aU[recBins-1]++
		a.failed++
		a.finalErr++
		a.aE[recBin(ms(alt.Elapsed))]++
	case alt.Outcome == hedging.LegAnswered:
		s.region.altFloor(now, alt.Region).add(now, w, ms(alt.Elapsed))
		a.aU[recBin(ms(alt.Elapsed))]++
	case alt.Outcome == hedging.LegCancelled:
		if !o.Won {
			// Cancelled with no winner: by the operation's deadline. It did
			// not answer in time, which is all a deadline asks: never
			// answered, not "slower than this" (a censored time the prior's
			// shape would read as a fast alternate).
			a.aU[recBins-1]++
			a.aD[recBin(ms(alt.Elapsed))]++
		} else {
			a.aC[recBin(ms(alt.Elapsed))]++
		}
	case alt.Outcome == hedging.LegFailed:
		a.aU[recBins-1]++ // never answered: slower than any bin
		if !alt.LocalThrottle {
			a.failed++
		}
	}
	// The ledger counts every hedge a warm key sent at a threshold — the
	// chosen one, the backstop's insurance and probes alike (not a cold
	// key's, sent on the prior, which the cold phase budgets) — each with
	// the estimate's probability that a hedge at its own threshold wins:
	// the chosen threshold moves between a hedge's send and its end, and
	// a ledger of only the hedges sent at today's threshold let 2.1% of
	// reads be hedged with none winning (population seed 1796178436,
	// member 27).
	if o.Cause == hedging.SpawnThreshold && s.warmed {
		w := a.winProb(s, msOf(o.Threshold.Get()))
		// It remembers about the last 2 × MinSamples hedges (twice the
		// evidence a key needs before it trusts an estimate), so it
		// answers for what hedges do now.
		g := 1 - 1/(recLedgerSpan*p.cfg.MinSamples)
		a.noteHedge(now, g)
		a.hedges, a.wins, a.expWins, a.gain = g*a.hedges, g*a.wins, g*a.expWins, g*a.gain
		a.hedges++
		a.sentMs += (msOf(o.Threshold.Get()) - a.sentMs) / a.hedges
		a.expWins += w
		if o.Won && o.Winner == hedging.Alternate && !alt.FinalError { // a final error won is no win
			a.wins++
			if prim.Outcome == hedging.LegFailed {
				// The hedge rescued an operation whose primary failed: it
				// saved what a primary that never answers would have cost,
				// counted, as residual counts the tail, up to Max.
				a.gain += max(0, msOf(p.cfg.Max)-ms(o.Latency))
			} else {
				a.gain += s.residual(ms(o.Latency), p.cfg.Max)
			}
		}
	}
}

// residual returns the primary's expected remaining time (ms) past x by
// its last survival estimate (the tail past the last bin, and past the
// largest threshold, counted at the largest threshold): what a hedge that
// won at x is expected to have saved.
func (s *recState) residual(x float64, maxT time.Duration) float64 {
	top := float64(maxT) / float64(time.Millisecond)
	sx := survAt(&s.survP, x)
	if !(sx > 0) || x >= top {
		return 0
	}
	// ∫_x^top S(u) du / S(x), on the bin grid.
	sum, lo := 0.0, x
	for i := recBin(x); i < recBins && lo < top; i++ {
		hi := min(recUpper(i), top)
		if hi > lo {
			sum += (hi - lo) * (survAt(&s.survP, lo) + survAt(&s.survP, hi)) / 2
			lo = hi
		}
	}
	return sum / sx
}

// Threshold returns the threshold of one operation and whether to hedge
// it (see [Recommended]).
func (p *Recommended) Threshold(now time.Duration, q hedging.ThresholdQuery) (hedging.Threshold, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.state(now, recKey{q.Primary, q.Kind})
	s.deadline = q.Remaining
	a := s.alt(now, q.Alternate)
	if now >= a.nextCalc {
		p.decide(now, s, a)
	}
	no := th(p.cfg.Max)
	if now < p.throttledUntil {
		return no, false // §9.3: the gate is refusing; an alternate would take a token another operation needs
	}
	s.ops++
	t, ok := a.t, a.hedge
	probing := false
	// A cold key's first operation is a probe too, so an alternate is
	// observed at once behind a primary slow from the start.
	if a.probeT > 0 && p.cfg.Probe > 0 && (s.ops%p.cfg.Probe == p.cfg.Probe/2 || !s.warmed && s.ops == 1) {
		// The alternate's evidence is thin: probe it, one probe in ten at
		// the primary's floor, unless the probe would only repeat what its
		// cancelled legs say (recommended_probe.go).
		probe := a.probeT
		if s.ops%(10*p.cfg.Probe) == p.cfg.Probe/2 {
			probe = a.floorT
		}
		if !s.warmed || p.probeLearns(s, a, probe) {
			probing = true
			t, ok = min(t, probe), true
			if !a.hedge {
				t = probe
			}
		}
	} else if p.cfg.Explore > 0 && s.ops%p.cfg.Explore == 0 {
		return no, false
	}
	if !ok || p.blind(s, a, probing) {
		return no, false
	}
	if q.Remaining > 0 {
		if a.altMed > 0 && a.probeT == 0 {
			if t+a.altMed >= q.Remaining {
				return no, false // a hedge at t cannot answer inside the deadline
			}
		} else if insurance(s, a, probing) || warmProbe(s, probing) {
			if t >= q.Remaining {
				return no, false // insurance past the deadline (recommended_insurance.go)
			}
		} else {
			t = min(t, q.Remaining/2) // the alternate unknown: §5.2's half of the time left
		}
		// Whatever the phase (cold, probe, chosen, backstop): no hedge whose
		// alternate cannot answer before the deadline even at its floor,
		// the fastest answer it gave in the last one to two MaxMemory/2
		// windows (deadline-far-alternate: hedges at ~21 ms with 20 ms
		// left all lost to the deadline).
		if fa := s.region.altFloor(now, q.Alternate).get(now, p.cfg.MaxMemory/2); !math.IsInf(fa, 1) && t+dur(fa) >= q.Remaining {
			return no, false
		}
	}
	if t <= 0 {
		return no, false
	}
	return th(t), true
}
