package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"hedgelab/internal/report"

	"hedgelab/simnet"
)

var priceScenarios = []string{"healthy", "default", "heavy-tail", "bimodal", "saturation", "shared-alternate", "failover-alternate",
	"throughput-control", "ru-budget-3200", "hot-partition-3214"}

func pricePolicies(cfg *simnet.Config) []simnet.Policy {
	return []simnet.Policy{
		polDisabled(), polDriverDefault(cfg.Client.RequestTimeout), polStatic("static-500ms", 500), polStatic("static-100ms", 100),
		polStatic("static-20ms", 20), polP99(), polP99Budget(budgetRatio, cfg.Client.RequestTimeout),
	}
}

func price(d *doc) error {
	d.p("**Question.** What does hedging cost in RU for the tail latency it buys, and when does hedging under saturation or throttling make things worse (§9.3 asks for operator guidance)?")
	d.p("**Method.** Every policy below runs on each scenario's seeded workload; the chart per scenario plots p99 (●) and p99.9 (▲) against the RU multiplier (RU charged for every attempt that reached a replica, cancelled losers included, divided by the RU of the responses returned): the lower left is better, and a point to the right of another with a higher latency is dominated.")
	d.p("Where replicas have finite capacity (`saturation`, `shared-alternate`, `failover-alternate`), a second table per scenario gives, per policy, each replica's utilisation (busy server-time over servers × run length, and the mean over the slow-down's timeline windows), its queue length at the 99th percentile of arrivals, the requests its full queue refused (the client's attempts / other tenants'), and the latency of the other tenants' requests served there (queue wait + service): what a hedge costs the replica's other tenants.")
	var worse []string
	healthyExtra, healthyPolicy := 0.0, ""
	var satOff, satAggressive *report.Figures
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
			if name == "saturation" && (p.Name == "disabled" || p.Name == "static-20ms") {
				if p.Name == "disabled" {
					satOff = &f
				} else {
					satAggressive = &f
				}
			}
			if name == "healthy" && f.RUMultiplier-1 > healthyExtra {
				healthyExtra, healthyPolicy = f.RUMultiplier-1, p.Name
			}
			if p.Name != "disabled" && (better(off, f, "p99_ms", off.P99, f.P99) || f.ErrorRate > 1.1*off.ErrorRate+0.001) {
				worse = append(worse, fmt.Sprintf("`%s` under `%s` (p99 %s ms vs %s ms without hedging, errors %s vs %s)",
					p.Name, name, ms(f.P99), ms(off.P99), pct(f.ErrorRate), pct(off.ErrorRate)))
			}
		}
	}
	d.p("## Answer")
	d.p("Hedging's RU multiplier is bounded by 1 + hedge rate (at most 2×, §9.3). When nothing is wrong (`healthy`) the most expensive policy here, `%s`, costs %.2f%% extra RU; during incidents the extra RU is roughly the fraction of requests the slow region delays (see the hedge rates above).", healthyPolicy, 100*healthyExtra)
	if len(worse) == 0 {
		d.p("No hedging policy made p99 or the error rate significantly worse than no hedging in these scenarios.")
	} else {
		d.p("Hedging made things worse than no hedging in: %s.", strings.Join(worse, "; "))
	}
	sat := ""
	if satOff != nil && satAggressive != nil {
		if better(*satOff, *satAggressive, "p99_ms", satOff.P99, satAggressive.P99) {
			sat = fmt.Sprintf(" In `saturation` a 20 ms threshold raised p99 from %s to %s ms.", ms(satOff.P99), ms(satAggressive.P99))
		} else {
			sat = fmt.Sprintf(" In `saturation` the point estimates rise with aggressiveness (p99 %s ms without hedging, %s ms at a 20 ms threshold), but three replications do not separate them at 95%% confidence, so the data here does not settle whether a low threshold hurts under saturation.", ms(satOff.P99), ms(satAggressive.P99))
		}
	}
	tenantCost(d, runs["shared-alternate"], noBreaker, runs["failover-alternate"])
	d.p("**Operator guidance (§9.3).** Size throughput-control budgets for up to 2× RU. On an account whose throughput-control group is saturated (local 429s), hedging cannot help: the alternate draws from the same gate, so every alternate that fires turns into more local 429s for other operations (the error rates above) — opt out with `AvailabilityStrategy::Disabled`; the driver's short-circuit on a local 429 (no fan-out after a local 429 on the primary) protects only the operation that saw it. RU-budget (429/3200) and hot-partition (429/3214) throttles are final and never spawn a hedge, so hedging neither helps nor hurts them. On a replica near saturation, a low threshold adds load exactly when queues are long: keep the threshold above the saturated p99 (TPS §4.2's p99 does this by itself; the default `p99_dynamic` only up to its ceiling of 2.5 × the median, `ceiling_factor`) or add a hedge budget.%s When the alternate region has little headroom, watch its utilisation and its other tenants' latency during a primary slow-down, not only the RU multiplier: in `shared-alternate` the policies that filled the alternate's queue cost only %s RU × or less, less than `static-20ms`, which did not.", sat, ru(maxRUFull(runs["shared-alternate"])))
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
	client report.Figures
	rep    report.ReplicaFigures
	epUtil float64
}

