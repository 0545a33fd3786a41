package scorecard

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/study"
	"hedgelab/simnet"
)

// foresight is one replication's operations of the headline kind as a
// clairvoyant hedger knows them.
type foresight struct{ ops []study.Foresight }

// clairvoyantWhy says why the clairvoyant bound does not hold for cfg, or
// "" when it does. The bound pairs each operation's latency without
// hedging with its latency had its alternate been sent at once, from two
// runs on the same keyed draws (common random numbers): it holds only
// where one operation's latencies do not depend on what the others did.
func clairvoyantWhy(cfg *simnet.Config) string {
	switch {
	case cfg.ModelsCapacity():
		return "queueing at replicas (a hedge's load changes other operations' latencies)"
	case cfg.ThroughputControl != nil:
		return "a client throughput-control gate (hedges take tokens other operations need)"
	case cfg.RUBudget != nil:
		return "an RU budget (hedges spend RU other operations need)"
	case cfg.Feed != nil:
		return "feed operations (an operation is many races)"
	case cfg.Workload.RatePerSec <= 0:
		return "a closed loop (arrivals follow latencies)"
	}
	return ""
}

// opRecord is one finished operation of a clairvoyant run.
type opRecord struct {
	start    time.Duration
	lat      float64 // ms
	ru       float64
	matchKey string
}

// foresee runs replications 0..n-1 of cfg twice — without hedging, and
// with every operation's alternate sent 1 ns after its primary (the
// breaker off, so routing does not change) — and pairs the operations of
// kind by start time and partition.
func foresee(ctx context.Context, par int, cfg *simnet.Config, kind hedging.OperationKind, n int) ([]foresight, error) {
	c := *cfg
	c.Client.ConsecutiveHedgeWinThreshold = math.MaxInt32 // no trip: both runs route alike
	pols := []simnet.Policy{
		{Name: "clairvoyant-unhedged", New: func() (hedging.AvailabilityStrategy, error) { return hedging.Disabled, nil }},
		{Name: "clairvoyant-at-once", New: func() (hedging.AvailabilityStrategy, error) {
			return hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(time.Nanosecond))), nil
		}},
	}
	recs := make([][2][]opRecord, n)
	var jobs []func() error
	for r := range n {
		for p := range pols {
			jobs = append(jobs, func() error {
				var out []opRecord
				_, err := simnet.Run(&c, pols[p], r, simnet.RunOptions{Context: ctx, OnComplete: func(race *hedging.Race, op *hedging.Operation) {
					if op.Kind == kind {
						out = append(out, opRecord{start: race.Start(), lat: float64(race.DoneAt()-race.Start()) / float64(time.Millisecond),
							ru: race.RequestCharge(), matchKey: op.Partition})
					}
				}})
				if err != nil {
					return fmt.Errorf("clairvoyant bound: %w", err)
				}
				slices.SortFunc(out, func(a, b opRecord) int {
					if a.start != b.start {
						return cmp.Compare(a.start, b.start)
					}
					return cmp.Compare(a.matchKey, b.matchKey)
				})
				recs[r][p] = out
				return nil
			})
		}
	}
	if err := pool(ctx, par, jobs); err != nil {
		return nil, err
	}
	out := make([]foresight, n)
	for r := range n {
		u, h := recs[r][0], recs[r][1]
		i, j := 0, 0
		for i < len(u) && j < len(h) {
			switch a, b := u[i], h[j]; {
			case a.start < b.start || a.start == b.start && a.matchKey < b.matchKey:
				i++
			case a.start > b.start || a.matchKey > b.matchKey:
				j++
			default:
				out[r].ops = append(out[r].ops, study.Foresight{Unhedged: a.lat, Hedged: b.lat, RU: a.ru})
				i++
				j++
			}
		}
	}
	return out, nil
}
