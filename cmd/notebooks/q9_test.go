package main

import (
	"slices"
	"testing"

	"hedgelab/internal/report"
)

// Notebook 06 reports designs with the same p99 as a tie, in table order,
// never the alphabetically first (issue 26: the "best" tail design was an
// alphabetical tie of three identical results), and skips designs over the
// RU cap.
func TestBestUnderReportsTies(t *testing.T) {
	figs := map[string]report.Figures{
		vNone:    {P99: 2862, RUMultiplier: 1},
		vPage50:  {P99: 231, RUMultiplier: 1.01},
		vBreaker: {P99: 231, RUMultiplier: 1.01},
		vPin:     {P99: 795, RUMultiplier: 1.01},
		vWhole50: {P99: 100, RUMultiplier: 1.5}, // over the cap
	}
	names, f := bestUnder(figs)
	if !slices.Equal(names, []string{vPage50, vBreaker}) || f.P99 != 231 {
		t.Errorf("bestUnder = %v (p99 %v), want [%s %s] at 231", names, f.P99, vPage50, vBreaker)
	}
	if got := ties(names); got != "a tie of **"+vPage50+"** and **"+vBreaker+"**" {
		t.Errorf("ties = %q", got)
	}
	if got := ties(names[:1]); got != "**"+vPage50+"**" {
		t.Errorf("ties of one = %q", got)
	}
}

// An exact interval contains the closed form where the normal one missed
// it (issue 26: 0.58% [0.20, 0.95] against 1.00%).
func TestShareExactInterval(t *testing.T) {
	s := newShare(9, 1559)
	if !s.contains(0.01) || s.cell() != "0.58% [0.26%, 1.09%]" {
		t.Errorf("share 9/1559 = %s, contains 1%%: %v", s.cell(), s.contains(0.01))
	}
}
