package main

// Notebook 01, third edition: every threshold policy on every embedded
// scenario and every policy case, scored by dominance (study.Dominates, the
// rule cmd/scorecard uses): a policy loses a scenario when another
// dominates it or its error rate is more than a point above the best.

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"hedgelab/hedging"
	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// q11RecName is the policy the third edition recommends, as scenario files
// name it: `type = "recommended"` is an alias that always names it.
const q11RecName = "recommended"

// q11ThirdTOML is the third edition's roster: every policy of the second
// edition and the recommended policy, in the scenario file syntax.
const q11ThirdTOML = q11PolicyTOML + `
[[policies]]
name = "` + q11RecName + `"
type = "recommended"
`

// q11CaseDirs are the directories of policy cases the third edition reads,
// relative to the repository root (where `make notebooks` runs); a missing
// directory is skipped, and a case whose name an earlier directory had is
// read once.
var q11CaseDirs = []string{"scenarios/testdata/policy-cases", "../shared/cases/policy"}

// q11Scn is one scenario of the third edition: where it came from, its
// setup line, and every policy's figures in run order (the roster first,
// then the file's own policies under names the roster does not use).
type q11Scn struct {
	Name, Source, Setup string
	Figs                []report.Figures
}

// fig returns the figures of policy in s (ok false when it did not run).
func (s q11Scn) fig(policy string) (report.Figures, bool) {
	i := slices.IndexFunc(s.Figs, func(f report.Figures) bool { return f.Policy == policy })
	if i < 0 {
		return report.Figures{}, false
	}
	return s.Figs[i], true
}

// q11LoadAll returns every embedded scenario (by name) and every case file
// of q11CaseDirs (by directory, then file name), each with its source.
func q11LoadAll() ([]*scenarios.Scenario, []string, error) {
	emb, err := scenarios.Embedded()
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(emb, func(i, j int) bool { return emb[i].Name < emb[j].Name })
	var out []*scenarios.Scenario
	var src []string
	for _, s := range emb {
		out = append(out, s)
		src = append(src, "embedded")
	}
	seen := map[string]bool{}
	for _, dir := range q11CaseDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
		if err != nil {
			return nil, nil, err
		}
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		for _, f := range files {
			if seen[filepath.Base(f)] {
				continue
			}
			seen[filepath.Base(f)] = true
			s, err := scenarios.Load(f)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, s)
			src = append(src, filepath.ToSlash(f))
		}
	}
	return out, src, nil
}

// q11RunAll runs the roster and each scenario's own policies (those whose
// names the roster does not use) on every scenario.
func (d *doc) q11RunAll(list []*scenarios.Scenario, src []string) ([]q11Scn, error) {
	var out []q11Scn
	for i, s := range list {
		sc, err := d.q11Run(s, src[i], nil)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o q11Scn) bool { return o.Name == sc.Name }) {
			sc.Name += " (case)" // a case file named like an embedded scenario
		}
		out = append(out, sc)
	}
	return out, nil
}

// q11Run runs one scenario (read from src) with every roster policy and
// the file's own, after change (nil: none) edits its configuration.
func (d *doc) q11Run(s *scenarios.Scenario, src string, change func(*simnet.Config)) (q11Scn, error) {
	cfg, own, err := s.Config()
	if err != nil {
		return q11Scn{}, fmt.Errorf("%s: %w", src, err)
	}
	if change != nil {
		change(cfg)
	}
	pols, err := scenarios.BuildPolicies("q11 roster", []byte(q11ThirdTOML), cfg.Client.RequestTimeout)
	if err != nil {
		return q11Scn{}, err
	}
	for _, p := range own {
		if !slices.ContainsFunc(pols, func(q simnet.Policy) bool { return q.Name == p.Name }) {
			pols = append(pols, p)
		}
	}
	res, err := study.Simulate(cfg, pols, s.Replications, study.Options{Parallel: d.parallel})
	if err != nil {
		return q11Scn{}, fmt.Errorf("%s: %w", src, err)
	}
	r := &run{scenario: s, cfg: cfg, res: res, reps: s.Replications}
	sc := q11Scn{Name: s.Name, Source: src, Setup: r.setup()}
	for _, p := range res.Policies {
		sc.Figs = append(sc.Figs, study.Figures(p))
	}
	return sc, nil
}

