package study

// The clairvoyant bound of issue 25: a hedger that knows every
// operation's latencies in advance.

import (
	"math"
	"slices"
	"sort"
)

// Foresight is what a clairvoyant hedger knows of one operation: its
// latency unhedged (ms), its latency had its alternate been sent with it
// (ms), and the RU one more attempt of it costs.
type Foresight struct {
	Unhedged, Hedged float64
	RU               float64
}

// ClairvoyantQuantile returns the lowest quantile q (0..1) of the
// operations' latencies a hedger can reach that knows each operation's
// two latencies in advance and may spend extraRU more RU than no hedging:
// it hedges at once exactly the operations that pull the quantile down,
// cheapest first. An operation is counted at its hedged latency only if
// hedged (at most min(Unhedged, Hedged)); the quantile is the value at
// rank ceil(q × n) of n. It returns NaN for no operation.
func ClairvoyantQuantile(ops []Foresight, q, extraRU float64) float64 {
	n := len(ops)
	if n == 0 {
		return math.NaN()
	}
	allowed := n - int(math.Ceil(q*float64(n))) // operations that may stay above the quantile
	cands := make([]float64, 0, 2*n)
	for _, o := range ops {
		cands = append(cands, o.Unhedged, math.Min(o.Unhedged, o.Hedged))
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	var costs []float64
	// reach reports whether the quantile can be at most l for extraRU.
	reach := func(l float64) bool {
		above, stuck := 0, 0
		costs = costs[:0]
		for _, o := range ops {
			if o.Unhedged <= l {
				continue
			}
			above++
			if o.Hedged <= l {
				costs = append(costs, o.RU)
			} else {
				stuck++
			}
		}
		need := above - allowed
		if need <= 0 {
			return true
		}
		if stuck > allowed || need > len(costs) {
			return false
		}
		slices.Sort(costs)
		spent := 0.0
		for _, c := range costs[:need] {
			spent += c
		}
		return spent <= extraRU*(1+1e-12)
	}
	i := sort.Search(len(cands), func(i int) bool { return reach(cands[i]) })
	if i == len(cands) {
		return cands[len(cands)-1]
	}
	return cands[i]
}
