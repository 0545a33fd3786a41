package study

// The scorecard's rule, fourth edition (issue 25): which policies of one
// scenario lose, judged on paired replications of every hedgeable
// operation kind's p99 and p99.9.

import (
	"fmt"
	"math"
	"strings"
)

// Margins of the scorecard rule. A scored quantile at least ScoreGain
// lower (a fraction of the judged policy's) is a gain; an RU multiplier at
// least ScoreRUPoints lower (a difference of multipliers) is a saving;
// a quantile less than ScoreMinGain higher is no worse (a gain smaller than
// that does not pay for RU: the recommended policy's own MinGain); an error
// rate decidedly more than ScoreErrPoints above another policy's (a
// fraction of operations, paired by replication) loses. ScoreGain,
// ScoreRUPoints and ScoreErrPoints are the third edition's margins.
const (
	ScoreGain      = 0.10
	ScoreRUPoints  = 0.02
	ScoreMinGain   = 0.05
	ScoreErrPoints = 0.01
)

// Quantity is one latency figure of a scorecard: the quantile Q (0..1) of
// the latency of the operations of Kind (a scenario-file kind name,
// "read"; "" for every operation pooled).
type Quantity struct {
	Kind string
	Q    float64
}

// String renders "read p99", "query p99.9" or "pooled p99".
func (q Quantity) String() string {
	kind := q.Kind
	if kind == "" {
		kind = "pooled"
	}
	return kind + " p" + strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", 100*q.Q), "0"), ".")
}

// Replication is what the rule reads of one policy's run of one
// replication: Latency holds one value (ms) per scored quantity, in the
// order of [Paired.Quantities], +Inf ([Failed]) where the quantile falls
// among the kind's failed operations (a failed operation ranks slower
// than every answered one); RU is the RU multiplier and Errors the
// fraction of operations that failed. Empty marks a replication in which
// no operation arrived (left out of every comparison).
type Replication struct {
	Latency []float64
	RU      float64
	Errors  float64
	Empty   bool
}

// Failed is the Latency of a quantile that falls among failed operations:
// it is no latency, so the rule leaves every pair holding it out of that
// quantity's latency comparison and judges the failures by the error
// clause.
var Failed = math.Inf(1)

// Truth is a verdict of the rule on the replications so far: true, false,
// or not decided yet (more replications could change it).
type Truth int8

// The three truths.
const (
	False Truth = iota - 1
	Unknown
	True
)

func (t Truth) not() Truth { return -t }

func and(a, b Truth) Truth { return min(a, b) }

func or(a, b Truth) Truth { return max(a, b) }

// String renders "yes", "no" or "undecided".
func (t Truth) String() string {
	switch t {
	case True:
		return "yes"
	case False:
		return "no"
	}
	return "undecided"
}

// Paired is one scenario's replications of its policies for the rule:
// Reps[p][r] is policy p's replication r (replication r of every policy
// runs on the same seed: common random numbers, so the rule compares two
// policies on their per-replication differences, over the replications
// both have).
// Quantities are the scored quantities (every hedgeable kind's p99 and,
// where enough operations lie beyond it, p99.9).
type Paired struct {
	Quantities []Quantity
	Policies   []string
	Reps       [][]Replication
}

// Loss is one reason a policy loses a scenario: By dominates it (Why says
// on what), or By is "" and its error rate is more than ScoreErrPoints
// above that of Against (paired by replication; Why gives both and the
// difference's interval). Truth is the verdict's state.
type Loss struct {
	By, Against, Why string
	Truth            Truth
}

// Gain is the relative gain of one policy over another on one quantity:
// (mean of a − mean of b) / mean of a over their common non-empty
// replications in which neither quantile is [Failed], with a Student-t
// 95% interval from the paired differences (fewer than two such
// replications: the interval is (−Inf, +Inf), nothing is decided by it).
type Gain struct {
	Mean, Lo, Hi float64
	N            int
}

