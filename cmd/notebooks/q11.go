package main

// Notebook 01, fourth edition: every roster policy on the scenario
// library and every policy case, scored by the scorecard
// (internal/scorecard over internal/study's rule) with the hindsight
// frontier of fixed thresholds and the clairvoyant bound.

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"hedgelab/hedging/threshold"
	"hedgelab/internal/scorecard"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// q11RecName is the policy the notebook recommends, as scenario files name
// it: `type = "recommended"` is an alias that always names it.
const q11RecName = scorecard.Recommended

// q11PolicySettings are the settings of scorecard.RosterTOML the
// "q11/policies" paragraph names: the claim "q11 policy text matches the
// roster" checks that each is there.
var q11PolicySettings = []string{
	`name = "p99-tps"` + "\ntype = \"p99_dynamic\"\npreset = \"tps_literal\"",
	`name = "p99-dynamic-min20"` + "\ntype = \"p99_dynamic\"\nmin_ms = 20\n",
	`name = "p99-budget-20pct"` + "\ntype = \"p99_dynamic\"\nhedge_budget = 0.2\n",
	`name = "cassandra-100ms"` + "\ntype = \"capped_quantile\"\ncap_ms = 100\n",
	`name = "finagle-2pct"` + "\ntype = \"backup_requests\"\nmax_extra_load = 0.02\n",
	`name = "grpc-throttle-50ms"` + "\ntype = \"retry_throttle\"\nthreshold_ms = 50\n",
	`name = "static-50ms"` + "\ntype = \"static\"\nthreshold_ms = 50\n",
}

// q11CaseDirs are the directories of policy cases the notebook reads,
// relative to the repository root (where `make notebooks` runs), in
// order; a missing directory is skipped, and a file whose content an
// earlier directory had is read once.
var q11CaseDirs = []string{
	"scenarios/testdata/policy-cases", "../shared/cases/policy",
	"scenarios/testdata/policy-cases/third-set", "../shared/cases/policy/third-set",
}

// q11ThirdSet is where the third set's cases are (the issue-25 cases).
const q11ThirdSet = "third-set"

// q11Source is the notebook's scenarios: the embedded library, then the
// policy cases (all of them: -q11-scenarios filters in q11Score).
func q11Source() scorecard.Source {
	var dirs []string
	for _, d := range q11CaseDirs {
		if m, _ := filepath.Glob(filepath.Join(d, "*.toml")); len(m) > 0 {
			dirs = append(dirs, d)
		}
	}
	return scorecard.Concat("library and cases", scorecard.Library(), scorecard.Files(dirs...))
}

// q11Scn is one scored scenario: its card and where it came from
// ("embedded", or the case directory's base name).
type q11Scn struct {
	Name, From string
	Card       *scorecard.Card
}

// q11Score scores every scenario of q11Source.
func (d *doc) q11Score() ([]q11Scn, error) {
	src, err := q11Filter(q11Source(), *q11Match)
	if err != nil {
		return nil, err
	}
	cards, err := scorecard.Run(src, scorecard.Options{Parallel: d.parallel}, q11Progress)
	if err != nil {
		return nil, err
	}
	var out []q11Scn
	for _, c := range cards {
		from := "embedded"
		if !strings.HasPrefix(c.Source, "embedded:") {
			from = filepath.Base(filepath.Dir(c.Source))
		}
		name := c.Scenario
		if slices.ContainsFunc(out, func(o q11Scn) bool { return o.Name == name }) {
			name += " (case)" // a case file named like an embedded scenario
		}
		out = append(out, q11Scn{Name: name, From: from, Card: c})
	}
	return out, nil
}

// headline renders a policy's headline quantity, RU and errors on a card:
// "25.2 ms / 1.100 / 0.58%".
func headline(c *scorecard.Card, p *scorecard.Policy) string {
	if c.Headline < 0 {
		return fmt.Sprintf("pooled p99 %s ms / %s / %s", ms(p.Pooled[0]), ru(p.RU), pct(p.Errors))
	}
	return fmt.Sprintf("%s ms / %s / %s", ms(p.Latency[c.Headline]), ru(p.RU), pct(p.Errors))
}

// lossText renders the decided reasons of a loss.
func lossText(p *scorecard.Policy) string { return p.Reasons(study.True, code) }

// code renders a name as Markdown code.
func code(name string) string { return "`" + name + "`" }