func tenants(r *run, policy string) tenantFigures {
	f := r.fig(policy)
	for _, p := range r.res.Policies {
		if p.Name != policy {
			continue
		}
		for i, rep := range f.Replicas {
			if rep.Replica == priceCapacityReplica {
				return tenantFigures{client: f, rep: rep, epUtil: episodeUtil(p.Merged, i, &r.cfg.Episodes[0])}
			}
		}
	}
	panic("no replica " + priceCapacityReplica + " under " + policy)
}

// tenantCost writes the answer's paragraph on what hedging costs the
// alternate's other tenants, from the two capacity scenarios' tables.
func tenantCost(d *doc, shared, noBreaker, failover *run) {
	off, s20 := tenants(shared, "disabled"), tenants(shared, "static-20ms")
	var late, trips []string
	var lateRefused int64
	lateP99, lateUtil := 0.0, math.Inf(1)
	for _, n := range []string{"static-100ms", "p99-dynamic", "p99-budget-20pct"} {
		t := tenants(shared, n)
		late = append(late, fmt.Sprintf("`%s` %s ms", n, ms(t.client.P99)))
		if t.client.P99 < 1.5*s20.client.P99 {
			panic("shared-alternate: " + n + "'s p99 is near static-20ms's: the answer text no longer holds")
		}
		trips = append(trips, fmt.Sprintf("`%s` %d", n, t.client.Counters["breaker_trips"]))
		lateRefused = max(lateRefused, t.rep.RefusedBackground)
		lateP99 = max(lateP99, t.rep.BackgroundP99)
		lateUtil = min(lateUtil, t.epUtil)
	}
	dyn, bud := tenants(shared, "p99-dynamic"), tenants(shared, "p99-budget-20pct")
	nbUtil, nbP99 := 0.0, 0.0
	for _, p := range noBreaker.res.Policies {
		t := tenants(noBreaker, p.Name)
		nbUtil, nbP99 = max(nbUtil, t.epUtil), max(nbP99, t.rep.BackgroundP99)
		if t.rep.RefusedBackground+t.rep.RefusedClient > 0 {
			panic("shared-alternate without the breaker refused requests: the answer text no longer holds")
		}
	}
	fo, fs20, fdyn := tenants(failover, "disabled"), tenants(failover, "static-20ms"), tenants(failover, "p99-dynamic")
	d.p("**What a hedge costs the alternate's other tenants.** In `shared-alternate` (30%% of the primary's reads +150 ms while the alternate's 8 servers run at %s for other tenants), `static-20ms` cuts the client's p99 from %s to %s ms by hedging %s of reads, and the alternate runs at %s during the slow-down: its other tenants' p99 rises from %s to %s ms (p99.9 %s to %s ms), with nothing refused. Thresholds near 100 ms hedge later and their alternates still win, so the partition breakers trip (%s trips over the three replications) and move whole partitions to the alternate: it runs at %s or more during the slow-down, its queue sits at its limit, up to %d of the other tenants' requests are refused and their p99 reaches %s ms, while the client's p99 falls far less than under `static-20ms` (%s ms): %s, against %s ms without hedging. The 20%% hedge budget sends fewer alternates (%s of reads against %s for `p99-dynamic`) but does not keep the alternate out of saturation: it caps hedges, not the reads the breaker moves (below). The breaker is what fills the queue: with it off (section “shared-alternate without the partition breaker”) every hedging policy leaves the alternate at %s or less during the slow-down, the tenants' p99 at %s ms or less and nothing refused, and the client's p99 at %s ms (`p99-dynamic`) and %s ms (`static-100ms`); there the budget holds the alternate at %s and the tenants' p99 at %s ms but leaves the client's p99 at %s ms. `static-20ms` trips its breakers too (%d times over the three replications) without filling the queue, and that is the spec's breaker at work, not luck: a partition moved to the alternate reads there in ~20 ms (network plus queue), so with a 20 ms threshold most of its reads still hedge back to the primary, whose fast 70%% win; those wins count against (partition, alternate), the read's primary region now (§9.5 #1), so the alternate trips too, and a partition with every region demoted reads in preference order again — back on the primary within seconds. Near 100 ms the moved reads (~45 ms) almost never hedge, so partitions stay on the alternate for the whole probe interval (`TestLibCapSharedAlternateBreakerRouting` checks both: no alternate trips at 100 ms, alternate trips at least half the primary's at 20 ms). This milder outcome rests on two choices the spec leaves open (§9.5 awaits sign-off, open question 7): routing when every region is demoted, and the 30 s probe interval. In `failover-alternate` (10%% of the primary's reads slow while the alternate absorbs failover traffic: %s during the slow-down without hedging), hedging is affordable: `p99-dynamic` hedges %s of reads, the alternate goes to %s, its tenants' p99 from %s to %s ms with nothing refused, and the client's p99 falls from %s to %s ms (`static-20ms`: %s ms, tenants %s ms). The 1 s driver default and the 500 ms static threshold never fire on +150 ms and cost nothing. So the price of hedging into a shared region is not its RU but the other tenants' latency, and it depends on the headroom left: a hedge budget caps the alternates but not the traffic the partition breaker moves to the alternate, which is what saturated it here.",
		pct(off.rep.Utilisation), ms(off.client.P99), ms(s20.client.P99), pct(s20.client.HedgeRate), pct(s20.epUtil),
		ms(off.rep.BackgroundP99), ms(s20.rep.BackgroundP99), ms(off.rep.BackgroundP999), ms(s20.rep.BackgroundP999),
		strings.Join(trips, ", "), pct(lateUtil), lateRefused, ms(lateP99), ms(s20.client.P99), strings.Join(late, ", "), ms(off.client.P99),
		pct(bud.client.HedgeRate), pct(dyn.client.HedgeRate),
		pct(nbUtil), ms(nbP99), ms(tenants(noBreaker, "p99-dynamic").client.P99), ms(tenants(noBreaker, "static-100ms").client.P99),
		pct(tenants(noBreaker, "p99-budget-20pct").epUtil), ms(tenants(noBreaker, "p99-budget-20pct").rep.BackgroundP99),
		ms(tenants(noBreaker, "p99-budget-20pct").client.P99), s20.client.Counters["breaker_trips"],
		pct(fo.epUtil), pct(fdyn.client.HedgeRate), pct(fdyn.epUtil), ms(fo.rep.BackgroundP99), ms(fdyn.rep.BackgroundP99),
		ms(fo.client.P99), ms(fdyn.client.P99), ms(fs20.client.P99), ms(fs20.rep.BackgroundP99))
}

