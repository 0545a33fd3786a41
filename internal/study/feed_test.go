package study_test

import (
	"math"
	"testing"

	"hedgelab/internal/study"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// TestFeedFigures: a change-feed scenario's feed figures are the pooled
// counts of its replications with exact intervals: the duplicates per 10⁶
// changes are duplicates / changes × 10⁶, their interval the exact one of
// duplicates among the deliveries, rescaled; a point-read scenario has
// none.
func TestFeedFigures(t *testing.T) {
	s, err := scenarios.Get("feed-change-feed-cursors")
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	res, err := study.Simulate(cfg, pols, 2, study.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Policies {
		f, m := study.Figures(p).Feed, p.Merged.Feed
		if f == nil {
			t.Fatalf("%s: no feed figures", p.Name)
		}
		if f.Changes != m.Changes || f.Duplicates.N != m.Duplicates || f.Skip.N != m.Skips || f.Pages != m.Races-m.SetupReads {
			t.Errorf("%s: figures %+v do not pool the counts %+v", p.Name, *f, *m)
		}
		scale := 1e6 * float64(m.Delivered) / float64(m.Changes)
		ci := study.ProportionCI(m.Duplicates, m.Delivered)
		if got, want := f.Duplicates.Rate, float64(m.Duplicates)*1e6/float64(m.Changes); math.Abs(got-want) > 1e-9*max(want, 1) {
			t.Errorf("%s: duplicates per 10⁶ %v, want %v", p.Name, got, want)
		}
		if math.Abs(f.Duplicates.CI[0]-ci[0]*scale) > 1e-6 || math.Abs(f.Duplicates.CI[1]-ci[1]*scale) > 1e-6 {
			t.Errorf("%s: duplicates interval %v, want %v", p.Name, f.Duplicates.CI, [2]float64{ci[0] * scale, ci[1] * scale})
		}
		if sk := study.ProportionCI(m.Skips, m.Changes); f.Skip.CI != [2]float64{sk[0] * 1e6, sk[1] * 1e6} {
			t.Errorf("%s: skips interval %v, want %v × 10⁶", p.Name, f.Skip.CI, sk)
		}
		if !math.IsNaN(f.SetupShare.Value) {
			t.Errorf("%s: setup share %v without queries, want NaN", p.Name, f.SetupShare.Value)
		}
		if ci := f.PollRUMultiplier.CI; !(ci[0] <= f.PollRUMultiplier.Value && f.PollRUMultiplier.Value <= ci[1]) {
			t.Errorf("%s: polls' RU × %v outside its interval across replications %v", p.Name, f.PollRUMultiplier.Value, ci)
		}
	}
	if f := study.Figures(res.Policies[0]).Feed; f.Duplicates.N != 0 || f.Duplicates.CI[0] != 0 || !(f.Duplicates.CI[1] > 0) {
		t.Errorf("disabled: %d duplicates, interval %v; want none, an interval from 0 to above 0", f.Duplicates.N, f.Duplicates.CI)
	}

	d, err := scenarios.Get("default")
	if err != nil {
		t.Fatal(err)
	}
	dcfg, dpols, _ := d.Config()
	dcfg.Duration = 5e9
	dres, err := study.Simulate(dcfg, dpols[:1], 1, study.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f := study.Figures(dres.Policies[0]).Feed; f != nil {
		t.Errorf("default: feed figures %+v, want none", *f)
	}
}

// TestHedgeUnits: a scenario with queries gets a hedge-unit point per
// hedging policy and unit, and one without hedging; the other unit's runs
// are those of HedgeUnitInputs.
func TestHedgeUnits(t *testing.T) {
	s, err := scenarios.Get("feed-query-brownout")
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Duration = 10e9
	extra := study.HedgeUnitInputs(cfg, pols, 1)
	if len(extra) != 1 || extra[0].Config.Feed.HedgeUnit.String() != "operation" || len(extra[0].Policies) != len(pols)-1 {
		t.Fatalf("HedgeUnitInputs = %+v, want the %d hedging policies under unit operation (disabled is the none point)", extra, len(pols)-1)
	}
	inputs := append([]study.Input{{Config: cfg, Policies: pols, Replications: 1}}, extra...)
	res, err := study.SimulateAll(inputs, study.Options{})
	if err != nil {
		t.Fatal(err)
	}
	units := study.HedgeUnits(cfg, pols, res[0], res[1:])
	if len(units) != 1+2*(len(pols)-1) || units[0].Unit != "none" || units[0].Policy != "disabled" {
		t.Fatalf("units %+v", units)
	}
	for _, u := range units[1:] {
		var want *simnet.Stats
		for _, r := range res {
			for _, p := range r.Policies {
				if p.Name == u.Policy && (r == res[0]) == (u.Unit == "page") {
					want = p.Merged
				}
			}
		}
		if got := want.Feed.Kinds[simnet.FeedQuery].QuantileMs(0.99); u.P99 != got || u.RU != want.RUMultiplier() {
			t.Errorf("%s/%s: p99 %v RU %v, want %v %v", u.Policy, u.Unit, u.P99, u.RU, got, want.RUMultiplier())
		}
	}
	if study.HedgeUnitInputs(cfg, pols[1:], 1)[1].Policies[0].Name != "disabled" {
		t.Error("without a policy that leaves hedging off, no run without hedging")
	}
}
