package scorecard

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"hedgelab/internal/study"
)

// Run scores every scenario of src in order (Score) and calls each, when
// set, with each card as it is done. It stops at the first error.
func Run(src Source, opts Options, each func(*Card)) ([]*Card, error) {
	var cards []*Card
	for s, err := range src.Scenarios {
		if err != nil {
			return cards, err
		}
		if opts.Context != nil && opts.Context.Err() != nil {
			return cards, context.Cause(opts.Context)
		}
		c, err := Score(s, opts)
		if err != nil {
			return cards, err
		}
		cards = append(cards, c)
		if each != nil {
			each(c)
		}
	}
	return cards, nil
}

// Rate is one roster policy's loss rate over a set of scenarios: Lost of
// Ran scenarios, with the exact (Clopper–Pearson) 95% interval of the
// rate.
type Rate struct {
	Policy    string
	Lost, Ran int
	CI        [2]float64
	// Scenarios names the scenarios lost.
	Scenarios []string
}

// Summary is what a scorecard says over its scenarios.
type Summary struct {
	// Scenarios is the number scored; Capped how many were settled at the
	// replication cap with some verdict undecided.
	Scenarios, Capped int
	// Unhedgeable counts the scenarios with no operation kind the client
	// may hedge (no headline: only the RU and error rules can judge them).
	Unhedgeable int
	// Rates holds every roster policy's loss rate, in roster order.
	Rates []Rate
	// Regret is the recommended policy's median regret to the hindsight
	// frontier (relative excess of its headline quantity over the best
	// fixed threshold at no more RU) with a distribution-free 95% interval,
	// over the scenarios with a headline quantity; Beats and Behind count
	// the scenarios where its regret's interval lies below 0 (it beats
	// every fixed threshold chosen after the fact) and above 0.
	Regret        float64
	RegretCI      [2]float64
	Beats, Behind int
	RegretN       int
	// Changing is Regret, RegretCI, Beats, Behind and RegretN over the
	// scenarios whose conditions change during the run (Card.Changes):
	// where an adaptive policy has something to adapt to.
	Changing RegretSummary
	// Lost lists the scenarios the recommended policy loses, in order,
	// with why (Card.Why).
	Lost []Lost
	// Wall is the total wall time of the scenarios.
	Wall time.Duration
}

// RegretSummary is the recommended policy's median regret to the
// hindsight frontier over a set of scenarios, with its distribution-free
// 95% interval (study.MedianCI); Beats and Behind count the scenarios
// whose regret interval lies below 0 and above 0; N is the number with a
// regret (Scenarios of them in the set).
//
// Mean and MeanCI are the paired comparison over the members: each
// member's regret is already the recommended policy's relative excess
// over the best fixed threshold at no more RU (paired by replication), so
// their mean, with a Student-t 95% interval over members (study.CI95),
// answers "does it beat the best fixed threshold in hindsight at equal
// RU" for the set; SD is the members' standard deviation. Need and Need5
// are its power: the members a one-sample two-sided 5% test would need to
// tell a mean regret from 0 with 80% power at the observed mean (Need;
// +Inf when the mean is 0) and at a mean regret of 5% (Need5, PowerEffect),
// from the observed SD (0 when N < 2).
type RegretSummary struct {
	Median        float64
	CI            [2]float64
	Beats, Behind int
	N, Scenarios  int
	Mean, SD      float64
	MeanCI        [2]float64
	Need, Need5   float64
}

// PowerEffect is the mean regret RegretSummary.Need5 is stated at: the
// rule's own margin for a quantile to count as worse (study.ScoreMinGain,
// 5%), so a population can tell apart what the rule would call a loss.
const PowerEffect = study.ScoreMinGain

// Verdict says where the mean regret's interval over the members lies: -1
// below 0 (the recommended policy beats the best fixed threshold in
// hindsight at equal RU), +1 above 0 (it is behind), 0 undecided or
// nothing measured (N < 2).
func (r RegretSummary) Verdict() int {
	switch {
	case r.N < 2:
		return 0
	case r.MeanCI[1] < 0:
		return -1
	case r.MeanCI[0] > 0:
		return 1
	}
	return 0
}

// membersNeeded returns the members a two-sided 5% one-sample test needs
// for 80% power to tell a mean effect from 0 when the members' standard
// deviation is sd: ((z₀.₉₇₅ + z₀.₈)·sd/effect)², rounded up; +Inf for a
// zero effect, 0 for a zero sd or an sd that is not a number.
func membersNeeded(effect, sd float64) float64 {
	if !(sd > 0) {
		return 0
	}
	if effect == 0 {
		return math.Inf(1)
	}
	z := distuv.UnitNormal.Quantile(0.975) + distuv.UnitNormal.Quantile(0.8)
	return math.Ceil(math.Pow(z*sd/effect, 2))
}