// q11Verdict is one policy's result on one scenario: its losses (empty:
// none).
type q11Verdict struct {
	Scenario string
	Losses   []study.Loss
}

// q11Card is one policy's scorecard over the scenarios it ran on.
type q11Card struct {
	Policy   string
	Ran      int
	Lost     []q11Verdict
	ErrLoss  int            // scenarios lost on errors
	LostTo   map[string]int // dominating policy → scenarios
	TopLoser string         // the policy it loses to most often ("" none)
}

// q11ScoreAll scores every roster policy (names) on every scenario.
func q11ScoreAll(scns []q11Scn, names []string) (map[string]*q11Card, error) {
	cards := map[string]*q11Card{}
	for _, n := range names {
		c := &q11Card{Policy: n, LostTo: map[string]int{}}
		for _, s := range scns {
			if _, ok := s.fig(n); !ok {
				continue
			}
			c.Ran++
			losses, err := study.Losses(s.Figs, n)
			if err != nil {
				return nil, err
			}
			if len(losses) == 0 {
				continue
			}
			c.Lost = append(c.Lost, q11Verdict{s.Name, losses})
			for _, l := range losses {
				if l.By == "" {
					c.ErrLoss++
				} else {
					c.LostTo[l.By]++
				}
			}
		}
		best := 0
		for by, k := range c.LostTo {
			if k > best || k == best && by < c.TopLoser {
				best, c.TopLoser = k, by
			}
		}
		cards[n] = c
	}
	return cards, nil
}

// q11Unavoidable returns the scenarios where every roster policy loses,
// with the Pareto front of p99 and RU there.
func q11Unavoidable(scns []q11Scn, cards map[string]*q11Card, names []string) []q11Front {
	lost := map[string]int{}
	for _, n := range names {
		for _, v := range cards[n].Lost {
			lost[v.Scenario]++
		}
	}
	var out []q11Front
	for _, s := range scns {
		if lost[s.Name] < len(names) {
			continue
		}
		out = append(out, q11Front{Scenario: s.Name, Front: study.ParetoFront(s.Figs)})
	}
	return out
}

// q11Front is one scenario's Pareto front of p99 against RU.
type q11Front struct {
	Scenario string
	Front    []report.Figures
}

// q11Names returns the roster's policy names in order.
func q11Names() ([]string, error) {
	pols, err := scenarios.BuildPolicies("q11 roster", []byte(q11ThirdTOML), 0)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pols {
		out = append(out, p.Name)
	}
	return out, nil
}

// cell is a matrix cell: "p99 / RU", marked ✗ when the policy loses there.
func (s q11Scn) cell(policy string, lost bool) string {
	f, ok := s.fig(policy)
	if !ok {
		return "-"
	}
	c := ms(f.P99) + " / " + ru(f.RUMultiplier)
	if f.ErrorRate > 0.005 {
		c += " / " + pct(f.ErrorRate) + " err"
	}
	if lost {
		c += " ✗"
	}
	return c
}

// lossText renders policy's losses on scenario s in the tables' units:
// each dominating policy with its p99 [95% CI] and RU against policy's,
// and an error-rate loss with the best error rate.
func (s q11Scn) lossText(policy string, ls []study.Loss) string {
	me, _ := s.fig(policy)
	var out []string
	for _, l := range ls {
		if l.By == "" {
			best := slices.MinFunc(s.Figs, func(a, b report.Figures) int { return cmp.Compare(a.ErrorRate, b.ErrorRate) })
			out = append(out, fmt.Sprintf("errors %s against `%s`'s %s", pct(me.ErrorRate), best.Policy, pct(best.ErrorRate)))
			continue
		}
		o, _ := s.fig(l.By)
		out = append(out, fmt.Sprintf("`%s` (p99 %s ms, RU %s)", l.By, withCI(o, "p99_ms", o.P99, ms), ru(o.RUMultiplier)))
	}
	return strings.Join(out, "; ")
}

// q11NearLoss is a policy that almost dominates the recommended policy on
// one scenario: a p99 at least 10% lower for no more RU with the intervals
// overlapping, or between 1 and 2 RU points cheaper at a p99 no worse.
type q11NearLoss struct {
	Scenario, By, Why string
}