// maxRUFull is the highest RU multiplier of r's policies under which the
// alternate's full queue refused other tenants' requests.
func maxRUFull(r *run) float64 {
	hi := 0.0
	for _, p := range r.res.Policies {
		if tenants(r, p.Name).rep.RefusedBackground > 0 {
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
	d.p("%s with `client.consecutive_hedge_win_threshold` = 1e9, so no partition is ever routed away from the primary: what the hedges alone cost %s's other tenants.", r.setup(), priceCapacityReplica)
	var rows [][]string
	for _, p := range r.res.Policies {
		t := tenants(r, p.Name)
		rows = append(rows, []string{p.Name, withCI(t.client, "p99_ms", t.client.P99, ms), pct(t.client.HedgeRate),
			pct(t.epUtil), fmt.Sprintf("%d / %d", t.rep.RefusedClient, t.rep.RefusedBackground), ms(t.rep.BackgroundP99), ms(t.rep.BackgroundP999)})
	}
	ep := r.cfg.Episodes[0]
	d.table([]string{"policy", "p99 ms [95% CI]", "hedge rate", fmt.Sprintf("%s utilisation %g-%g s", priceCapacityReplica, ep.Start.Seconds(), ep.End.Seconds()),
		"refused (client / tenants)", "tenants' p99 ms", "tenants' p99.9 ms"}, rows)
	return r, nil
}
