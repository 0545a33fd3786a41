package main

// Notebook 01, fourth edition: the population sections. Every roster
// policy on scenarios nobody wrote — generated populations of two scenario
// spaces at one seed (scorecard.Population, the population of
// `hedgesim scorecard [--space FILE] --n N --seed S`): the bounded space
// (scenarios/space/population.toml, the answer) and the hostile space
// (scenarios/space/hostile-population.toml, what the answer does not
// cover) — with each loss of the recommended policy named and why, its
// regret to the hindsight frontier, and the paired verdict on the members
// whose conditions change.

import (
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"hedgelab/internal/scorecard"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// q11PopSeed is the populations' default seed, stated in the notebook: the
// issue's number (25), fixed before any population was scored, so that
// nobody chose it from the results. -q11-seed sets another.
const q11PopSeed = 25

// q11PopN is the default size of each population: small enough that
// notebook 01 regenerates within a design review's wait on 2 cores (a
// member is a full scorecard, about a minute), large enough that a
// population loss rate's exact interval excludes "loses a third"; the
// notebook prints the interval, and `hedgesim scorecard --n 200` is the
// population of record. -q11-n sets another.
const q11PopN = 12

// q11HostileSpace is the hostile space's file, relative to the repository
// root (where `make notebooks` runs); a missing file skips its section.
const q11HostileSpace = "scenarios/space/hostile-population.toml"

// q11BoundedSpaceFile is the embedded population space's file, relative to
// the repository root: the notebook tables its bounds against the hostile
// space's from the two files.
const q11BoundedSpaceFile = "scenarios/space/population.toml"

// The notebook's settable sizes (flags of `go run ./cmd/notebooks`); the
// notebook's text states each value it ran with.
var (
	q11N     = flag.Int("q11-n", q11PopN, "notebook 01: members scored of each population space")
	q11Seed  = flag.Uint64("q11-seed", q11PopSeed, "notebook 01: the populations' seed")
	q11Match = flag.String("q11-scenarios", "", "notebook 01: score only the library scenarios and cases whose name matches this regexp (a small run; the notebook says so)")
)

// q11Progress reports each scored scenario and its wall time on stderr
// (not in the notebook, which stays byte-identical).
func q11Progress(c *scorecard.Card) {
	fmt.Fprintf(os.Stderr, "q11: %s (%s)\n", c.Scenario, c.Wall.Round(time.Second))
}

// q11Filter returns src restricted to the scenarios whose name matches
// pattern ("" : all of them), or the pattern's error.
func q11Filter(src scorecard.Source, pattern string) (scorecard.Source, error) {
	if pattern == "" {
		return src, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return src, fmt.Errorf("-q11-scenarios: %w", err)
	}
	return scorecard.Source{Name: src.Name + " matching " + pattern, Scenarios: func(yield func(*scenarios.Scenario, error) bool) {
		for s, err := range src.Scenarios {
			if err == nil && !re.MatchString(s.Name) {
				continue
			}
			if !yield(s, err) || err != nil {
				return
			}
		}
	}}, nil
}

// q11PopSpace is one population space the notebook scores.
type q11PopSpace struct {
	// Hostile: the space is what the answer does not cover.
	Hostile bool
	load    func() (*scenarios.Space, error)
}

// q11PopSpaces are the spaces scored, in order: the bounded space (the
// answer) and, when its file is there, the hostile one.
func q11PopSpaces() []q11PopSpace {
	out := []q11PopSpace{{load: scenarios.PopulationSpace}}
	if _, err := os.Stat(q11HostileSpace); err == nil {
		out = append(out, q11PopSpace{Hostile: true, load: func() (*scenarios.Space, error) { return scenarios.LoadSpace(q11HostileSpace) }})
	}
	return out
}

// q11PopView is a population section's prose view.
type q11PopView struct {
	Rec, Space string
	// Hostile: the space is what the answer does not cover.
	Hostile    bool
	Seed       uint64
	N          int
	RecRate    scorecard.Rate
	Summary    scorecard.Summary
	Fewest     []string
	FewestLost int
	RecLost    []q11RecLoss
	Beats      []string
	Behind     []string
	// Near names the scenarios where the recommended policy does not lose
	// but some loss of it was left undecided at the replication cap (a
	// verdict more replications could turn), with those comparisons.
	Near []string
	// Split is the regret rows by whether conditions change.
	Split q11Split
	// Changing is the paired verdict over the members whose conditions
	// change (Summary.Changing), and Power the effect its Need5 is at.
	Changing q11Verdict
}

// q11Verdict is the paired answer to "does the recommended policy beat
// the best fixed threshold in hindsight at equal RU" over a set of
// members (scorecard.RegretSummary), rendered for the prose.
type q11Verdict struct {
	// Members is the set's size; N of them have a regret.
	Members, N int
	// Verdict: "beats", "is behind" or "is not distinguishable from";
	// empty when N < 2 (no verdict).
	Verdict string
	// Mean and CI are the mean regret and its Student-t 95% interval, SD
	// the members' standard deviation, in percent ("+1.2").
	Mean, Lo, Hi, SD string
	// Need and Need5 are the members 80% power needs at the observed mean
	// and at a PowerEffect regret ("unbounded", "-" for none).
	Need, Need5 string
	Effect      float64
}

// q11VerdictOf renders r.
func q11VerdictOf(r scorecard.RegretSummary) q11Verdict {
	v := q11Verdict{Members: r.Scenarios, N: r.N, Effect: scorecard.PowerEffect}
	if r.N < 2 {
		return v
	}
	v.Verdict = "is not distinguishable from"
	switch r.Verdict() {
	case -1:
		v.Verdict = "beats"
	case 1:
		v.Verdict = "is behind"
	}
	p := func(x float64) string { return fmt.Sprintf("%+.1f", 100*x) }
	v.Mean, v.Lo, v.Hi, v.SD = p(r.Mean), p(r.MeanCI[0]), p(r.MeanCI[1]), fmt.Sprintf("%.1f", 100*r.SD)
	n := func(x float64) string {
		switch {
		case math.IsInf(x, 1):
			return "unbounded"
		case !(x > 0):
			return "-"
		}
		return fmt.Sprintf("%.0f", x)
	}
	v.Need, v.Need5 = n(r.Need), n(r.Need5)
	return v
}

// q11Populations scores every space of q11PopSpaces and writes their
// sections; it returns their views, the bounded space's first.
func (d *doc) q11Populations(n int, seed uint64) ([]*q11PopView, error) {
	var out []*q11PopView
	for _, s := range q11PopSpaces() {
		sp, err := s.load()
		if err != nil {
			return nil, err
		}
		v, err := d.q11Population(sp, s.Hostile, n, seed)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	d.q11SpaceBounds()
	return out, nil
}

// q11Population scores the first n scenarios of sp's population at seed
// and writes its section; it returns the view for the answer.
func (d *doc) q11Population(sp *scenarios.Space, hostile bool, n int, seed uint64) (*q11PopView, error) {
	cards, err := scorecard.Run(scorecard.Population(sp, seed, q11Indices(n)), scorecard.Options{Parallel: d.parallel}, q11Progress)
	if err != nil {
		return nil, err
	}
	v := &q11PopView{Rec: q11RecName, Space: sp.Source, Hostile: hostile, Seed: seed, N: len(cards), Summary: scorecard.Summarize(cards)}
	v.RecRate = v.Summary.Rate(q11RecName)
	v.Changing = q11VerdictOf(v.Summary.Changing)
	d.check(claim{"every population scenario scored every roster policy", func() error {
		for _, r := range v.Summary.Rates {
			if r.Ran != len(cards) {
				return failf("%s ran on %d of %d population scenarios of %s", r.Policy, r.Ran, len(cards), sp.Source)
			}
		}
		return nil
	}})

	if hostile {
		d.p("## The hostile space: %d scenarios the answer does not cover", len(cards))
	} else {
		d.p("## The population: %d scenarios nobody wrote", len(cards))
	}
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
			changes := c.Changes
			if changes == "" {
				changes = "steady"
			}
			rows = append(rows, []string{l.Scenario, changes, l.Figures, l.Why})
		} else if near := nearText(p); near != "" {
			v.Near = append(v.Near, "`"+c.Scenario+"` ("+near+")")
		}
	}
	d.check(claim{"the population's loss list is recommended's loss count", func() error {
		if len(v.RecLost) != v.RecRate.Lost || len(v.RecLost) != len(v.Summary.Lost) {
			return failf("%d rows, %d losses, %d in the summary", len(v.RecLost), v.RecRate.Lost, len(v.Summary.Lost))
		}
		return nil
	}})
	d.say("q11/pop-intro", v)
	d.table([]string{"policy", "scenarios", "lost", "loss rate [exact 95% CI]"}, tab)
	d.say("q11/pop-losses", v)
	if len(rows) > 0 {
		d.table([]string{"scenario", "conditions that change", "recommended: headline ms / RU × / errors", "lost to (paired gain [95% CI])"}, rows)
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
		changes := c.Changes
		if changes == "" {
			changes = "steady"
		}
		tab = append(tab, []string{"`" + c.Scenario + "`", changes, c.Quantities[c.Headline].String(), ms(p.Latency[c.Headline]) + " / " + ru(p.RU),
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
	d.check(claim{"the population's changing split counts the summary's changing members", func() error {
		if ch := v.Summary.Changing; v.Split.Changing != ch.N || v.Split.ChangingBeats != ch.Beats || v.Split.ChangingBehind != ch.Behind {
			return failf("split %+v, summary %+v", v.Split, ch)
		}
		return nil
	}})
	d.say("q11/pop-regret", v)
	d.say("q11/split", v.Split)
	d.say("q11/pop-changing", v)
	if len(tab) > 0 {
		d.table([]string{"scenario", "conditions that change", "headline", "recommended ms / RU ×", "best fixed threshold at no more RU: ms / RU ×", "regret [95% CI]"}, tab)
	}
	return v, nil
}

// q11SpaceBounds tables every key the bounded and the hostile space files
// set, side by side (a key one file leaves out is the default space's),
// from the files themselves: the modelling shortcuts the answer rests on.
// It writes nothing when either file is missing.
func (d *doc) q11SpaceBounds() {
	bounded, err1 := q11SpaceKeys(q11BoundedSpaceFile)
	hostile, err2 := q11SpaceKeys(q11HostileSpace)
	if err1 != nil || err2 != nil {
		return
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range bounded {
			if !yield(k) {
				return
			}
		}
		for k := range hostile {
			if _, ok := bounded[k]; !ok && !yield(k) {
				return
			}
		}
	})
	var tab [][]string
	for _, k := range keys {
		b, h := bounded[k], hostile[k]
		if b == h {
			continue
		}
		tab = append(tab, []string{"`" + k + "`", cmpOr(b, "default"), cmpOr(h, "default")})
	}
	d.say("q11/space-bounds", struct{ Bounded, Hostile string }{q11BoundedSpaceFile, q11HostileSpace})
	d.table([]string{"space key", "bounded (`population.toml`)", "hostile (`hostile-population.toml`)"}, tab)
}

func cmpOr(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// q11SpaceKeys returns the keys a space file sets ("section.key" → its
// value as TOML writes it).
func q11SpaceKeys(path string) (map[string]string, error) {
	var f map[string]any
	if _, err := toml.DecodeFile(path, &f); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if strings.ContainsAny(k, ". ") {
				k = `"` + k + `"`
			}
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = q11TOMLValue(v)
		}
	}
	walk("", f)
	return out, nil
}

// q11TOMLValue renders a decoded TOML value as the file writes it.
func q11TOMLValue(v any) string {
	switch x := v.(type) {
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, q11TOMLValue(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return fmt.Sprintf("%q", x)
	case float64:
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v)
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
