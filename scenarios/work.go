package scenarios

import (
	"hedgelab/hedging/feed"
	"hedgelab/simnet"
)

// MaxSimulatedWork bounds the expected work of a whole scenario: the
// requests one run is expected to send (simnet.Config.ExpectedWork: its
// point operations, query and ReadMany pages, setup reads, change-feed
// pages and background requests) × replications × policies, × 2 for a
// scenario with queries or ReadMany calls (hedgesim run's hedge-unit study
// runs its policies again under the other hedge unit). A page is a request
// as a point read is, so it is the bound MaxSimulatedOps puts on the
// operations alone.
const MaxSimulatedWork = 2e9

// workLimit checks one query's pages against simnet.MaxOperationPages and
// the scenario's expected work against MaxSimulatedWork, naming the field
// of the largest source of work, and reports whether both passed.
func (b *builder) workLimit(cfg *simnet.Config, reps, pols int) bool {
	f := b.f
	var root fpath
	if ff := f.Feed; ff != nil && cfg.Feed != nil {
		if n := cfg.Feed.OperationPages(); n > simnet.MaxOperationPages {
			fp := root.key("feed")
			p, lower := fp.key("fan_out"), "fan_out"
			switch {
			case ff.Pages != nil:
				p, lower = fp.key("pages"), "pages or fan_out"
			case ff.PagesDist != nil:
				p, lower = fp.key("pages_dist"), "pages_dist, max_pages or fan_out"
			}
			copies := ""
			if cfg.Feed.HedgeUnit == feed.UnitOperation {
				copies = `, × 2 copies with hedge_unit = "operation"`
			}
			b.fail(p, "a query may race %s pages (fan_out %d × the largest pages per leaf%s); the limit is %d pages per operation: lower %s",
				count(n), max(cfg.Feed.FanOut, 1), copies, simnet.MaxOperationPages, lower)
			return false
		}
	}
	w := cfg.ExpectedWork()
	runs := float64(reps) * float64(pols)
	if cfg.HasFeedOperations() {
		runs *= 2 // hedgesim run's hedge-unit study runs the policies again (at most all of them, or one without hedging)
	}
	total := w.Total() * runs
	if total <= MaxSimulatedWork {
		return true
	}
	type source struct {
		n     float64
		p     fpath
		lower string
	}
	srcs := []source{
		{w.Operations - w.FeedOperations, root.key("duration_s"), "lower duration_s, rate_per_s or replications"},
		{w.Pages, root.key("feed", "pages"), "lower the feed's pages or fan_out, the queries' share of the mix, duration_s or replications"},
		{w.SetupReads, root.key("feed", "setup", "query_plan"), "lower the queries' share of the mix, duration_s or replications"},
		{w.PollPages, root.key("feed", "change_feed", "poll_interval_ms"), "raise poll_interval_ms, or lower the partitions, duration_s or replications"},
		{w.Background, root.key("background"), "lower the background rate_per_s, its window, duration_s or replications"},
	}
	if f.MaxOps > 0 {
		srcs[0].p, srcs[0].lower = root.key("max_ops"), "lower max_ops or replications"
	}
	if f.Feed != nil && f.Feed.Pages == nil {
		srcs[1].p = root.key("feed", "fan_out")
		if f.Feed.PagesDist != nil {
			srcs[1].p = root.key("feed", "pages_dist")
		}
	}
	worst := srcs[0]
	for _, s := range srcs[1:] {
		if s.n > worst.n {
			worst = s
		}
	}
	b.fail(worst.p, "would send %s requests (per run: %s operations, %s pages, %s setup reads, %s change-feed pages, %s background requests; × %d replications × %d policies); the limit is %g: %s",
		count(total), count(w.Operations-w.FeedOperations), count(w.Pages), count(w.SetupReads), count(w.PollPages), count(w.Background),
		reps, pols, float64(MaxSimulatedWork), worst.lower)
	return false
}
