package main

// Notebook 01, fourth edition: the population section. Every roster
// policy on scenarios nobody wrote — a generated population of a scenario
// space at a fixed seed (scorecard.Population, the population of
// `hedgesim scorecard --n N --seed S`) — with each loss of the
// recommended policy named and why, and its regret to the hindsight
// frontier.

import (
	"fmt"
	"os"
	"time"

	"hedgelab/internal/scorecard"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// q11PopSeed is the population's seed, stated in the notebook: the issue's
// number (25), fixed before any population was scored, so that nobody
// chose it from the results.
const q11PopSeed = 25

// q11PopN is the population's size: small enough that notebook 01
// regenerates in a few minutes on 2 cores (the notebook states its wall
// time); `hedgesim scorecard --n 200` is the population of record.
const q11PopN = 12

// q11PopSpace returns the space the population is drawn from: the
// population space `hedgesim scorecard --n` draws from by default
// (scenarios/space/population.toml over the fuzzer's default).
var q11PopSpace = scenarios.PopulationSpace

// q11Progress reports each scored scenario and its wall time on stderr
// (not in the notebook, which stays byte-identical).
func q11Progress(c *scorecard.Card) {
	fmt.Fprintf(os.Stderr, "q11: %s (%s)\n", c.Scenario, c.Wall.Round(time.Second))
}

// q11PopView is the population section's prose view.
type q11PopView struct {
	Rec, Space    string
	Seed          uint64
	N             int
	RecRate       scorecard.Rate
	Summary       scorecard.Summary
	Fewest        []string
	FewestLost    int
	RecLost       []q11RecLoss
	Beats, Behind []string
	// Near names the scenarios where the recommended policy does not lose
	// but some loss of it was left undecided at the replication cap (a
	// verdict more replications could turn), with those comparisons.
	Near []string
	// Split is the regret rows by whether conditions change.
	Split q11Split
}

// q11Population scores the first n scenarios of the population and writes
// its section; it returns the view for the answer.
func (d *doc) q11Population(n int) (*q11PopView, error) {
	sp, err := q11PopSpace()
	if err != nil {
		return nil, err
	}
	cards, err := scorecard.Run(scorecard.Population(sp, q11PopSeed, q11Indices(n)), scorecard.Options{Parallel: d.parallel}, q11Progress)
	if err != nil {
		return nil, err
	}
	v := &q11PopView{Rec: q11RecName, Space: sp.Source, Seed: q11PopSeed, N: len(cards), Summary: scorecard.Summarize(cards)}
	v.RecRate = v.Summary.Rate(q11RecName)
	d.check(claim{"every population scenario scored every roster policy", func() error {
		for _, r := range v.Summary.Rates {
			if r.Ran != len(cards) {
				return failf("%s ran on %d of %d population scenarios", r.Policy, r.Ran, len(cards))
			}
		}
		return nil
	}})

	d.p("## The population: %d scenarios nobody wrote", len(cards))
	var tab [][]string
	v.FewestLost, v.Fewest, tab = rateTable(v.Summary.Rates)
	var rows [][]string
	for _, c := range cards {
		p := c.Policy(q11RecName)
		if p == nil {
			continue
		}
		if p.Loses {
			l := q11RecLoss{Scenario: "`" + c.Scenario + "`", Figures: headline(c, p), Why: lossText(p)}
			v.RecLost = append(v.RecLost, l)
			rows = append(rows, []string{l.Scenario, l.Figures, l.Why})
		} else if near := nearText(p); near != "" {
			v.Near = append(v.Near, "`"+c.Scenario+"` ("+near+")")
		}
	}
	d.check(claim{"the population's loss list is recommended's loss count", func() error {
		if len(v.RecLost) != v.RecRate.Lost {
			return failf("%d rows, %d losses", len(v.RecLost), v.RecRate.Lost)
		}
		return nil
	}})
	d.say("q11/pop-intro", v)
	d.table([]string{"policy", "scenarios", "lost", "loss rate [exact 95% CI]"}, tab)
	d.say("q11/pop-losses", v)
	if len(rows) > 0 {
		d.table([]string{"scenario", "recommended: headline ms / RU × / errors", "lost to (paired gain [95% CI])"}, rows)
	}

	// Regret, per scenario.
	tab = nil
	verdicts := map[string]int{}
	for _, c := range cards {
		p := c.Policy(q11RecName)
		if p == nil || c.Headline < 0 || p.Regret.N == 0 {
			continue
		}
		verdicts[c.Source] = p.RegretVerdict()
		switch verdicts[c.Source] {
		case -1:
			v.Beats = append(v.Beats, "`"+c.Scenario+"`")
		case 1:
			v.Behind = append(v.Behind, "`"+c.Scenario+"`")
		}
		tab = append(tab, []string{"`" + c.Scenario + "`", c.Quantities[c.Headline].String(), ms(p.Latency[c.Headline]) + " / " + ru(p.RU),
			fmt.Sprintf("`%s` %s ms / %s", p.Best.Policy, ms(p.Best.Ms), ru(p.Best.RU)),
			fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", 100*p.Regret.Mean, 100*p.Regret.Lo, 100*p.Regret.Hi)})
	}
	d.check(claim{"the population's regret summary counts the rows", func() error {
		if len(tab) != v.Summary.RegretN || v.Summary.Beats != len(v.Beats) || v.Summary.Behind != len(v.Behind) {
			return failf("rows %d/%d beats %d/%d behind %d/%d", len(tab), v.Summary.RegretN, len(v.Beats), v.Summary.Beats, len(v.Behind), v.Summary.Behind)
		}
		return nil
	}})
	v.Split = q11SplitOf(verdicts, q11ChangingOf(cards))
	d.say("q11/pop-regret", v)
	d.say("q11/split", v.Split)
	if len(tab) > 0 {
		d.table([]string{"scenario", "headline", "recommended ms / RU ×", "best fixed threshold at no more RU: ms / RU ×", "regret [95% CI]"}, tab)
	}
	return v, nil
}

// nearText renders the undecided reasons of a policy's losses (a verdict
// left open at the replication cap); empty when there is none.
func nearText(p *scorecard.Policy) string { return p.Reasons(study.Unknown, code) }

// q11Split counts the scenarios with a regret row by whether their
// conditions change (q11Changing) and by the regret's verdict.
type q11Split struct {
	Changing, Steady              int
	ChangingBeats, ChangingBehind int
	SteadyBeats, SteadyBehind     int
}

// q11SplitOf returns the split of the scenarios in rows (source →
// regret verdict: -1 beats, +1 behind, 0 undecided), changing[source] saying
// whether a scenario's conditions change.
func q11SplitOf(rows map[string]int, changing map[string]bool) q11Split {
	var s q11Split
	for name, verdict := range rows {
		if changing[name] {
			s.Changing++
			s.ChangingBeats += b2i(verdict < 0)
			s.ChangingBehind += b2i(verdict > 0)
		} else {
			s.Steady++
			s.SteadyBeats += b2i(verdict < 0)
			s.SteadyBehind += b2i(verdict > 0)
		}
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// q11ChangingOf returns, per scenario source (Card.Source), whether its
// conditions change during the run (Card.Changes is not empty: the one
// definition, in internal/scorecard). The regret paragraphs split the
// scenarios by it: an adaptive policy is worth its complexity where no
// single threshold fits the whole run.
func q11ChangingOf(cards []*scorecard.Card) map[string]bool {
	m := map[string]bool{}
	for _, c := range cards {
		m[c.Source] = c.Changes != ""
	}
	return m
}

// q11Indices returns 0, 1, ..., n-1: the population's first n scenarios.
func q11Indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