// gain returns policy b's gain over policy a on quantity j.
func (c *Paired) gain(a, b, j int) Gain {
	var d []float64
	sum := 0.0
	for r := range min(len(c.Reps[a]), len(c.Reps[b])) {
		x, y := c.Reps[a][r], c.Reps[b][r]
		if x.Empty || y.Empty || math.IsInf(x.Latency[j], 1) || math.IsInf(y.Latency[j], 1) {
			continue
		}
		d = append(d, x.Latency[j]-y.Latency[j])
		sum += x.Latency[j]
	}
	if len(d) == 0 || !(sum > 0) {
		return Gain{N: len(d)}
	}
	mean := sum / float64(len(d))
	ci := CI95(d)
	g := Gain{Mean: (ci[0] + ci[1]) / 2 / mean, Lo: ci[0] / mean, Hi: ci[1] / mean, N: len(d)}
	if len(d) < 2 {
		g.Lo, g.Hi = math.Inf(-1), math.Inf(1)
	}
	return g
}

// errGap returns policy a's error rate minus policy b's (a difference of
// fractions of operations, not relative) over the replications both have,
// with a paired Student-t 95% interval (fewer than two: (−Inf, +Inf)).
func (c *Paired) errGap(a, b int) Gain {
	return c.diff(a, b, func(r Replication) float64 { return r.Errors })
}

// ruGap returns policy b's RU multiplier minus policy a's (a difference of
// multipliers) over the replications both have, with a paired Student-t
// 95% interval (fewer than two: (−Inf, +Inf)).
func (c *Paired) ruGap(a, b int) Gain {
	return c.diff(b, a, func(r Replication) float64 { return r.RU })
}

// diff returns the mean of f(a's replication) − f(b's) over the
// replications both have (non-empty), with a paired Student-t 95%
// interval (fewer than two: (−Inf, +Inf)).
func (c *Paired) diff(a, b int, f func(Replication) float64) Gain {
	var d []float64
	for r := range min(len(c.Reps[a]), len(c.Reps[b])) {
		x, y := c.Reps[a][r], c.Reps[b][r]
		if !x.Empty && !y.Empty {
			d = append(d, f(x)-f(y))
		}
	}
	if len(d) == 0 {
		return Gain{}
	}
	ci := CI95(d)
	g := Gain{Mean: (ci[0] + ci[1]) / 2, Lo: ci[0], Hi: ci[1], N: len(d)}
	if len(d) < 2 {
		g.Lo, g.Hi = math.Inf(-1), math.Inf(1)
	}
	return g
}

// moreErrors says whether g (errGap) shows more than ScoreErrPoints more
// errors: true when its mean is above it and its interval excludes 0,
// false when the interval lies at or below it; at the last replication
// (final) an undecided one is judged by its mean.
func moreErrors(g Gain, final bool) Truth {
	switch {
	case g.Mean > ScoreErrPoints && g.Lo > 0:
		return True
	case g.Hi <= ScoreErrPoints:
		return False
	case final && g.Mean > ScoreErrPoints:
		return True
	case final:
		return False
	}
	return Unknown
}

// Gain returns policy b's [Gain] over policy a on quantity j (indexes of
// Policies and Quantities).
func (c *Paired) Gain(a, b, j int) Gain { return c.gain(a, b, j) }

