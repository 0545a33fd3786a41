package study

import (
	"fmt"
	"math"
	"sync/atomic"

	"hedgelab/internal/report"
	"hedgelab/simnet"
)

// FigureError reports a policy's figures that cannot be right, found
// before anything is reported (issue 24): Invariant is "figures" (every
// printed figure finite, percentiles ordered, each inside its interval),
// "rates" (every rate in [0, 1]; the latency and failover hedge rates
// sum to the hedge rate), "ru-multiplier" (at least 1 when RU was
// returned, undefined — not a number — when none was) or "common-arrivals" (an
// open loop's policies see the same arrivals: common random numbers).
type FigureError struct {
	Invariant string
	Policy    string
	Detail    string
}

// Error returns "study: policy "p": invariant NAME broken: DETAIL".
func (e *FigureError) Error() string {
	return fmt.Sprintf("study: policy %q: invariant %s broken: %s", e.Policy, e.Invariant, e.Detail)
}

// plantFigures, set only by tests (export_test.go), changes policy i's
// figures (or its merged measurements, which the report is made of) of a
// simulation on workers workers before they are checked, to show that
// each check fails.
var plantFigures atomic.Pointer[func(i, workers int, f *report.Figures, m *simnet.Stats)]

// verify checks the figures of every policy of res (a simulation of cfg on
// workers workers) and returns the first broken invariant.
func verify(cfg *simnet.Config, res *Result, workers int) error {
	for i, p := range res.Policies {
		f := Figures(p)
		if h := plantFigures.Load(); h != nil {
			(*h)(i, workers, &f, p.Merged)
		}
		if err := verifyFigures(&f, p.Merged); err != nil {
			return err
		}
		if q := res.Policies[0]; i > 0 && cfg.Workload.RatePerSec > 0 && p.Merged.Arrivals != q.Merged.Arrivals {
			return &FigureError{Invariant: "common-arrivals", Policy: p.Name,
				Detail: fmt.Sprintf("%d operations arrived, against %d for policy %q: an open loop's arrivals are the same for every policy", p.Merged.Arrivals, q.Merged.Arrivals, q.Name)}
		}
	}
	return nil
}

// verifyFigures checks one policy's figures f (merged measurements m).
func verifyFigures(f *report.Figures, m *simnet.Stats) error {
	fail := func(name, format string, args ...any) error {
		return &FigureError{Invariant: name, Policy: f.Policy, Detail: fmt.Sprintf(format, args...)}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	lat := []struct {
		name string
		v    float64
	}{{"p50_ms", f.P50}, {"p90_ms", f.P90}, {"p99_ms", f.P99}, {"p999_ms", f.P999}, {"p9999_ms", f.P9999}, {"max_ms", f.Max}, {"mean_ms", f.Mean}}
	for _, x := range lat {
		if !finite(x.v) || x.v < 0 {
			return fail("figures", "%s = %g: not a finite latency >= 0", x.name, x.v)
		}
	}
	const eps = 1e-9
	for i := 1; i < 6; i++ {
		if lat[i].v < lat[i-1].v*(1-eps)-eps {
			return fail("figures", "%s = %g is below %s = %g", lat[i].name, lat[i].v, lat[i-1].name, lat[i-1].v)
		}
	}
	// Latencies are recorded to the nearest µs with 3 significant digits:
	// the exact mean may pass the histogram's maximum by that much.
	if f.Mean > f.Max*(1+1e-3)+0.0005 {
		return fail("figures", "mean_ms = %g is above max_ms = %g", f.Mean, f.Max)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"hedge_rate", f.HedgeRate}, {"hedge_rate_latency", f.HedgeRateLatency}, {"hedge_rate_failover", f.HedgeRateFailover},
		{"alternate_win_rate", f.AlternateWinRate}, {"error_rate", f.ErrorRate}} {
		if !(r.v >= 0 && r.v <= 1) {
			return fail("rates", "%s = %g, outside [0, 1]", r.name, r.v)
		}
	}
	if d := f.HedgeRateLatency + f.HedgeRateFailover - f.HedgeRate; math.Abs(d) > 1e-9 {
		return fail("rates", "hedge_rate_latency (%g) + hedge_rate_failover (%g) != hedge_rate (%g)", f.HedgeRateLatency, f.HedgeRateFailover, f.HedgeRate)
	}
	for _, r := range f.Replicas {
		if !(r.Utilisation >= 0 && r.Utilisation <= 1+eps) && !(math.IsNaN(r.Utilisation) && r.Servers == 0) {
			return fail("rates", "replica %s: utilisation %g, outside [0, 1]", r.Replica, r.Utilisation)
		}
		for _, v := range []float64{r.QueueP99, r.BackgroundP99, r.BackgroundP999} {
			if math.IsInf(v, 0) || v < 0 {
				return fail("figures", "replica %s: a figure is %g", r.Replica, v)
			}
		}
	}
	switch ru := f.RUMultiplier; {
	case m.RUReturned > 0 && !(ru >= 1-eps):
		return fail("ru-multiplier", "ru_multiplier = %g with %g RU charged and %g returned: a multiplier is at least 1", ru, m.RUCharged, m.RUReturned)
	case m.RUReturned > 0 && !finite(ru):
		return fail("ru-multiplier", "ru_multiplier = %g with %g RU returned", ru, m.RUReturned)
	case m.RUReturned == 0 && !math.IsNaN(ru):
		return fail("ru-multiplier", "ru_multiplier printed as %g though no RU was returned to callers (%g charged): it is undefined", ru, m.RUCharged)
	}
	for k, ci := range f.CI95 {
		if !finite(ci[0]) || !finite(ci[1]) || ci[0] > ci[1] {
			return fail("figures", "the 95%% interval of %s is [%g, %g]", k, ci[0], ci[1])
		}
	}
	return nil
}
