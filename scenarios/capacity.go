package scenarios

import (
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
	b.integer(rp.key("queue_limit"), "replicas.queue_limit", int64(r.QueueLimit))
	if r.QueueLimit > 0 && r.Servers == 0 {
		b.fail(rp.key("queue_limit"), "needs servers > 0 (a replica without servers has no queue)")
	}
	rep.QueueLimit = max(r.QueueLimit, 0)
	if r.OverflowStatus != "" || b.set(rp.key("overflow_status")) {
		st := overflowStatuses[r.OverflowStatus]
		switch {
		case !b.enum(rp.key("overflow_status"), "replicas.overflow_status", r.OverflowStatus, "status", true):
		case r.QueueLimit == 0:
			b.fail(rp.key("overflow_status"), "applies only with queue_limit > 0")
		}
		rep.OverflowStatus = st
	}
	if r.Cancel != "" || b.set(rp.key("cancel")) {
		if b.enum(rp.key("cancel"), "replicas.cancel", r.Cancel, "mode", true) {
			rep.Cancel, _ = simnet.ParseCancelMode(r.Cancel)
		}
	}
}

// background checks [[background]] into cfg.
func (b *builder) background(cfg *simnet.Config, nm *names) {
	f := b.f
	var root fpath
	for i, g := range f.Background {
		gp := root.key("background").elem(i, "")
		b.target(gp.key("target"), g.Target, nm)
		bg := simnet.Background{Target: g.Target, RatePerSec: g.RatePerS}
		b.num(gp.key("rate_per_s"), "background.rate_per_s", g.RatePerS)
		if g.Service != nil {
			bg.Service = b.dist(gp.key("service"), *g.Service)
		}
		m := b.n
		bg.Start = b.time(gp.key("start_s"), "background.start_s", g.StartS)
		if g.EndS != nil {
			bg.End = b.time(gp.key("end_s"), "background.end_s", *g.EndS)
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
		b.integer(gp.key("retries"), "background.retries", int64(g.Retries))
		bg.Retries = min(max(g.Retries, 0), simnet.MaxBackgroundRetries)
		if g.RetryBackoffMs != nil {
			m := b.n
			bg.RetryBackoff = b.time(gp.key("retry_backoff_ms"), "background.retry_backoff_ms", *g.RetryBackoffMs)
			if b.n == m && g.Retries == 0 {
				b.fail(gp.key("retry_backoff_ms"), "applies only with retries > 0")
			}
		}
		cfg.Background = append(cfg.Background, bg)
	}
}
