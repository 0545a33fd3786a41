package simnet_test

import (
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// Stats.KindLatency splits the operations by kind: every operation counts
// under exactly one kind (a feed query under query), so the kinds' counts
// sum to Ops, and each kind's quantiles lie within the run's; merging
// replications adds them.
func TestKindLatencySplitsOperations(t *testing.T) {
	for _, name := range []string{"writes-slow", "feed-fan-out", "kind-mix"} {
		var sc *scenarios.Scenario
		var err error
		if name == "kind-mix" {
			sc, err = scenarios.Load("../scenarios/testdata/policy-cases/third-set/kind-mix-pooled-p99.toml")
		} else {
			sc, err = scenarios.Get(name)
		}
		if err != nil {
			t.Fatal(err)
		}
		cfg, pols, err := sc.Config()
		if err != nil {
			t.Fatal(err)
		}
		c := *cfg
		c.Duration, c.MaxOps = min(c.Duration, 20*time.Second), 20000
		merged := &simnet.Stats{Latency: simnet.NewLatencyHistogram()}
		kinds := 0
		for r := range 2 {
			st, err := simnet.Run(&c, pols[0], r, simnet.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			kinds = 0
			for k := range simnet.KindSlots {
				kind := hedging.OperationKind(k)
				n := st.KindOps(kind)
				sum += n
				if n == 0 {
					continue
				}
				kinds++
				if q := st.KindQuantileMs(kind, 0.99); q > st.QuantileMs(1)*1.001 || q <= 0 {
					t.Errorf("%s: %v p99 %v ms outside the run's (max %v)", name, kind, q, st.QuantileMs(1))
				}
			}
			if sum != st.Ops {
				t.Errorf("%s: kinds count %d operations, the run %d", name, sum, st.Ops)
			}
			merged.Merge(st)
		}
		var sum int64
		for k := range simnet.KindSlots {
			sum += merged.KindOps(hedging.OperationKind(k))
		}
		if want := map[string]int{"writes-slow": 3, "feed-fan-out": 1, "kind-mix": 2}[name]; sum != merged.Ops || kinds != want {
			t.Errorf("%s merged: kinds %d operations of %d, %d kinds (want %d)", name, sum, merged.Ops, kinds, want)
		}
	}
}