// q11NearLosses lists, per scenario, the policies that would dominate rec
// with one more replication's worth of certainty or a slightly smaller RU
// margin: what would change the answer first.
func q11NearLosses(scns []q11Scn, rec string) []q11NearLoss {
	var out []q11NearLoss
	for _, s := range scns {
		me, ok := s.fig(rec)
		if !ok {
			continue
		}
		for _, o := range s.Figs {
			if o.Policy == rec {
				continue
			}
			if _, dom := study.Dominates(o, me); dom {
				continue
			}
			switch {
			case o.P99 <= (1-study.DominanceP99Gain)*me.P99 && o.RUMultiplier <= me.RUMultiplier:
				out = append(out, q11NearLoss{s.Name, o.Policy, fmt.Sprintf("p99 %s vs %s ms at no more RU, intervals overlapping (%s vs %s)",
					ms(o.P99), ms(me.P99), withCI(o, "p99_ms", o.P99, ms), withCI(me, "p99_ms", me.P99, ms))})
			case o.RUMultiplier <= me.RUMultiplier-study.DominanceRUPoints/2 && o.P99 <= me.P99:
				out = append(out, q11NearLoss{s.Name, o.Policy, fmt.Sprintf("RU %s vs %s at p99 %s vs %s ms",
					ru(o.RUMultiplier), ru(me.RUMultiplier), ms(o.P99), ms(me.P99))})
			}
		}
	}
	return out
}

// q11Position is where rec sits on a scenario's Pareto front of p99
// against RU: "cheapest", "fastest", "between" (on the front), or "off"
// (some policy is at least as good on both).
func q11Position(front []report.Figures, rec string) string {
	i := slices.IndexFunc(front, func(f report.Figures) bool { return f.Policy == rec })
	if i < 0 {
		return "off"
	}
	me := front[i]
	cheapest, fastest := true, true
	for _, f := range front {
		cheapest = cheapest && me.RUMultiplier <= f.RUMultiplier
		fastest = fastest && me.P99 <= f.P99
	}
	switch {
	case cheapest && fastest:
		return "both"
	case cheapest:
		return "cheapest"
	case fastest:
		return "fastest"
	}
	return "between"
}

// q11ThirdView is the third edition's answer: the scorecards, the
// recommended policy's losses, the unavoidable losses with their fronts,
// and the near losses.
type q11ThirdView struct {
	Rec                 string
	Scenarios, Embedded int
	Cases, CaseDirs     []string
	Roster              []string
	Cards               []*q11Card
	RecCard             *q11Card
	RecLosses           []q11RecLoss
	Unavoidable         []q11Trade
	Near                []string
	Fewest              []string
	FewestLost          int
	P99Gain, RU, ErrPts float64
	OwnPolicies         int
}

// q11RecLoss is one scenario the recommended policy loses, rendered.
type q11RecLoss struct {
	Scenario, Figures, LostTo string
}

// q11Trade is one scenario no policy avoids losing: its front rendered and
// where the recommended policy sits on it.
type q11Trade struct {
	Scenario, Front, Position, Rec string
	OffBy                          string
}

