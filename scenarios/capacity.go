package scenarios

import (
	"math"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// set reports whether the file writes p itself (an explicit "" is not
// the key's absence).
func (b *builder) set(p fpath) bool {
	_, ok := b.loc.first[joinPath(p.loc)]
	return ok
}

// overflowStatuses are the statuses a full queue may answer with
// (replicas.overflow_status).
var overflowStatuses = map[string]hedging.Status{
	"503":      {Code: 503},
	"429/3200": {Code: 429, SubStatus: hedging.SubStatusRUBudgetExceeded},
	"408":      {Code: 408},
}

// replicaCapacity checks a replica's queue_limit, overflow_status and
// cancel keys into rep.
func (b *builder) replicaCapacity(rp fpath, r *Replica, rep *simnet.Replica) {
	b.intRange(rp.key("queue_limit"), r.QueueLimit, 0, maxCount)
	if r.QueueLimit > 0 && r.Servers == 0 {
		b.fail(rp.key("queue_limit"), "needs servers > 0 (a replica without servers has no queue)")
	}
	rep.QueueLimit = max(r.QueueLimit, 0)
	if r.OverflowStatus != "" || b.set(rp.key("overflow_status")) {
		st, ok := overflowStatuses[r.OverflowStatus]
		switch {
		case !ok:
			b.fail(rp.key("overflow_status"), `unknown status %q (want "503", "429/3200" or "408")`, r.OverflowStatus)
		case r.QueueLimit == 0:
			b.fail(rp.key("overflow_status"), "applies only with queue_limit > 0")
		}
		rep.OverflowStatus = st
	}
	if r.Cancel != "" || b.set(rp.key("cancel")) {
		m, err := simnet.ParseCancelMode(r.Cancel)
		if err != nil {
			b.fail(rp.key("cancel"), `unknown mode %q (want "queued", "in_service", "none" or "on_start")`, r.Cancel)
		}
		rep.Cancel = m
	}
}

// maxBackgroundRetries bounds background.retries.
const maxBackgroundRetries = simnet.MaxBackgroundRetries

// background checks [[background]] into cfg.
func (b *builder) background(cfg *simnet.Config, nm *names) {
	f := b.f
	var root fpath
	for i, g := range f.Background {
		gp := root.key("background").elem(i, "")
		b.target(gp.key("target"), g.Target, nm)
		bg := simnet.Background{Target: g.Target, RatePerSec: g.RatePerS}
		if !(g.RatePerS > 0) || math.IsInf(g.RatePerS, 0) {
			b.fail(gp.key("rate_per_s"), "must be > 0 (requests per second at each targeted replica), got %g", g.RatePerS)
		}
		if g.Service != nil {
			bg.Service = b.dist(gp.key("service"), *g.Service)
		}
		m := b.n
		bg.Start = b.dur(gp.key("start_s"), g.StartS, time.Second)
		if g.EndS != nil {
			bg.End = b.dur(gp.key("end_s"), *g.EndS, time.Second)
			switch {
			case b.n > m:
			case *g.EndS <= g.StartS:
				b.fail(gp.key("end_s"), "must be > start_s (%g), got %g", g.StartS, *g.EndS)
			case f.DurationS > 0 && *g.EndS > f.DurationS:
				b.fail(gp.key("end_s"), "must be <= duration_s (%g), got %g", f.DurationS, *g.EndS)
			}
		}
		if b.n == m && f.DurationS > 0 && g.StartS >= f.DurationS {
			b.fail(gp.key("start_s"), "must be < duration_s (%g), got %g", f.DurationS, g.StartS)
		}
		b.intRange(gp.key("retries"), g.Retries, 0, maxBackgroundRetries)
		bg.Retries = min(max(g.Retries, 0), maxBackgroundRetries)
		if g.RetryBackoffMs != nil {
			m := b.n
			bg.RetryBackoff = b.posDur(gp.key("retry_backoff_ms"), *g.RetryBackoffMs, time.Millisecond)
			if b.n == m && g.Retries == 0 {
				b.fail(gp.key("retry_backoff_ms"), "applies only with retries > 0")
			}
		}
		cfg.Background = append(cfg.Background, bg)
	}
}