// rateTable returns the loss-rate table of rates, fewest losses first
// (rows: policy, scenarios, lost, loss rate with its exact 95% interval),
// the fewest losses and the policies that have them.
func rateTable(rates []scorecard.Rate) (fewestLost int, fewest []string, tab [][]string) {
	rates = slices.Clone(rates)
	slices.SortStableFunc(rates, func(a, b scorecard.Rate) int { return cmp.Compare(a.Lost, b.Lost) })
	fewestLost = rates[0].Lost
	for _, r := range rates {
		if r.Lost == fewestLost {
			fewest = append(fewest, code(r.Policy))
		}
		tab = append(tab, []string{code(r.Policy), fmt.Sprint(r.Ran), fmt.Sprint(r.Lost),
			fmt.Sprintf("%.1f%% [%.1f, %.1f]", 100*float64(r.Lost)/float64(max(r.Ran, 1)), 100*r.CI[0], 100*r.CI[1])})
	}
	return fewestLost, fewest, tab
}

// quantity returns the index of quantity q on card c (-1: not scored).
func quantity(c *scorecard.Card, q study.Quantity) int {
	return slices.Index(c.Quantities, q)
}

// q11View is the fourth edition's prose view.
type q11View struct {
	Rec                             string
	Scenarios, Embedded, Cases      int
	CaseDirs                        []string
	Gain, RUPts, MinGain, ErrPts    float64
	Start, Cap                      int
	Grid                            string
	RecLost                         []q11RecLoss
	RecRate                         scorecard.Rate
	Summary                         scorecard.Summary
	Beats, Behind                   []string
	Capped                          []string
	NoBound                         int
	Kind, P999, Paired, Price       q11Change
	Margin                          q11Margin
	Third                           []string
	ThirdLost                       int
	Fewest                          []string
	FewestLost                      int
	BoundBelow, BoundAt, BoundCount int
	// BelowBound names the scenarios where some policy's headline figure
	// is more than 5% below its own clairvoyant bound: routing the bound
	// does not count (the partition breaker) did it.
	BelowBound []string
	// Split is the library's regret rows by whether conditions change.
	Split q11Split
	// Pop is the bounded population's view, Hostile the hostile space's
	// (nil when its file is missing).
	Pop, Hostile *q11PopView
	// Match is -q11-scenarios: the library and cases were filtered to the
	// names it matches ("" : all of them).
	Match string
	// Steps is the sequential rule's replication counts ("3, 5, 8, 12").
	Steps string
	// BoundSlack is q11BoundSlack, ErrShown q11ErrShown.
	BoundSlack, ErrShown float64
	// Policy is the recommended policy's defaults the prose cites.
	Policy q11PolicyView
	// FeedScns counts the scenarios with a feed, where `disabled` must
	// still hedge nothing (issue 26 A6: metadata reads included).
	FeedScns int
}

// q11BoundSlack is how close to its clairvoyant bound a policy's headline
// figure counts as "at" it (and how far below as "below" it): 5%, the
// rule's own margin for a quantile to count as worse (study.ScoreMinGain).
const q11BoundSlack = study.ScoreMinGain

// q11ErrShown is the error rate above which the matrix shows a cell's
// error rate: 0.5%, half the rule's error clause (study.ScoreErrPoints),
// so every error rate the clause could judge is on the page.
const q11ErrShown = study.ScoreErrPoints / 2

// stepsText renders the sequential rule's replication counts from
// ScoreStart to ScoreCap ("3, 5, 8, 12").
func stepsText() string {
	var out []string
	for n := study.ScoreStart; ; n = study.NextReplications(n) {
		out = append(out, fmt.Sprint(n))
		if study.NextReplications(n) == n {
			return strings.Join(out, ", ")
		}
	}
}

// q11PolicyView is the recommended policy's defaults the "q11/recommended"
// paragraph cites, from threshold.RecommendedConfig's own defaults (so
// the prose follows the policy).
type q11PolicyView struct {
	// MemoryS is the alternate's evidence's memory (MaxMemory), in s.
	MemoryS float64
	// Probe is the probe period in operations; MinSamples the alternate
	// answers below which probes are sent; MinGain the smallest gain
	// hedged for.
	Probe      int
	MinSamples float64
	MinGain    float64
}

// q11Policy returns the recommended policy's defaults.
func q11Policy() (q11PolicyView, error) {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{})
	if err != nil {
		return q11PolicyView{}, err
	}
	c := p.Config()
	return q11PolicyView{MemoryS: c.MaxMemory.Seconds(), Probe: c.Probe, MinSamples: c.MinSamples, MinGain: c.MinGain}, nil
}