// Lost is one scenario a policy loses and why.
type Lost struct {
	Scenario, Why, Changes string
}

// Why returns why policy name loses the scenario ("" when it does not):
// each decided reason, "<by>: <why>", joined by "; ".
func (c *Card) Why(name string) string {
	p := c.Policy(name)
	if p == nil || !p.Loses {
		return ""
	}
	return p.Reasons(study.True, nil)
}

// Reasons returns p's reasons to lose whose truth is truth (study.True:
// the decided ones; study.Unknown: those left open at the replication
// cap), each "<by>: <why>" ("<why>" alone when no one policy is the
// winner), joined by "; "; name renders the winner's name (nil: as it
// is). It is "" when there is none.
func (p *Policy) Reasons(truth study.Truth, name func(string) string) string {
	var why []string
	for _, l := range p.Losses {
		switch {
		case l.Truth != truth:
		case l.By == "":
			why = append(why, l.Why)
		case name != nil:
			why = append(why, name(l.By)+": "+l.Why)
		default:
			why = append(why, l.By+": "+l.Why)
		}
	}
	return strings.Join(why, "; ")
}

// RegretVerdict says where p's regret's 95% interval lies: -1 below 0 (p
// beats every fixed threshold chosen in hindsight), +1 above 0 (the best
// fixed threshold at no more RU beats p), 0 undecided or not computed.
func (p *Policy) RegretVerdict() int {
	switch {
	case p.Regret.N == 0:
		return 0
	case p.Regret.Hi < 0:
		return -1
	case p.Regret.Lo > 0:
		return 1
	}
	return 0
}

// regretOf summarizes the recommended policy's regret over cards.
func regretOf(cards []*Card) RegretSummary {
	var r RegretSummary
	var regrets []float64
	for _, c := range cards {
		r.Scenarios++
		if p := c.Policy(Recommended); p != nil && c.Headline >= 0 && p.Regret.N > 0 && !math.IsNaN(p.Regret.Mean) {
			regrets = append(regrets, p.Regret.Mean)
			switch p.RegretVerdict() {
			case -1:
				r.Beats++
			case 1:
				r.Behind++
			}
		}
	}
	r.N = len(regrets)
	r.Median, r.CI = study.MedianCI(regrets)
	r.Mean, r.SD, r.MeanCI = math.NaN(), math.NaN(), [2]float64{math.NaN(), math.NaN()}
	if r.N > 0 {
		r.MeanCI = study.CI95(regrets)
		r.Mean = (r.MeanCI[0] + r.MeanCI[1]) / 2
	}
	if r.N > 1 {
		ss := 0.0
		for _, x := range regrets {
			ss += (x - r.Mean) * (x - r.Mean)
		}
		r.SD = math.Sqrt(ss / float64(r.N-1))
		r.Need, r.Need5 = membersNeeded(r.Mean, r.SD), membersNeeded(PowerEffect, r.SD)
	}
	return r
}

// Summarize returns the summary of cards.
func Summarize(cards []*Card) Summary {
	var s Summary
	s.Scenarios = len(cards)
	for _, name := range RosterNames() {
		r := Rate{Policy: name}
		for _, c := range cards {
			p := c.RosterPolicy(name)
			if p == nil {
				continue
			}
			r.Ran++
			if p.Loses {
				r.Lost++
				r.Scenarios = append(r.Scenarios, c.Scenario)
			}
		}
		r.CI = study.ProportionCI(int64(r.Lost), int64(r.Ran))
		s.Rates = append(s.Rates, r)
	}
	var changing []*Card
	for _, c := range cards {
		s.Wall += c.Wall
		if !c.Decided {
			s.Capped++
		}
		if c.Headline < 0 {
			s.Unhedgeable++
		}
		if c.Changes != "" {
			changing = append(changing, c)
		}
		if p := c.Policy(Recommended); p != nil && p.Loses {
			s.Lost = append(s.Lost, Lost{Scenario: c.Scenario, Why: c.Why(Recommended), Changes: c.Changes})
		}
	}
	all := regretOf(cards)
	s.Regret, s.RegretCI, s.Beats, s.Behind, s.RegretN = all.Median, all.CI, all.Beats, all.Behind, all.N
	s.Changing = regretOf(changing)
	return s
}

// Rate returns the loss rate of roster policy name (zero when absent).
func (s Summary) Rate(name string) Rate {
	i := slices.IndexFunc(s.Rates, func(r Rate) bool { return r.Policy == name })
	if i < 0 {
		return Rate{Policy: name, CI: [2]float64{0, 1}}
	}
	return s.Rates[i]
}
