package simnet

import (
	"cmp"
	"math"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// ExpectedWork returns the units of work one run of c is expected to do:
// a race for each point operation; for each query its setup reads and
// fan_out × the mean pages per leaf, for each ReadMany call its leaves; a
// page per leaf and poll of the change-feed pollers, plus the pages the
// committed changes fill; and a request per background arrival (and
// retry). Arrivals are min(the largest open-loop rate × Duration, MaxOps),
// or a closed loop's clients × Duration / mean think time. It is an
// expectation, not a bound: the run's work invariant allows a wide margin
// above it (eventBound). c must be valid ([Config.Validate]).
func (c *Config) ExpectedWork() float64 {
	ops, length := c.expectedArrivals()
	w := &c.Workload
	perOp := 1.0
	writes := 0.0 // share of writes in the mix
	if mix := w.Mix; len(mix) > 0 {
		total := 0.0
		for _, m := range mix {
			total += m.Weight
		}
		perOp = 0
		for _, m := range mix {
			share := m.Weight / total
			if m.Kind.IsWrite() {
				writes += share
			}
			perOp += share * c.racesPerOp(m.Kind)
		}
	}
	work := ops * perOp
	if f := c.Feed; f != nil {
		setup := 0.0
		if f.Setup.Collection {
			setup++
		}
		if f.Setup.PKRanges {
			setup++
		}
		work += setup * float64(c.Fleet.size()) // each instance's cold cache
		if cf := f.ChangeFeed; cf.Pollers > 0 && cf.PollInterval > 0 {
			parts := max(w.Partitions, 1)
			polls := float64(cf.Pollers) * (length/cf.PollInterval.Seconds() + 1)
			leaves := math.Ceil(float64(parts) / float64(cf.Pollers))
			work += polls*leaves + ops*writes/float64(f.itemsPerPage())
		}
	}
	for _, b := range c.Background {
		end := length
		if b.End > 0 {
			end = min(end, b.End.Seconds())
		}
		n := 0
		for i := range c.Replicas {
			if c.Replicas[i].Targeted(b.Target) {
				n++
			}
		}
		work += b.RatePerSec * max(end-b.Start.Seconds(), 0) * float64(n) * float64(1+b.Retries)
	}
	return work
}

// expectedArrivals returns the expected operations of one run of c and
// the seconds during which they arrive.
func (c *Config) expectedArrivals() (ops, length float64) {
	w := &c.Workload
	length = c.Duration.Seconds()
	switch {
	case w.RatePerSec > 0:
		rate := w.maxRate()
		ops = rate * length
		if c.MaxOps > 0 && (length == 0 || float64(c.MaxOps) < ops) {
			ops, length = float64(c.MaxOps), float64(c.MaxOps)/rate
		}
	case w.Clients > 0:
		think := 0.0
		if w.Think != nil {
			think = w.Think.Mean()
		}
		perSec := float64(w.Clients) * 1000 / math.Max(think, 1e-3)
		ops = perSec * length
		if c.MaxOps > 0 && (length == 0 || float64(c.MaxOps) < ops) {
			ops, length = float64(c.MaxOps), float64(c.MaxOps)/perSec
		}
	}
	return ops, length
}

// racesPerOp is the expected races of one operation of kind: 1 for a
// point operation; with a Feed, a query's query-plan read and its leaves'
// pages, a ReadMany call's leaves.
func (c *Config) racesPerOp(kind hedging.OperationKind) float64 {
	f := c.Feed
	if f == nil {
		return 1
	}
	parts := max(c.Workload.Partitions, 1)
	switch kind {
	case hedging.QueryPage:
		pages := 1.0
		if f.Pages != nil {
			pages = math.Min(math.Max(f.Pages.Mean(), 1), float64(f.maxPages()))
			if math.IsNaN(pages) {
				pages = float64(f.maxPages())
			}
		}
		r := float64(max(f.FanOut, 1)) * pages
		if f.Setup.QueryPlan {
			r++
		}
		if f.HedgeUnit == feed.UnitOperation {
			r *= 2 // two copies of the page loop
		}
		return r
	case hedging.ReadManyPage:
		n := f.readManyItems()
		return float64(min(n, parts) + n/feed.MaxReadManyIDs)
	}
	return 1
}

// eventBound is the most events a run of c may process before its work
// invariant fails: a wide margin (8 events an attempt, every attempt a
// leg may make on both legs, 4 times the expected work, plus 2^20) over
// what its configuration leads one to expect.
func (c *Config) eventBound() int64 {
	attempts := float64(cmp.Or(c.Client.Retry.MaxAttempts, 3))
	b := 4*c.ExpectedWork()*8*2*attempts + (1 << 20)
	if b > math.MaxInt64/2 || math.IsNaN(b) {
		return math.MaxInt64 / 2
	}
	return int64(b)
}