// mean returns the mean of f over policy p's non-empty replications.
func (c *Paired) mean(p int, f func(Replication) float64) float64 {
	sum, n := 0.0, 0
	for _, r := range c.Reps[p] {
		if !r.Empty {
			sum += f(r)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// cheaper says whether g (ruGap) shows an RU multiplier at least
// ScoreRUPoints lower, decided as [worse] decides a loss of ScoreRUPoints
// (RU spent must be shown to buy something, so at the cap 2 points more
// on the mean is 2 points more): one definition of "decidedly past a
// margin", not two.
func cheaper(g Gain, final bool) Truth { return worse(g, ScoreRUPoints, final) }

// RU returns policy p's mean RU multiplier.
func (c *Paired) RU(p int) float64 { return c.mean(p, func(r Replication) float64 { return r.RU }) }

// Errors returns policy p's mean error rate.
func (c *Paired) Errors(p int) float64 {
	return c.mean(p, func(r Replication) float64 { return r.Errors })
}

// Latency returns policy p's mean of quantity j (ms).
func (c *Paired) Latency(p, j int) float64 {
	return c.mean(p, func(r Replication) float64 { return r.Latency[j] })
}

// faster says whether g is a decided gain of at least m: true when the
// mean is at least m and the interval excludes 0, false when the interval
// lies below m; at the last replication (final) an undecided gain is no
// gain: a loss needs evidence.
func faster(g Gain, m float64, final bool) Truth {
	switch {
	case g.Mean >= m && g.Lo > 0:
		return True
	case g.Hi < m || final:
		return False
	}
	return Unknown
}

// worse says whether g is a decided loss of at least m (the other policy
// slower by m of the judged policy's figure): true when the mean is at
// most -m and the interval excludes 0, false when the interval lies above
// -m; at the last replication (final) an undecided one is judged by its
// mean, so a gain paid for in RU must be shown, not just possible.
func worse(g Gain, m float64, final bool) Truth {
	switch {
	case g.Mean <= -m && g.Hi < 0:
		return True
	case g.Lo > -m:
		return False
	case final && g.Mean <= -m:
		return True
	case final:
		return False
	}
	return Unknown
}

// Dominates says whether policy b dominates policy a (indexes of
// Policies), and on what, by the fourth edition's rule:
//
//   - b is faster: on some scored quantity b's decided gain over a is at
//     least ScoreGain × (1 + its extra RU / ScoreRUPoints) — ScoreGain when
//     b spends no more RU, a further ScoreGain for every ScoreRUPoints more
//     it spends — and b is decidedly worse by ScoreMinGain on no other; or
//   - b is cheaper: b's RU multiplier is at least ScoreRUPoints lower
//     (paired by replication, decided as "worse" is: the mean past the
//     margin with an interval excluding 0, or at the last replication the
//     mean) and b is decidedly worse by ScoreMinGain on no scored quantity
//     (RU spent for a gain smaller than that, or one not shown, in every
//     quantile of every kind, loses).
//
// A quantile that falls among failures ([Failed]) in either policy's
// replication leaves that pair out of the quantity's comparison: it is
// the time the failures were declared, not an answer's latency.
//
// Neither clause holds when b's error rate is more than ScoreErrPoints
// above a's (paired by replication, decided as "worse" is: the interval,
// or at the last replication the mean): a failed operation under a
// quantile is in b's quantiles at the time it failed, so b's figures may
// be fast failures of operations a answered (a fault failing in 5 ms where
// a hedge answers in 100 ms), and RU that rescues operations is spent for
// a gain; the error-rate clause of [Paired.Losses] judges errors.
//
// final says the replications are the last ones: an undecided comparison
// is then settled (a gain needs its interval to exclude 0; b's being worse
// is judged by its mean).
func (c *Paired) Dominates(a, b int, final bool) (Truth, string) {
	erring := moreErrors(c.errGap(b, a), final)
	if erring == True {
		return False, ""
	}
	v, why := c.dominates(a, b, final)
	return and(v, erring.not()), why
}

// dominates is Dominates without the error-rate guard.
func (c *Paired) dominates(a, b int, final bool) (Truth, string) {
	ru := c.ruGap(a, b)
	dRU := ru.Mean
	nq := len(c.Quantities)
	gains := make([]Gain, nq)
	notWorse := make([]Truth, nq)
	for j := range nq {
		gains[j] = c.gain(a, b, j)
		notWorse[j] = worse(gains[j], ScoreMinGain, final).not()
	}
	allNotWorse := func(except int) Truth {
		t := True
		for j := range nq {
			if j != except {
				t = and(t, notWorse[j])
			}
		}
		return t
	}
	verdict, why := False, ""
	note := func(t Truth, w string) { // the strongest clause, the first of equals
		if t > verdict {
			verdict, why = t, w
		}
	}
	need := ScoreGain * (1 + max(dRU, 0)/ScoreRUPoints)
	for j, g := range gains {
		t := and(faster(g, need, final), allNotWorse(j))
		if t != False {
			note(t, fmt.Sprintf("%s %.1f%% lower [%.1f, %.1f] (needs %.0f%%) at RU %+.3f",
				c.Quantities[j], 100*g.Mean, 100*g.Lo, 100*g.Hi, 100*need, dRU))
		}
	}
	if t := and(cheaper(ru, final), allNotWorse(-1)); t != False {
		note(t, fmt.Sprintf("RU %+.3f [%+.3f, %+.3f], no scored quantile %.0f%% worse", dRU, ru.Lo, ru.Hi, 100*ScoreMinGain))
	}
	return verdict, why
}

// Losses returns why policy a (an index of Policies) loses the scenario:
// one Loss per policy that dominates it or may yet (Truth undecided),
// after an error-rate loss if any (the strongest, then largest, of a's
// paired excesses of errors over another policy by more than
// ScoreErrPoints; see moreErrors), and the verdict over them (false when
// it loses nothing). final settles undecided comparisons (see
// [Paired.Dominates]).
func (c *Paired) Losses(a int, final bool) (Truth, []Loss) {
	verdict := False
	var out []Loss
	errLoss, errGap := Loss{Truth: False}, 0.0
	for p := range c.Policies {
		if p == a {
			continue
		}
		g := c.errGap(a, p)
		t := moreErrors(g, final)
		if t == False || t < errLoss.Truth || t == errLoss.Truth && g.Mean <= errGap {
			continue
		}
		errLoss, errGap = Loss{Against: c.Policies[p], Truth: t, Why: fmt.Sprintf("errors %.2f%% vs %.2f%% (%s): %+.2f points [%.2f, %.2f]",
			100*c.Errors(a), 100*c.Errors(p), c.Policies[p], 100*g.Mean, 100*g.Lo, 100*g.Hi)}, g.Mean
	}
	if errLoss.Truth != False {
		verdict = errLoss.Truth
		out = append(out, errLoss)
	}
	for b := range c.Policies {
		if b == a {
			continue
		}
		if t, why := c.Dominates(a, b, final); t != False {
			verdict = or(verdict, t)
			out = append(out, Loss{By: c.Policies[b], Why: why, Truth: t})
		}
	}
	return verdict, out
}

// Undecided returns the policies (indexes of Policies) whose verdict is
// not decided on the replications so far, with those they are compared
// with undecidedly: the ones more replications must be added to.
func (c *Paired) Undecided() []int {
	need := make([]bool, len(c.Policies))
	for a := range c.Policies {
		t, losses := c.Losses(a, false)
		if t != Unknown {
			continue
		}
		need[a] = true
		for _, l := range losses {
			if l.Truth == Unknown {
				for b, name := range c.Policies {
					if name == l.By || name == l.Against {
						need[b] = true
					}
				}
			}
		}
	}
	var out []int
	for p, n := range need {
		if n {
			out = append(out, p)
		}
	}
	return out
}

// ScoreStart, ScoreCap and ScoreStep are the scorecard's sequential rule:
// replications start at max(ScoreStart, the scenario's replications); while
// some verdict is undecided and fewer than ScoreCap have run, ceil(n ×
// ScoreStep) more are added (3, 5, 8, 12 from the start) to the policies
// whose verdict is undecided and those they are undecidedly compared with
// ([Paired.Undecided]).
const (
	ScoreStart = 3
	ScoreCap   = 12
	ScoreStep  = 0.5
)

// NextReplications returns how many replications to have after n when a
// verdict is still undecided (n itself when n has reached ScoreCap).
func NextReplications(n int) int {
	if n >= ScoreCap {
		return n
	}
	return min(ScoreCap, n+int(math.Ceil(float64(n)*ScoreStep)))
}