// q11RecLoss is one scenario the recommended policy loses.
type q11RecLoss struct {
	Scenario, Figures, Why string
}

// q11Change is one change of the rule and the case that shows it.
type q11Change struct {
	Case, Text string
}

// q11Margin counts the comparisons the "no worse" margin decides: a
// cheaper policy decidedly but less than ScoreMinGain worse on every
// quantity where it is worse, which would not dominate without the margin.
type q11Margin struct {
	Count    int
	Examples []string
}

// q11Fourth writes notebook 01's fourth edition.
func q11Fourth(d *doc) error {
	d.check(claim{"q11 policy text matches the roster", func() error {
		for _, want := range q11PolicySettings {
			if !strings.Contains(scorecard.RosterTOML, want) {
				return failf("scorecard.RosterTOML lacks %q", want)
			}
		}
		return nil
	}})
	scns, err := d.q11Score()
	if err != nil {
		return err
	}
	v := q11View{Rec: q11RecName, Scenarios: len(scns), Steps: stepsText(), BoundSlack: q11BoundSlack, ErrShown: q11ErrShown, Gain: study.ScoreGain, RUPts: study.ScoreRUPoints, MinGain: study.ScoreMinGain,
		ErrPts: study.ScoreErrPoints, Start: study.ScoreStart, Cap: study.ScoreCap}
	if v.Policy, err = q11Policy(); err != nil {
		return err
	}
	var grid []string
	for _, g := range scorecard.GridMs {
		grid = append(grid, ms(g))
	}
	v.Grid = strings.Join(grid, ", ")
	for _, s := range scns {
		if s.From == "embedded" {
			v.Embedded++
		} else {
			v.Cases++
		}
	}
	for _, dir := range q11CaseDirs {
		if m, _ := filepath.Glob(filepath.Join(dir, "*.toml")); len(m) > 0 {
			v.CaseDirs = append(v.CaseDirs, "`"+dir+"/`")
		}
	}
	cards := make([]*scorecard.Card, len(scns))
	for i, s := range scns {
		cards[i] = s.Card
	}
	v.Summary = scorecard.Summarize(cards)
	v.RecRate = v.Summary.Rate(q11RecName)
	d.check(claim{"every scenario scored every roster policy", func() error {
		for _, r := range v.Summary.Rates {
			if r.Ran != len(scns) {
				return failf("%s ran on %d of %d scenarios", r.Policy, r.Ran, len(scns))
			}
		}
		return nil
	}})

	// The question and the answer cite the population, whose section comes
	// later: score it first and hold its text until its place.
	mark := d.b.Len()
	pops, err := d.q11Populations(*q11N, *q11Seed)
	if err != nil {
		return err
	}
	popText := bytes.Clone(d.b.Bytes()[mark:])
	d.b.Truncate(mark)
	v.Pop, v.Match = pops[0], *q11Match
	if len(pops) > 1 {
		v.Hostile = pops[1]
	}

	d.say("q11/question", v)
	d.say("q11/policies-intro", nil)
	d.b.WriteString("```toml\n" + scorecard.RosterTOML + "```\n\n")
	d.say("q11/policies", nil)
	d.say("q11/recommended", v)
	d.p("## Method: the scorecard, fourth edition")
	d.say("q11/method", v)

	// The rule's changes, each with the case that shows it.
	d.q11Changes(scns, &v)
	d.p("### What changed in the rule, and the case that shows each change")
	d.say("q11/rule-changes", v)

	// Loss rates.
	d.p("## Loss rate per policy")
	var tab [][]string
	v.FewestLost, v.Fewest, tab = rateTable(v.Summary.Rates)
	d.say("q11/rates", v)
	d.table([]string{"policy", "scenarios", "lost", "loss rate [exact 95% CI]"}, tab)

	// The recommended policy's losses.
	d.p("## Where `%s` loses, and why", q11RecName)
	tab = nil
	for _, s := range scns {
		p := s.Card.Policy(q11RecName)
		if p == nil || !p.Loses {
			continue
		}
		l := q11RecLoss{Scenario: "`" + s.Name + "`", Figures: headline(s.Card, p), Why: lossText(p)}
		v.RecLost = append(v.RecLost, l)
		tab = append(tab, []string{l.Scenario, s.From, l.Figures, l.Why})
	}
	d.say("q11/rec-losses", v)
	if len(tab) > 0 {
		d.table([]string{"scenario", "source", "recommended: headline ms / RU × / errors", "lost to (paired gain [95% CI])"}, tab)
	}

	// Regret to the hindsight frontier, and the clairvoyant bound.
	d.p("## Regret to the best fixed threshold in hindsight")
	tab = nil
	verdicts := map[string]int{}
	for _, s := range scns {
		c := s.Card
		p := c.Policy(q11RecName)
		if p == nil || c.Headline < 0 || p.Regret.N == 0 {
			continue
		}
		regret := fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", 100*p.Regret.Mean, 100*p.Regret.Lo, 100*p.Regret.Hi)
		verdicts[c.Source] = p.RegretVerdict()
		switch verdicts[c.Source] {
		case -1:
			v.Beats = append(v.Beats, "`"+s.Name+"`")
		case 1:
			v.Behind = append(v.Behind, "`"+s.Name+"`")
		}
		bound := "— (" + c.ClairvoyantWhy + ")"
		if !math.IsNaN(p.Clairvoyant) {
			bound = ms(p.Clairvoyant)
			v.BoundCount++
			switch lat := p.Latency[c.Headline]; {
			case lat <= p.Clairvoyant*(1+q11BoundSlack):
				v.BoundAt++
			default:
				v.BoundBelow++
			}
		} else {
			v.NoBound++
		}
		best := fmt.Sprintf("`%s` %s ms / %s", p.Best.Policy, ms(p.Best.Ms), ru(p.Best.RU))
		tab = append(tab, []string{"`" + s.Name + "`", c.Quantities[c.Headline].String(), ms(p.Latency[c.Headline]) + " / " + ru(p.RU), best, regret, bound})
	}
	for _, s := range scns {
		c := s.Card
		if c.Headline < 0 {
			continue
		}
		for _, p := range c.Policies {
			if !math.IsNaN(p.Clairvoyant) && p.Latency[c.Headline] < (1-q11BoundSlack)*p.Clairvoyant {
				v.BelowBound = append(v.BelowBound, fmt.Sprintf("`%s` (`%s` %s ms against its bound %s)", s.Name, p.Name, ms(p.Latency[c.Headline]), ms(p.Clairvoyant)))
				break
			}
		}
	}
	scored := make([]*scorecard.Card, len(scns))
	for i, s := range scns {
		scored[i] = s.Card
	}
	v.Split = q11SplitOf(verdicts, q11ChangingOf(scored))
	d.say("q11/regret", v)
	d.say("q11/split", v.Split)
	d.table([]string{"scenario", "headline", "recommended ms / RU ×", "best fixed threshold at no more RU: ms / RU ×", "regret [95% CI]", "clairvoyant bound at its RU, ms"}, tab)
	d.check(claim{"the regret summary counts the rows", func() error {
		if len(v.Beats)+len(v.Behind) > v.Summary.RegretN || v.Summary.Beats != len(v.Beats) || v.Summary.Behind != len(v.Behind) {
			return failf("beats %d/%d behind %d/%d of %d", len(v.Beats), v.Summary.Beats, len(v.Behind), v.Summary.Behind, v.Summary.RegretN)
		}
		return nil
	}})

	// The third set: the cases of issue 25.
	d.p("## The third set of policy cases")
	tab = nil
	for _, s := range scns {
		if s.From != q11ThirdSet {
			continue
		}
		c := s.Card
		p := c.Policy(q11RecName)
		verdict := "no loss"
		if p.Loses {
			verdict = "**loses**: " + lossText(p)
			v.ThirdLost++
		}
		v.Third = append(v.Third, "`"+s.Name+"`")
		var qs []string
		for j, q := range c.Quantities {
			qs = append(qs, fmt.Sprintf("%s %s", q, ms(p.Latency[j])))
		}
		reps := fmt.Sprint(c.Start)
		if c.Replications > c.Start {
			reps += "–" + fmt.Sprint(c.Replications)
		}
		tab = append(tab, []string{"`" + s.Name + "`", strings.Join(qs, ", "), "pooled p99 " + ms(p.Pooled[0]), ru(p.RU), pct(p.Hedged), reps, verdict})
	}
	d.say("q11/third-set", v)
	if len(tab) > 0 {
		d.table([]string{"case", "recommended: scored quantities, ms", "pooled", "RU ×", "hedged", "replications", "verdict"}, tab)
	}

	if err := d.q11Breaker(scns); err != nil {
		return err
	}

	d.b.Write(popText)

	// Every scenario, every roster policy.
	d.p("## Every scenario")
	names := scorecard.RosterNames()
	header := []string{"scenario", "source", "headline", "reps"}
	for _, n := range names {
		header = append(header, "`"+n+"`")
	}
	tab = nil
	for _, s := range scns {
		c := s.Card
		head := "pooled p99"
		if c.Headline >= 0 {
			head = c.Quantities[c.Headline].String()
		}
		reps := fmt.Sprint(c.Start)
		if c.Replications > c.Start {
			reps += "–" + fmt.Sprint(c.Replications)
		}
		if !c.Decided {
			reps += " (cap)"
			v.Capped = append(v.Capped, "`"+s.Name+"`")
		}
		row := []string{"`" + s.Name + "`", s.From, head, reps}
		for _, n := range names {
			p := c.RosterPolicy(n)
			cell := "-"
			if p != nil {
				if c.Headline >= 0 {
					cell = ms(p.Latency[c.Headline]) + " / " + ru(p.RU)
				} else {
					cell = ms(p.Pooled[0]) + " / " + ru(p.RU)
				}
				if p.Errors > q11ErrShown {
					cell += " / " + pct(p.Errors) + " err"
				}
				if p.Loses {
					cell += " ✗"
				}
			}
			row = append(row, cell)
		}
		tab = append(tab, row)
	}
	d.check(claim{"disabled hedges nothing, feed scenarios included", func() error {
		for _, s := range scns {
			if p := s.Card.RosterPolicy("disabled"); p != nil && p.Hedged > 0 {
				return failf("`disabled` hedged %s of operations on %s", pct(p.Hedged), s.Name)
			}
		}
		return nil
	}})
	for sc, err := range q11Source().Scenarios {
		if err == nil && sc.File.Feed != nil {
			v.FeedScns++
		}
	}
	d.say("q11/matrix", v)
	d.table(header, tab)

	d.p("## Answer")
	d.say("q11/answer", v)
	return nil
}

