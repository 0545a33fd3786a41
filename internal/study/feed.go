package study

import (
	"math"

	"hedgelab/internal/report"
	"hedgelab/simnet"
)

// feedValues are one replication's feed figures whose interval comes
// from the replications (ratios of sums and quantiles, not shares of
// counts): the setup share of query latency, the polls' RU multiplier and
// the feed operations' p99 (feedOpsP99).
func feedValues(s *simnet.Stats) []float64 {
	if s.Feed == nil {
		return nil
	}
	p99, _ := feedOpsP99(s)
	return []float64{setupShare(s.Feed), s.Feed.PollRUMultiplier(), p99}
}

// setupShare is the share of the queries' latency before their first page,
// NaN without queries.
func setupShare(f *simnet.FeedStats) float64 {
	q := &f.Kinds[simnet.FeedQuery]
	if q.Ops == 0 {
		return math.NaN()
	}
	return q.SetupShare()
}

// share is k of n as a report.Share scaled by scale, with its exact
// interval (ProportionCI); rate and interval NaN when n is 0.
func share(k, n int64, scale float64) report.Share {
	if n <= 0 {
		return report.Share{N: k, Of: n, Rate: math.NaN(), CI: [2]float64{math.NaN(), math.NaN()}}
	}
	ci := ProportionCI(k, n)
	return report.Share{N: k, Of: n, Rate: float64(k) / float64(n) * scale, CI: [2]float64{ci[0] * scale, ci[1] * scale}}
}

// hasFeedFigures reports whether merged measurements have feed figures:
// a run with feeds in which a page was raced or a feed operation ran.
func hasFeedFigures(m *simnet.Stats) bool {
	f := m.Feed
	if f == nil {
		return false
	}
	return f.Races > 0 || f.Kinds[simnet.FeedQuery].Ops+f.Kinds[simnet.FeedReadMany].Ops+f.Kinds[simnet.FeedChangeFeed].Ops > 0
}

// feedFigures returns a policy's Phase 2 figures (nil for a run without
// feeds). Shares of counts (pages gated, stale, monotonic, metadata reads
// hedged, hedged pages, change-feed duplicates and skips) are pooled over
// the replications with exact intervals; the setup share and the polls' RU
// multiplier are, with several replications, the mean over them with a
// Student-t interval, as the headline figures are.
func feedFigures(p PolicyResult) *report.FeedFigures {
	m := p.Merged
	if !hasFeedFigures(m) {
		return nil
	}
	f := m.Feed
	nan := [2]float64{math.NaN(), math.NaN()}
	pages := f.Races - f.SetupReads
	legs := share(f.PagesHedged, pages, 1)
	legs.Rate, legs.CI = 1+legs.Rate, [2]float64{1 + legs.CI[0], 1 + legs.CI[1]}
	out := &report.FeedFigures{
		Pages:            pages,
		LegsPerPage:      legs,
		Gated:            share(f.PagesGated, pages, 1),
		Stale:            share(f.StalePages, f.Pages, 1),
		Monotonic:        share(f.MonotonicViolations, f.Pages, 1),
		MetadataHedges:   share(f.SetupReadsHedged, f.SetupReads, 1),
		Changes:          f.Changes,
		SetupShare:       report.Estimate{Value: setupShare(f), CI: nan},
		PollRUMultiplier: report.Estimate{Value: f.PollRUMultiplier(), CI: nan},
	}
	out.Duplicates = report.Share{N: f.Duplicates, Of: f.Changes, Rate: math.NaN(), CI: nan}
	out.Skip = report.Share{N: f.Skips, Of: f.Changes, Rate: math.NaN(), CI: nan}
	if f.Changes > 0 {
		// A re-delivery is one of the deliveries: its share of them is a
		// proportion, rescaled to the changes committed.
		d := share(f.Duplicates, f.Delivered, 1e6*float64(f.Delivered)/float64(f.Changes))
		if f.Delivered == 0 {
			d = report.Share{Rate: 0, CI: [2]float64{0, 0}}
		}
		out.Duplicates.Rate, out.Duplicates.CI = d.Rate, d.CI
		s := share(f.Skips, f.Changes, 1e6)
		out.Skip.Rate, out.Skip.CI = s.Rate, s.CI
	}
	if len(p.PerRepFeed) > 1 {
		per := make([][]float64, 3)
		for _, v := range p.PerRepFeed {
			for i, x := range v {
				per[i] = append(per[i], x)
			}
		}
		for i, e := range []*report.Estimate{&out.SetupShare, &out.PollRUMultiplier} {
			ci := CI95(per[i])
			e.Value, e.CI = (ci[0]+ci[1])/2, ci
		}
		out.SetupShare.CI[0] = max(out.SetupShare.CI[0], 0)
	}
	return out
}
