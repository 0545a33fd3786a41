package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/report"
	"hedgelab/simnet"
)

var priceScenarios = []string{"healthy", "default", "heavy-tail", "bimodal", "saturation", "shared-alternate", "failover-alternate",
	"throughput-control", "ru-budget-3200", "hot-partition-3214", "deadline-short"}

func pricePolicies(cfg *simnet.Config) []simnet.Policy {
	return []simnet.Policy{
		polDisabled(), polDriverDefault(cfg.Client.RequestTimeout), polStatic("static-500ms", 500), polStatic("static-100ms", 100),
		polStatic("static-20ms", 20), polP99(), polP99Budget(budgetRatio, cfg.Client.RequestTimeout),
	}
}

// boundView is the answer's paragraph on the RU multiplier against
// 1 + hedge rate: Rows policy rows in the scenario tables, Over those
// whose multiplier exceeds it (rendered), and the costliest policy of
// `healthy` (HealthyExtra its RU multiplier − 1).
type boundView struct {
	Rows          int
	Over          []string
	HealthyPolicy string
	HealthyExtra  float64
	// Hedges and AltAttempts are the hedged operations and their
	// alternates' attempts over every row (PerHedge their ratio), MaxPerHedge
	// the highest ratio of one row (MaxRow); Faults and Attempts the
	// attempts answered by a fault rule (charged 0 RU) and all attempts.
	Hedges, AltAttempts, Faults, Attempts int64
	PerHedge, MaxPerHedge                 float64
	MaxRow                                string
}

// guidanceView is the operator guidance: the saturation scenario's
// disabled and static-20ms figures (Saturation false when it did not run),
// whether the latter is significantly worse, and the highest RU
// multiplier of a policy that filled shared-alternate's queue.
type guidanceView struct {
	Saturation, SaturationWorse bool
	SatOff, SatAggressive       report.Figures
	SatReps                     string
	MaxRUFull                   float64
}

// priceBoundSlack is how far (in RU multiplier) a row may exceed
// 1 + hedge rate before the bound paragraph lists it: the tables' precision.
const priceBoundSlack = 0.001

func price(d *doc) error {
	d.say("price/question", nil)
	d.say("price/method", nil)
	var capacity []string
	for _, name := range priceScenarios {
		cfg, err := d.loadOnly(name)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(cfg.Replicas, func(r simnet.Replica) bool { return r.Servers > 0 }) {
			capacity = append(capacity, name)
		}
	}
	d.say("price/capacity", struct{ Scenarios []string }{capacity})
	var worse []string
	bound := boundView{}
	guide := guidanceView{}
	runs := map[string]*run{}
	var noBreaker *run
	for _, name := range priceScenarios {
		r, sub, err := d.section(name, pricePolicies, "cost.svg", "cost")
		if err != nil {
			return err
		}
		runs[name] = r
		replicaTable(d, r, name, sub)
		if name == "shared-alternate" {
			if noBreaker, err = sharedNoBreaker(d); err != nil {
				return err
			}
		}
		off := r.fig("disabled")
		for _, p := range r.res.Policies {
			f := r.fig(p.Name)
			bound.Rows++
			m := p.Merged
			bound.Hedges += m.Hedged
			bound.AltAttempts += m.AlternateAttempts
			bound.Faults += m.Faults
			bound.Attempts += m.Attempts
			if m.Hedged > 0 {
				if x := float64(m.AlternateAttempts) / float64(m.Hedged); x > bound.MaxPerHedge {
					bound.MaxPerHedge, bound.MaxRow = x, fmt.Sprintf("`%s` under `%s`", p.Name, name)
				}
			}
			if f.RUMultiplier > 1+f.HedgeRate+priceBoundSlack {
				bound.Over = append(bound.Over, fmt.Sprintf("`%s` under `%s` (RU %s against 1 + %s hedged, errors %s)",
					p.Name, name, ru(f.RUMultiplier), pct(f.HedgeRate), pct(f.ErrorRate)))
			}
			if name == "saturation" && (p.Name == "disabled" || p.Name == "static-20ms") {
				guide.Saturation = true
				guide.SatReps = nword(r.reps) + " replications"
				if p.Name == "disabled" {
					guide.SatOff = f
				} else {
					guide.SatAggressive = f
				}
			}
			if name == "healthy" && f.RUMultiplier-1 > bound.HealthyExtra {
				bound.HealthyExtra, bound.HealthyPolicy = f.RUMultiplier-1, p.Name
			}
			if p.Name != "disabled" && (better(off, f, "p99_ms", off.P99, f.P99) || f.ErrorRate > 1.1*off.ErrorRate+0.001) {
				worse = append(worse, fmt.Sprintf("`%s` under `%s` (p99 %s ms vs %s ms without hedging, errors %s vs %s)",
					p.Name, name, ms(f.P99), ms(off.P99), pct(f.ErrorRate), pct(off.ErrorRate)))
			}
		}
	}
	d.p("## Answer")
	if bound.Hedges > 0 {
		bound.PerHedge = float64(bound.AltAttempts) / float64(bound.Hedges)
	}
	d.say("price/bound", bound)
	d.say("price/worse", struct{ Worse []string }{worse})
	guide.SaturationWorse = better(guide.SatOff, guide.SatAggressive, "p99_ms", guide.SatOff.P99, guide.SatAggressive.P99)
	guide.MaxRUFull = maxRUFull(runs["shared-alternate"])
	tenantCost(d, runs["shared-alternate"], noBreaker, runs["failover-alternate"])
	d.say("price/guidance", guide)
	return nil
}

