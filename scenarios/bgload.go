package scenarios

import (
	"math"
	"slices"
	"strconv"
	"time"

	"hedgelab/simnet"
)

// backgroundOverload refuses [[background]] load that alone keeps a
// replica with servers and no queue_limit at or beyond its servers at
// some moment (Σ rate_per_s × mean service time of the sources active
// together ≥ servers): background requests have no deadline, so nothing
// bounds the queue, and the run's memory grows without limit (issue 19:
// 7.6 GB in 40 s). The error names the rate_per_s of the source that
// tips the replica over. A service time without a finite mean counts as
// an infinite load; one whose mean is unknown is left out. It reports
// whether the check passed.
func (b *builder) backgroundOverload(cfg *simnet.Config) bool {
	var root fpath
	think := 0.0
	if cfg.Workload.Think != nil {
		think = cfg.Workload.Think.Mean()
	}
	runEnd := runLength(b.f, think)
	type edge struct {
		at   time.Duration
		busy float64 // servers kept busy; < 0 at a source's end
		src  int
	}
	for _, r := range cfg.Replicas {
		if r.Servers == 0 || r.QueueLimit > 0 {
			continue
		}
		var edges []edge
		for i, g := range cfg.Background {
			if !r.Targeted(g.Target) {
				continue
			}
			svc := g.Service
			if svc == nil {
				svc = r.Default
			}
			mean := svc.Mean()
			if math.IsNaN(mean) {
				continue
			}
			end := g.End
			if end <= 0 {
				end = max(runEnd, g.Start+1)
			}
			busy := g.RatePerSec * mean / 1000
			edges = append(edges, edge{g.Start, busy, i}, edge{end, -busy, i})
		}
		// Ends before starts at the same instant: back-to-back windows do
		// not overlap.
		slices.SortStableFunc(edges, func(x, y edge) int {
			switch {
			case x.at != y.at:
				return int(x.at - y.at)
			case x.busy < y.busy:
				return -1
			case x.busy > y.busy:
				return 1
			}
			return 0
		})
		total := 0.0
		for _, e := range edges {
			total += e.busy
			if e.busy > 0 && total >= float64(r.Servers) {
				b.fail(root.key("background").elem(e.src, "").key("rate_per_s"),
					"background load alone needs %.4g servers at replica %s (rate_per_s × mean service time, summed over the sources running together), which has %s; background requests have no deadline, so with no queue_limit its queue and the run's memory grow without limit: set replicas.%s.queue_limit, raise its servers or lower rate_per_s",
					total, r.Name, plural(r.Servers, "server", "servers"), r.Name)
				return false
			}
		}
	}
	return true
}

// plural returns "1 <one>" or "<n> <many>".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