// q11Third writes notebook 01's third edition.
func q11Third(d *doc) error {
	d.check(claim{"q11 policy text matches q11PolicyTOML", func() error {
		for _, want := range q11PolicySettings {
			if !strings.Contains(q11PolicyTOML, want) {
				return failf("q11PolicyTOML lacks %q", want)
			}
		}
		return nil
	}})
	names, err := q11Names()
	if err != nil {
		return err
	}
	list, src, err := q11LoadAll()
	if err != nil {
		return err
	}
	v := q11ThirdView{Rec: q11RecName, Roster: names, P99Gain: study.DominanceP99Gain, RU: study.DominanceRUPoints, ErrPts: study.DominanceErrPoints}
	for _, s := range src {
		if s == "embedded" {
			v.Embedded++
			continue
		}
		v.Cases = append(v.Cases, "`"+strings.TrimSuffix(filepath.Base(s), ".toml")+"`")
		if dir := "`" + filepath.ToSlash(filepath.Dir(s)) + "/`"; !slices.Contains(v.CaseDirs, dir) {
			v.CaseDirs = append(v.CaseDirs, dir)
		}
	}
	v.Scenarios = len(list)
	scns, err := d.q11RunAll(list, src)
	if err != nil {
		return err
	}
	for _, s := range scns {
		v.OwnPolicies = max(v.OwnPolicies, len(s.Figs)-len(names))
	}
	d.say("q11/third-question", v)
	d.say("q11/policies-intro", nil)
	d.b.WriteString("```toml\n" + q11ThirdTOML + "```\n\n")
	d.say("q11/policies", nil)
	d.say("q11/third-recommended", v)
	d.say("q11/third-method", v)
	cards, err := q11ScoreAll(scns, names)
	if err != nil {
		return err
	}
	// Scorecard: every roster policy, fewest losses first (ties in roster
	// order).
	order := slices.Clone(names)
	slices.SortStableFunc(order, func(a, b string) int { return len(cards[a].Lost) - len(cards[b].Lost) })
	var tab [][]string
	for _, n := range order {
		c := cards[n]
		v.Cards = append(v.Cards, c)
		top := "—"
		if c.TopLoser != "" {
			top = fmt.Sprintf("`%s` (%d)", c.TopLoser, c.LostTo[c.TopLoser])
		}
		tab = append(tab, []string{"`" + n + "`", fmt.Sprint(c.Ran), fmt.Sprint(len(c.Lost)), fmt.Sprint(c.ErrLoss), top})
	}
	v.FewestLost = len(cards[order[0]].Lost)
	for _, n := range order {
		if len(cards[n].Lost) == v.FewestLost {
			v.Fewest = append(v.Fewest, "`"+n+"`")
		}
	}
	d.p("## Scorecard")
	d.say("q11/third-scorecard", v)
	d.table([]string{"policy", "scenarios run", "scenarios lost", "of which on errors", "most often dominated by (scenarios)"}, tab)

	// The recommended policy's losses.
	v.RecCard = cards[q11RecName]
	d.p("## The recommended policy's scorecard")
	tab = nil
	for _, l := range v.RecCard.Lost {
		s := scns[slices.IndexFunc(scns, func(s q11Scn) bool { return s.Name == l.Scenario })]
		f, _ := s.fig(q11RecName)
		rl := q11RecLoss{Scenario: "`" + l.Scenario + "`", Figures: fmt.Sprintf("%s ms / %s / %s", withCI(f, "p99_ms", f.P99, ms), ru(f.RUMultiplier), pct(f.ErrorRate)), LostTo: s.lossText(q11RecName, l.Losses)}
		v.RecLosses = append(v.RecLosses, rl)
		tab = append(tab, []string{rl.Scenario, rl.Figures, rl.LostTo})
	}
	d.say("q11/third-rec-card", v)
	if len(tab) > 0 {
		d.table([]string{"scenario", "recommended: p99 [95% CI] / RU × / errors", "lost to"}, tab)
	}
	if err := d.q11CursorLoss(list, src, scns, v.RecCard); err != nil {
		return err
	}

	// Where no policy avoids a loss.
	d.p("## Where no policy avoids a loss")
	for _, u := range q11Unavoidable(scns, cards, names) {
		t := q11Trade{Scenario: u.Scenario, Position: q11Position(u.Front, q11RecName)}
		var front []string
		for _, f := range u.Front {
			front = append(front, fmt.Sprintf("`%s` %s ms / %s / %s", f.Policy, withCI(f, "p99_ms", f.P99, ms), ru(f.RUMultiplier), pct(f.ErrorRate)))
		}
		t.Front = strings.Join(front, "; ")
		s := scns[slices.IndexFunc(scns, func(s q11Scn) bool { return s.Name == u.Scenario })]
		f, _ := s.fig(q11RecName)
		t.Rec = fmt.Sprintf("%s ms / %s / %s", withCI(f, "p99_ms", f.P99, ms), ru(f.RUMultiplier), pct(f.ErrorRate))
		if t.Position == "off" {
			var by []string
			for _, o := range u.Front {
				if o.P99 <= f.P99 && o.RUMultiplier <= f.RUMultiplier {
					by = append(by, "`"+o.Policy+"`")
				}
			}
			t.OffBy = joinAnd(by, "")
		}
		v.Unavoidable = append(v.Unavoidable, t)
	}
	d.say("q11/third-unavoidable", v)

	// Every scenario, every roster policy.
	d.p("## Every scenario")
	d.say("q11/third-matrix", v)
	header := []string{"scenario", "source"}
	for _, n := range names {
		header = append(header, "`"+n+"`")
	}
	tab = nil
	for _, s := range scns {
		source := s.Source
		if source != "embedded" {
			source = filepath.Base(filepath.Dir(source))
		}
		row := []string{"`" + s.Name + "`", source}
		for _, n := range names {
			lost := slices.ContainsFunc(cards[n].Lost, func(l q11Verdict) bool { return l.Scenario == s.Name })
			row = append(row, s.cell(n, lost))
		}
		tab = append(tab, row)
	}
	d.table(header, tab)

	// Answer.
	for _, n := range q11NearLosses(scns, q11RecName) {
		v.Near = append(v.Near, fmt.Sprintf("`%s`: `%s` (%s)", n.Scenario, n.By, n.Why))
	}
	d.check(claim{"the scorecard covers every scenario for every roster policy", func() error {
		for _, n := range names {
			if cards[n].Ran != len(scns) {
				return failf("%s ran on %d of %d scenarios", n, cards[n].Ran, len(scns))
			}
		}
		return nil
	}})
	d.p("## Answer")
	d.say("q11/third-answer", v)
	return nil
}