// priceCapacityReplica is the replica whose other tenants the capacity
// scenarios' answers are about.
const priceCapacityReplica = "westeurope"

// replicaTable writes a section's per-replica capacity figures (one row
// per policy and replica with servers or other tenants' load) and its
// replicas chart; nothing for a run that does not model capacity.
func replicaTable(d *doc, r *run, name, sub string) {
	if r.fig(r.res.Policies[0].Name).Replicas == nil {
		return
	}
	var ep *simnet.Episode
	header := []string{"policy", "replica", "utilisation"}
	if len(r.cfg.Episodes) > 0 {
		ep = &r.cfg.Episodes[0]
		header = append(header, fmt.Sprintf("utilisation %g-%g s", ep.Start.Seconds(), ep.End.Seconds()))
	}
	header = append(header, "queue p99", "refused (client / tenants)", "tenants' p99 ms", "tenants' p99.9 ms")
	var rows [][]string
	for _, p := range r.res.Policies {
		f := r.fig(p.Name)
		for i, rep := range f.Replicas {
			if rep.Servers == 0 && rep.BackgroundOps == 0 {
				continue
			}
			row := []string{p.Name, rep.Replica, pct(rep.Utilisation)}
			if ep != nil {
				row = append(row, pct(episodeUtil(p.Merged, i, ep)))
			}
			row = append(row, fmt.Sprintf("%.0f", rep.QueueP99), fmt.Sprintf("%d / %d", rep.RefusedClient, rep.RefusedBackground),
				ms(rep.BackgroundP99), ms(rep.BackgroundP999))
			rows = append(rows, row)
		}
	}
	d.table(header, rows)
	d.img(name+" replica utilisation", sub+"/replicas.svg")
}