// q11Changes fills the rule-change paragraphs' figures from the cards.
func (d *doc) q11Changes(scns []q11Scn, v *q11View) {
	find := func(name string) *scorecard.Card {
		for _, s := range scns {
			if s.Name == name {
				return s.Card
			}
		}
		return nil
	}
	rd := func(c *scorecard.Card, policy string, q study.Quantity) string {
		p := c.Policy(policy)
		if p == nil {
			p = c.RosterPolicy(policy)
		}
		j := quantity(c, q)
		if p == nil || j < 0 {
			return "-"
		}
		return ms(p.Latency[j])
	}
	read99, read999 := study.Quantity{Kind: "read", Q: 0.99}, study.Quantity{Kind: "read", Q: 0.999}
	if c := find("kind-mix-pooled-p99"); c != nil {
		rec, off := c.Policy(q11RecName), c.RosterPolicy("disabled")
		v.Kind = q11Change{Case: "kind-mix-pooled-p99", Text: fmt.Sprintf("pooled p99 %s ms for `%s` and %s ms for `disabled`, the reads' own p99 %s against %s ms, for RU %s against %s",
			ms(rec.Pooled[0]), q11RecName, ms(off.Pooled[0]), rd(c, q11RecName, read99), rd(c, "disabled", read99), ru(rec.RU), ru(off.RU))}
	}
	if c := find("sub-p99-slow-mode"); c != nil {
		rec, off := c.Policy(q11RecName), c.RosterPolicy("disabled")
		v.P999 = q11Change{Case: "sub-p99-slow-mode", Text: fmt.Sprintf("read p99 %s against %s ms, read p99.9 %s against %s ms, for RU %s against %s",
			rd(c, q11RecName, read99), rd(c, "disabled", read99), rd(c, q11RecName, read999), rd(c, "disabled", read999), ru(rec.RU), ru(off.RU))}
	}
	var paired []string
	for _, name := range []string{"pareto-everywhere", "rate-surge-10x-queueing"} {
		if c := find(name); c != nil {
			state := "every verdict decided"
			if !c.Decided {
				state = "some settled at the cap"
			}
			paired = append(paired, fmt.Sprintf("`%s` ran %d replications for every policy and up to %d for the undecided (%s)", name, c.Start, c.Replications, state))
		}
	}
	v.Paired = q11Change{Case: "pareto-everywhere", Text: strings.Join(paired, "; ")}
	if c := find("gate-tight-burst"); c != nil {
		off := c.RosterPolicy("disabled")
		v.Price = q11Change{Case: "gate-tight-burst", Text: fmt.Sprintf("`disabled` (read p99 %s ms, RU %s) loses there: %s", rd(c, "disabled", read99), ru(off.RU), lossText(off))}
	}
	// The "no worse" margin: cheaper-clause losses the margin decides.
	for _, s := range scns {
		pc := s.Card.Paired
		if pc == nil {
			continue
		}
		for a := range pc.Policies {
			for b := range pc.Policies {
				if a == b || pc.RU(b)-pc.RU(a) > -study.ScoreRUPoints {
					continue
				}
				marginOnly, worseSomewhere := true, false
				for j := range pc.Quantities {
					g := pc.Gain(a, b, j)
					if g.Hi < 0 { // b decidedly worse on j
						worseSomewhere = true
						if g.Mean <= -study.ScoreMinGain {
							marginOnly = false
						}
					}
				}
				if t, _ := pc.Dominates(a, b, true); t == study.True && worseSomewhere && marginOnly {
					v.Margin.Count++
					if len(v.Margin.Examples) < 3 && !slices.Contains(v.Margin.Examples, "`"+s.Name+"`") {
						v.Margin.Examples = append(v.Margin.Examples, "`"+s.Name+"`")
					}
				}
			}
		}
	}
}

