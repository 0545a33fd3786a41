package threshold

import (
	"testing"
)

// check's lost rule is a binomial test of wins against the wins the
// estimate expected (no win where at least recLostWins were expected:
// e^-2, 14%, by chance, whatever the number of hedges); it holds before
// the ledger has MinSamples hedges in it (population seed 1796189285,
// member 56: fleet instances whose ledgers never held 20 hedges kept
// hedging at 0 wins of ~300). The saving rule still waits for MinSamples.
func TestCheckLostNeedsNoCountOfHedges(t *testing.T) {
	for _, c := range []struct {
		name                  string
		hedges, wins, expWins float64
		gain                  float64
		want                  bool
	}{
		{"5 hedges, 2.5 wins expected, none won: lost", 5, 0, 2.5, 0, false},
		{"5 hedges, 2.5 expected, one won: stands", 5, 1, 2.5, 50, true},
		{"5 hedges, 1.5 expected, none won: too few expected to say", 5, 0, 1.5, 0, true},
		{"5 hedges, one won saving nothing: too few for the saving rule", 5, 1, 2.5, 0, true},
		{"40 hedges, 2.5 expected, none won: lost", 40, 0, 2.5, 0, false},
		{"40 hedges, 10 won saving ~0: small", 40, 10, 10, 0.001, false},
		{"40 hedges, 10 won saving 100 ms each: stands", 40, 10, 10, 1000, true},
	} {
		p, s, a := vetoFixture(t)
		a.hedges, a.wins, a.expWins, a.gain = c.hedges, c.wins, c.expWins, c.gain
		if got := p.check(s, a); got != c.want {
			t.Errorf("%s: check = %v, want %v", c.name, got, c.want)
		}
	}
}