// q11CursorScn is the scenario that declares a region-local change-feed
// cursor portable, against the driver's rule (notebook 06).
const q11CursorScn = "feed-change-feed-cursors"

// q11CursorView is the paragraph on the recommended policy's loss of
// q11CursorScn: its figures as the file declares the cursor, and with the
// driver's default affinity.
type q11CursorView struct {
	Rec, Scenario            string
	Hedged, RU, DisabledRU   string
	AffineRU, AffineDisabled string
	AffineLosses             int
}

// q11CursorLoss explains a loss of q11CursorScn, if the recommended
// policy has one, by running the scenario again with the change-feed
// cursor's affinity left to hedging.DefaultContinuationAffinity.
func (d *doc) q11CursorLoss(list []*scenarios.Scenario, src []string, scns []q11Scn, card *q11Card) error {
	if !slices.ContainsFunc(card.Lost, func(l q11Verdict) bool { return l.Scenario == q11CursorScn }) {
		return nil
	}
	i := slices.IndexFunc(list, func(s *scenarios.Scenario) bool { return s.Name == q11CursorScn })
	affine, err := d.q11Run(list[i], src[i], func(c *simnet.Config) {
		c.Feed.ChangeFeed.Continuation = hedging.DefaultContinuationAffinity(hedging.ChangeFeedPage)
	})
	if err != nil {
		return err
	}
	losses, err := study.Losses(affine.Figs, q11RecName)
	if err != nil {
		return err
	}
	declared := scns[slices.IndexFunc(scns, func(s q11Scn) bool { return s.Name == q11CursorScn })]
	rec, _ := declared.fig(q11RecName)
	off, _ := declared.fig("disabled")
	arec, _ := affine.fig(q11RecName)
	aoff, _ := affine.fig("disabled")
	d.check(claim{"the cursor loss is RU spent outside the scored operations, and the default affinity removes it", func() error {
		switch {
		case rec.HedgeRate != 0:
			return failf("%s hedges %.4f of the scored operations of %s", q11RecName, rec.HedgeRate, q11CursorScn)
		case rec.P99 != off.P99:
			return failf("p99 %.3f vs disabled %.3f: the loss is not RU alone", rec.P99, off.P99)
		case len(losses) != 0 || arec.RUMultiplier != aoff.RUMultiplier:
			return failf("with the default affinity %s still loses %d times (RU %.4f vs %.4f)", q11RecName, len(losses), arec.RUMultiplier, aoff.RUMultiplier)
		}
		return nil
	}})
	d.say("q11/third-cursor", q11CursorView{
		Rec: q11RecName, Scenario: q11CursorScn, Hedged: pct(rec.HedgeRate), RU: ru(rec.RUMultiplier), DisabledRU: ru(off.RUMultiplier),
		AffineRU: ru(arec.RUMultiplier), AffineDisabled: ru(aoff.RUMultiplier), AffineLosses: len(losses),
	})
	return nil
}
