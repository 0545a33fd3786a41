package scorecard

import (
	"math"
	"testing"

	"hedgelab/internal/study"
)

// card returns a scenario's card whose recommended policy has regret
// mean (a decided interval ±0.01 around it) and whose conditions change as
// changes says.
func card(name string, mean float64, changes string) *Card {
	return &Card{Scenario: name, Headline: 0, Changes: changes, Decided: true,
		Policies: []Policy{{Name: Recommended, Roster: Recommended,
			Regret: study.Gain{Mean: mean, Lo: mean - 0.01, Hi: mean + 0.01, N: 3}}}}
}

// The conditions-change verdict is a paired interval over the members: the
// mean of their regrets with a Student-t interval, only over the members
// whose conditions change, with the members a test would need.
func TestChangingVerdict(t *testing.T) {
	cases := []struct {
		name    string
		regrets []float64
		verdict int
	}{
		{"beats", []float64{-0.10, -0.12, -0.08, -0.11, -0.09}, -1},
		{"behind", []float64{0.10, 0.12, 0.08, 0.11, 0.09}, 1},
		{"mixed", []float64{-0.2, 0.2, -0.1, 0.1, 0.0}, 0},
		{"one member", []float64{-0.5}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cards []*Card
			for i, r := range tc.regrets {
				cards = append(cards, card(tc.name+string(rune('a'+i)), r, "episodes"))
			}
			// A member whose conditions hold is in the whole population's
			// regret, not in the changing members'.
			cards = append(cards, card("steady", 3.0, ""))
			s := Summarize(cards)
			c := s.Changing
			if c.N != len(tc.regrets) || c.Scenarios != len(tc.regrets) || s.RegretN != len(tc.regrets)+1 {
				t.Fatalf("changing N %d of %d, all %d; want %d, %d", c.N, c.Scenarios, s.RegretN, len(tc.regrets), len(tc.regrets)+1)
			}
			if got := c.Verdict(); got != tc.verdict {
				t.Errorf("verdict %d (mean %v %v), want %d", got, c.Mean, c.MeanCI, tc.verdict)
			}
			ci := study.CI95(tc.regrets)
			if math.Abs(c.MeanCI[0]-ci[0]) > 1e-12 || math.Abs(c.MeanCI[1]-ci[1]) > 1e-12 {
				t.Errorf("interval %v, want %v", c.MeanCI, ci)
			}
		})
	}
}

// Power: ((z.975 + z.8)·sd/effect)² members, rounded up.
func TestMembersNeeded(t *testing.T) {
	cases := []struct {
		effect, sd, want float64
	}{
		{0.05, 0.10, 32}, // (2.8016·2)² = 31.4
		{-0.05, 0.10, 32},
		{0.10, 0.10, 8}, // 2.8016² = 7.85
		{0.05, 0, 0},
		{0.05, math.NaN(), 0},
		{0, 0.1, math.Inf(1)},
	}
	for _, tc := range cases {
		if got := membersNeeded(tc.effect, tc.sd); got != tc.want {
			t.Errorf("membersNeeded(%v, %v) = %v, want %v", tc.effect, tc.sd, got, tc.want)
		}
	}
	// Summarize states it from the members' sd.
	var cards []*Card
	for i, r := range []float64{-0.1, 0.1, -0.1, 0.1} {
		cards = append(cards, card(string(rune('a'+i)), r, "rate_changes"))
	}
	c := Summarize(cards).Changing
	if want := membersNeeded(PowerEffect, c.SD); c.Need5 != want || math.Abs(c.SD-0.11547005383792516) > 1e-12 || !math.IsInf(c.Need, 1) {
		t.Errorf("sd %v need %v need5 %v, want sd 0.1155, need +Inf, need5 %v", c.SD, c.Need, c.Need5, want)
	}
}