// q11SurgeScn is the third-set case whose load moves between regions
// through the partition breaker.
const q11SurgeScn = "rate-surge-10x-queueing"

// q11BreakerView is the paragraph on q11SurgeScn: its own policies'
// headline quantity with the partition breaker as the file has it and
// with it off, and the best of each.
type q11BreakerView struct {
	Rec, Scenario string
	On, Off       string // the best policy and its headline figure
	// NeedsBreaker: the best without the breaker is more than Slack
	// (q11BoundSlack) slower than the best with it.
	NeedsBreaker bool
	Slack        float64
	// Surge is the file's largest rate change over its base rate.
	Surge float64
	Lost  bool
}

// q11Breaker runs q11SurgeScn again with the partition breaker off (a
// consecutive-win threshold no run reaches) and its own policies only,
// and tables both runs.
func (d *doc) q11Breaker(scns []q11Scn) error {
	i := slices.IndexFunc(scns, func(s q11Scn) bool { return s.Name == q11SurgeScn })
	if i < 0 {
		return nil
	}
	on := scns[i].Card
	src, err := scenarios.Load(on.Source)
	if err != nil {
		return err
	}
	s, err := src.WithParam("client.consecutive_hedge_win_threshold", math.MaxInt32)
	if err != nil {
		return err
	}
	off, err := scorecard.Score(s, scorecard.Options{Parallel: d.parallel, OwnOnly: true, NoFrontier: true, Start: on.Start, Cap: on.Start})
	if err != nil {
		return err
	}
	h := on.Headline
	var bOn, bOff *scorecard.Policy
	var tab [][]string
	for k := range off.Policies {
		po := &off.Policies[k]
		pn := on.Policy(po.Name)
		if pn == nil {
			continue
		}
		if bOn == nil || pn.Latency[h] < bOn.Latency[h] {
			bOn = pn
		}
		if bOff == nil || po.Latency[h] < bOff.Latency[h] {
			bOff = po
		}
		tab = append(tab, []string{"`" + po.Name + "`", ms(pn.Latency[h]) + " / " + ru(pn.RU) + " / " + pct(pn.Hedged),
			ms(po.Latency[h]) + " / " + ru(po.RU) + " / " + pct(po.Hedged)})
	}
	text := func(p *scorecard.Policy) string {
		return fmt.Sprintf("`%s` %s ms at RU %s", p.Name, ms(p.Latency[h]), ru(p.RU))
	}
	v := q11BreakerView{Rec: q11RecName, Scenario: q11SurgeScn, On: text(bOn), Off: text(bOff),
		NeedsBreaker: bOff.Latency[h] > (1+q11BoundSlack)*bOn.Latency[h], Slack: q11BoundSlack, Lost: on.Policy(q11RecName).Loses}
	for _, c := range src.File.Workload.RateChanges {
		if w := src.File.Workload.RatePerS; w > 0 {
			v.Surge = max(v.Surge, c.RatePerS/w)
		}
	}
	d.p("### `%s`: a queue, the breaker and a bounded hedge rate", q11SurgeScn)
	d.say("q11/breaker", v)
	d.table([]string{"policy", on.Quantities[h].String() + " ms / RU × / hedged, breaker as in the file", "the same, breaker off"}, tab)
	return nil
}