// episodeUtil is replica i's mean utilisation over the timeline windows
// that start within ep (NaN when none does or it has no servers).
func episodeUtil(m *simnet.Stats, i int, ep *simnet.Episode) float64 {
	u := m.Capacity.WindowUtilisation(i, m.WindowWidth)
	sum, n := 0.0, 0
	for k, v := range u {
		if start := time.Duration(k) * m.WindowWidth; start >= ep.Start && start < ep.End {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// tenantFigures are a policy's client figures and its figures at
// priceCapacityReplica, with the replica's utilisation during the run's
// first episode.
type tenantFigures struct {
	Client report.Figures
	Rep    report.ReplicaFigures
	EpUtil float64
}

func tenants(r *run, policy string) tenantFigures {
	f := r.fig(policy)
	for _, p := range r.res.Policies {
		if p.Name != policy {
			continue
		}
		for i, rep := range f.Replicas {
			if rep.Replica == priceCapacityReplica {
				return tenantFigures{Client: f, Rep: rep, EpUtil: episodeUtil(p.Merged, i, &r.cfg.Episodes[0])}
			}
		}
	}
	panic("no replica " + priceCapacityReplica + " under " + policy)
}

// tenantView is the answer's paragraph on what hedging costs the
// alternate's other tenants: shared-alternate's scenario settings and
// figures (Late* over the thresholds near 100 ms), the same without the
// breaker (NoBreaker*), and failover-alternate's.
type tenantView struct {
	Fraction, AddMs   float64
	Servers, Reps     int
	Off, S20          tenantFigures
	Dynamic, Budget   tenantFigures
	BudgetRatio       float64
	Late, LateTrips   []string
	LateRefused       int64
	LateP99, LateUtil float64
	NoBreakerUtil     float64
	NoBreakerP99      float64
	NoBreakerDynamic  tenantFigures
	NoBreaker100      tenantFigures
	NoBreakerBudget   tenantFigures
	Probe             time.Duration
	FailoverFraction  float64
	FailoverAddMs     float64
	FailoverOff       tenantFigures
	FailoverDynamic   tenantFigures
	FailoverS20       tenantFigures
	DriverDefault     string
}

// priceLate are the unbudgeted shared-alternate policies whose thresholds
// sit near 100 ms: late enough that their alternates win and trip the
// breaker.
var priceLate = []string{"static-100ms", "p99-dynamic"}

// tenantCost writes the answer's paragraph on what hedging costs the
// alternate's other tenants, from the two capacity scenarios' tables, and
// checks the claims it makes.
func tenantCost(d *doc, shared, noBreaker, failover *run) {
	v := tenantView{
		Off: tenants(shared, "disabled"), S20: tenants(shared, "static-20ms"),
		Dynamic: tenants(shared, "p99-dynamic"), Budget: tenants(shared, "p99-budget-20pct"), BudgetRatio: budgetRatio,
		Reps: shared.reps, LateUtil: math.Inf(1),
		NoBreakerDynamic: tenants(noBreaker, "p99-dynamic"), NoBreaker100: tenants(noBreaker, "static-100ms"),
		NoBreakerBudget: tenants(noBreaker, "p99-budget-20pct"),
		FailoverOff:     tenants(failover, "disabled"), FailoverDynamic: tenants(failover, "p99-dynamic"), FailoverS20: tenants(failover, "static-20ms"),
		Probe: cmp.Or(shared.cfg.Client.ProbeInterval, hedging.DefaultProbeInterval),
	}
	ep := shared.cfg.Episodes[0]
	v.Fraction, v.AddMs = ep.Fraction, ep.AddMs
	for _, r := range shared.cfg.Replicas {
		if r.Name == priceCapacityReplica {
			v.Servers = r.Servers
		}
	}
	fep := failover.cfg.Episodes[0]
	v.FailoverFraction, v.FailoverAddMs = fep.Fraction, fep.AddMs
	v.DriverDefault = fmt.Sprintf("%g s", hedging.DriverDefaultThreshold(failover.cfg.Client.RequestTimeout).Get().Seconds())
	for _, n := range priceLate {
		t := tenants(shared, n)
		v.Late = append(v.Late, fmt.Sprintf("`%s` %s ms", n, ms(t.Client.P99)))
		v.LateTrips = append(v.LateTrips, fmt.Sprintf("`%s` %d", n, t.Client.Counters["breaker_trips"]))
		v.LateRefused = max(v.LateRefused, t.Rep.RefusedBackground)
		v.LateP99 = max(v.LateP99, t.Rep.BackgroundP99)
		v.LateUtil = min(v.LateUtil, t.EpUtil)
	}
	for _, p := range noBreaker.res.Policies {
		t := tenants(noBreaker, p.Name)
		v.NoBreakerUtil, v.NoBreakerP99 = max(v.NoBreakerUtil, t.EpUtil), max(v.NoBreakerP99, t.Rep.BackgroundP99)
	}
	d.check(
		claim{"shared-alternate: static-20ms refuses nothing (\"with nothing refused\")", func() error {
			if n := v.S20.Rep.RefusedBackground + v.S20.Rep.RefusedClient; n > 0 {
				return failf("static-20ms had %d requests refused at %s", n, priceCapacityReplica)
			}
			return nil
		}},
		claim{"shared-alternate: thresholds near 100 ms cut the client's p99 far less than static-20ms", func() error {
			for _, n := range priceLate {
				if t := tenants(shared, n); t.Client.P99 < 1.5*v.S20.Client.P99 {
					return failf("%s's p99 %s ms is within 1.5× static-20ms's %s ms", n, ms(t.Client.P99), ms(v.S20.Client.P99))
				}
			}
			return nil
		}},
		claim{"shared-alternate: thresholds near 100 ms fill the alternate's queue (tenants refused)", func() error {
			if v.LateRefused == 0 {
				return failf("no policy of %v had a tenant's request refused", priceLate)
			}
			return nil
		}},
		claim{"shared-alternate: the budget, admitting the breaker's moved reads too, keeps the queue from filling (nothing refused)", func() error {
			if n := v.Budget.Rep.RefusedBackground + v.Budget.Rep.RefusedClient; n > 0 || v.Budget.EpUtil >= v.LateUtil {
				return failf("p99-budget-20pct: %d refused, %s during the slow-down (late thresholds %s)", n, pct(v.Budget.EpUtil), pct(v.LateUtil))
			}
			return nil
		}},
		claim{"shared-alternate without the breaker: nothing refused", func() error {
			for _, p := range noBreaker.res.Policies {
				if t := tenants(noBreaker, p.Name); t.Rep.RefusedBackground+t.Rep.RefusedClient > 0 {
					return failf("%s had %d requests refused", p.Name, t.Rep.RefusedBackground+t.Rep.RefusedClient)
				}
			}
			return nil
		}},
		claim{"failover-alternate: the driver default and static-500ms never fire and cost nothing", func() error {
			for _, n := range []string{"driver-default", "static-500ms"} {
				if f := failover.fig(n); f.HedgeRate > 0 || f.RUMultiplier != v.FailoverOff.Client.RUMultiplier {
					return failf("%s hedged %s at RU %s (disabled %s)", n, pct(f.HedgeRate), ru(f.RUMultiplier), ru(v.FailoverOff.Client.RUMultiplier))
				}
			}
			return nil
		}},
		claim{"failover-alternate: p99-dynamic refuses nothing (\"with nothing refused\")", func() error {
			if n := v.FailoverDynamic.Rep.RefusedBackground + v.FailoverDynamic.Rep.RefusedClient; n > 0 {
				return failf("p99-dynamic had %d requests refused", n)
			}
			return nil
		}},
	)
	d.say("price/tenants", v)
}

// maxRUFull is the highest RU multiplier of r's policies under which the
// alternate's full queue refused other tenants' requests.
func maxRUFull(r *run) float64 {
	hi := 0.0
	for _, p := range r.res.Policies {
		if tenants(r, p.Name).Rep.RefusedBackground > 0 {
			hi = max(hi, r.fig(p.Name).RUMultiplier)
		}
	}
	return hi
}

// sharedNoBreaker runs shared-alternate with the partition breaker off
// (client.consecutive_hedge_win_threshold = 1e9) under the price policies
// and writes a short table of its client and alternate figures.
func sharedNoBreaker(d *doc) (*run, error) {
	const name = "shared-alternate"
	cfg, err := d.loadOnly(name)
	if err != nil {
		return nil, err
	}
	r, err := d.simulate(name, pricePolicies(cfg), param{"client.consecutive_hedge_win_threshold", 1e9})
	if err != nil {
		return nil, err
	}
	d.p("## shared-alternate without the partition breaker")
	d.say("price/no-breaker", struct{ Setup, Replica string }{r.setup(), priceCapacityReplica})
	var rows [][]string
	for _, p := range r.res.Policies {
		t := tenants(r, p.Name)
		rows = append(rows, []string{p.Name, withCI(t.Client, "p99_ms", t.Client.P99, ms), pct(t.Client.HedgeRate),
			pct(t.EpUtil), fmt.Sprintf("%d / %d", t.Rep.RefusedClient, t.Rep.RefusedBackground), ms(t.Rep.BackgroundP99), ms(t.Rep.BackgroundP999)})
	}
	ep := r.cfg.Episodes[0]
	d.table([]string{"policy", "p99 ms [95% CI]", "hedge rate", fmt.Sprintf("%s utilisation %g-%g s", priceCapacityReplica, ep.Start.Seconds(), ep.End.Seconds()),
		"refused (client / tenants)", "tenants' p99 ms", "tenants' p99.9 ms"}, rows)
	return r, nil
}
