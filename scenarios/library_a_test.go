package scenarios_test

// Behaviour tests of the fault-injection scenario library (spec §15.2):
// each scenario is loaded by name, shortened where that keeps its point,
// simulated through internal/study and checked against the behaviour it
// exists to show, with real thresholds on the numbers.

import (
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// load returns the embedded scenario name with the given parameters set
// (in order), built.
func load(t *testing.T, name string, params ...any) (*simnet.Config, []simnet.Policy) {
	t.Helper()
	_, cfg, pols := libB(t, name, params...)
	return cfg, pols
}

// simulate runs every policy for one replication and returns the merged
// stats by policy name.
func simulate(t *testing.T, cfg *simnet.Config, pols []simnet.Policy) map[string]*simnet.Stats {
	t.Helper()
	return simB(t, cfg, pols, 1)
}

// get returns the stats of policy name, failing when it is missing.
func get(t *testing.T, m map[string]*simnet.Stats, name string) *simnet.Stats {
	t.Helper()
	s, ok := m[name]
	if !ok {
		t.Fatalf("no policy %q in the scenario", name)
	}
	if s.Ops == 0 {
		t.Fatalf("policy %q simulated no operations", name)
	}
	return s
}

// policy returns the policy called name.
func policy(t *testing.T, pols []simnet.Policy, name string) simnet.Policy {
	t.Helper()
	for _, p := range pols {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no policy %q in the scenario", name)
	return simnet.Policy{}
}

// runEach runs one policy for replication 0 and calls fn with every
// finished operation.
func runEach(t *testing.T, cfg *simnet.Config, p simnet.Policy, fn func(r *hedging.Race, op *hedging.Operation)) *simnet.Stats {
	t.Helper()
	st, err := simnet.Run(cfg, p, 0, simnet.RunOptions{OnComplete: fn})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func share(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

func hedgeRate(s *simnet.Stats) float64 { return share(s.Hedged, s.Ops) }

func terminal(s *simnet.Stats, ts hedging.TerminalState) float64 { return share(s.Terminal[ts], s.Ops) }

// windowP50Ms returns the p50 (ms) of timeline window w.
func windowP50Ms(w simnet.Window) float64 { return float64(w.Latency.ValueAtQuantile(50)) / 1000 }

func noErrors(t *testing.T, m map[string]*simnet.Stats) {
	t.Helper()
	for name, s := range m {
		if s.Errors != 0 {
			t.Errorf("%s: %d errors of %d operations, want 0", name, s.Errors, s.Ops)
		}
	}
}

// healthy: hedging costs nearly nothing with sane thresholds; a threshold
// below the measured p99 starts to hedge percents of the reads.
func TestLibraryHealthy(t *testing.T) {
	cfg, pols := load(t, "healthy", "duration_s", 60)
	m := simulate(t, cfg, pols)
	noErrors(t, m)
	if s := get(t, m, "disabled"); s.Hedged != 0 || s.Terminal[0] != s.Ops {
		t.Errorf("disabled: hedged %d, none %d of %d", s.Hedged, s.Terminal[0], s.Ops)
	}
	for _, name := range []string{"driver-default", "p99-dynamic", "static-500ms", "static-100ms"} {
		s := get(t, m, name)
		if hr := hedgeRate(s); hr >= 0.02 {
			t.Errorf("%s: hedge rate %.4f, want < 2%%", name, hr)
		}
		if ru := s.RUMultiplier(); ru >= 1.02 {
			t.Errorf("%s: RU multiplier %.4f, want < 1.02", name, ru)
		}
		if hr := hedgeRate(s); hr >= 0.002 {
			t.Errorf("%s: hedge rate %.4f, want < 0.2%% when nothing is wrong", name, hr)
		}
	}
	dis := get(t, m, "disabled")
	for name, s := range m {
		if p99 := s.QuantileMs(0.99); p99 > 5 {
			t.Errorf("%s: p99 %.2f ms, want < 5 ms (healthy in-region reads)", name, p99)
		}
		if s.QuantileMs(0.5) != dis.QuantileMs(0.5) {
			t.Errorf("%s: p50 %.3f ms differs from disabled %.3f ms", name, s.QuantileMs(0.5), dis.QuantileMs(0.5))
		}
	}
	s20, s2 := get(t, m, "static-20ms"), get(t, m, "static-2ms")
	if hr := hedgeRate(s20); hr >= 0.005 {
		t.Errorf("static-20ms: hedge rate %.4f, want < 0.5%%", hr)
	}
	if hr := hedgeRate(s2); hr < 0.005 || hr < 5*hedgeRate(s20) {
		t.Errorf("static-2ms: hedge rate %.4f, want >= 0.5%% and >= 5x static-20ms (%.4f)", hr, hedgeRate(s20))
	}
	if s2.Attempts <= s20.Attempts || s2.RUMultiplier() <= s20.RUMultiplier() {
		t.Errorf("static-2ms should cost more than static-20ms: attempts %d vs %d, RU %.5f vs %.5f",
			s2.Attempts, s20.Attempts, s2.RUMultiplier(), s20.RUMultiplier())
	}
}

// primary-slow: a 2 s primary and a 200 ms threshold: the alternate wins.
func TestLibraryPrimarySlow(t *testing.T) {
	cfg, pols := load(t, "primary-slow", "duration_s", 30, "episodes.0.end_s", 30)
	m := simulate(t, cfg, pols)
	noErrors(t, m)
	dis, st := get(t, m, "disabled"), get(t, m, "static-200ms")
	if p99 := dis.QuantileMs(0.99); p99 <= 1900 {
		t.Errorf("disabled: p99 %.1f ms, want > 1900 ms", p99)
	}
	if w := terminal(st, hedging.AlternateWon); w <= 0.9 {
		t.Errorf("static-200ms: AlternateWon share %.3f, want > 0.9", w)
	}
	if p99 := st.QuantileMs(0.99); p99 >= 300 || p99 < 200 {
		t.Errorf("static-200ms: p99 %.1f ms, want in [200, 300)", p99)
	}
	if p50 := st.QuantileMs(0.5); p50 < 200 || p50 > 220 {
		t.Errorf("static-200ms: p50 %.1f ms, want threshold + RTT (200-220 ms)", p50)
	}
	if st.BreakerTrips != 0 {
		t.Errorf("static-200ms: %d breaker trips, want 0 (breaker off in this scenario)", st.BreakerTrips)
	}
	dd := get(t, m, "driver-default")
	if w, p99 := terminal(dd, hedging.AlternateWon), dd.QuantileMs(0.99); w <= 0.9 || p99 < 1000 || p99 > 1100 {
		t.Errorf("driver-default: AlternateWon %.3f (want > 0.9), p99 %.1f ms (want 1000-1100)", w, p99)
	}
	// Every alternate is East US 2, and it won.
	n := 0
	runEach(t, cfg, policy(t, pols, "static-200ms"), func(r *hedging.Race, op *hedging.Operation) {
		d, ok := r.Diagnostics()
		if !ok || !d.TerminalState().WasHedge() {
			return
		}
		n++
		if alt, ok := d.AlternateRegion(); !ok || alt != "East US 2" {
			t.Fatalf("alternate region %q, want East US 2", alt)
		}
		if resp, _ := d.ResponseRegion(); resp != "East US 2" {
			t.Fatalf("response region %q, want East US 2", resp)
		}
	})
	if n == 0 {
		t.Error("no read was won by the alternate")
	}
}

// primary-503: a 503 on every primary read upgrades into an immediate
// hedge; East US 2 wins with success, well before the threshold.
func TestLibraryPrimary503(t *testing.T) {
	cfg, pols := load(t, "primary-503", "duration_s", 30)
	m := simulate(t, cfg, pols)
	noErrors(t, m)
	for _, name := range []string{"static-200ms", "driver-default"} {
		s := get(t, m, name)
		if w := terminal(s, hedging.AlternateWon); w <= 0.95 {
			t.Errorf("%s: AlternateWon share %.3f, want > 0.95", name, w)
		}
		if p99 := s.QuantileMs(0.99); p99 >= 50 {
			t.Errorf("%s: p99 %.1f ms, want < 50 ms (upgrade path, not the threshold timer)", name, p99)
		}
		// Every hedge is a failover (spawn cause 503), none latency-triggered
		// (issue 11 #7: hedge_rate splits by cause).
		if s.Hedged == 0 || s.FailoverHedged != s.Hedged {
			t.Errorf("%s: %d hedges, %d of them failovers; want every hedge a 503 failover", name, s.Hedged, s.FailoverHedged)
		}
		// The pinned primary keeps retrying East US: ~3 faults per read.
		if f := share(s.Faults, s.Ops); f < 2.5 {
			t.Errorf("%s: %.2f injected 503s per read, want >= 2.5 (primary retries pinned to East US)", name, f)
		}
	}
	dis := get(t, m, "disabled")
	if f := share(dis.Faults, dis.Ops); f > 1.01 {
		t.Errorf("disabled: %.2f injected 503s per read, want <= 1 (failover after the first)", f)
	}
}

// both-slow: both regions 2 s late; hedging degrades gracefully (no
// errors, ~2 s for everyone) and only adds cost.
func TestLibraryBothSlow(t *testing.T) {
	cfg, pols := load(t, "both-slow", "duration_s", 30, "episodes.0.end_s", 30, "episodes.1.end_s", 30)
	m := simulate(t, cfg, pols)
	noErrors(t, m)
	for name, s := range m {
		if p50, p99 := s.QuantileMs(0.5), s.QuantileMs(0.99); p50 < 1990 || p99 < 1990 || p99 > 2100 {
			t.Errorf("%s: p50 %.1f, p99 %.1f ms, want ~2000 ms", name, p50, p99)
		}
	}
	st := get(t, m, "static-200ms")
	if st.FailoverHedged != 0 {
		t.Errorf("static-200ms: %d failover hedges, want every hedge latency-triggered", st.FailoverHedged)
	}
	if hr := hedgeRate(st); hr < 0.99 {
		t.Errorf("static-200ms: hedge rate %.3f, want ~1", hr)
	}
	if w := terminal(st, hedging.PrimaryWonAfterHedge); w < 0.9 {
		t.Errorf("static-200ms: PrimaryWonAfterHedge share %.3f, want > 0.9 (first responder wins)", w)
	}
	if ru := st.RUMultiplier(); ru < 1.9 {
		t.Errorf("static-200ms: RU multiplier %.3f, want ~2", ru)
	}
}

// writes-slow: on a multi-master account writes are never hedged, however
// slow; reads keep their usual (tiny) hedge rate.
func TestLibraryWritesSlow(t *testing.T) {
	cfg, pols := load(t, "writes-slow", "duration_s", 30)
	m := simulate(t, cfg, pols)
	noErrors(t, m)
	for _, name := range []string{"static-200ms", "driver-default"} {
		s := get(t, m, name)
		var writes, reads int64
		runEach(t, cfg, policy(t, pols, name), func(r *hedging.Race, op *hedging.Operation) {
			if !op.Kind.IsWrite() {
				reads++
				return
			}
			writes++
			if _, hedged := r.Diagnostics(); hedged || r.AlternateSpawned() {
				t.Fatalf("%s: a %s was hedged", name, op.Kind)
			}
			if _, ok := r.Diagnostics(); ok {
				t.Fatalf("%s: a %s has hedge diagnostics", name, op.Kind)
			}
			if lat := r.DoneAt() - r.Start(); lat < 2000*time.Millisecond {
				t.Fatalf("%s: a %s returned after %v, want >= 2 s (the delay)", name, op.Kind, lat)
			}
		})
		if w := share(writes, writes+reads); w < 0.15 || w > 0.25 {
			t.Errorf("%s: write share %.3f, want ~0.2", name, w)
		}
		if s.Terminal[0] != writes {
			t.Errorf("%s: terminal state none = %d, want = writes (%d)", name, s.Terminal[0], writes)
		}
		if hr := hedgeRate(s); hr > 0.005 {
			t.Errorf("%s: hedge rate %.4f, want < 0.5%% (healthy reads only)", name, hr)
		}
		if p90 := s.QuantileMs(0.9); p90 < 2000 {
			t.Errorf("%s: p90 %.1f ms, want >= 2000 ms (the unhedged writes)", name, p90)
		}
	}
}

// per-op-disabled: operations with the per-operation Disabled strategy are
// never hedged, the others are.
func TestLibraryPerOpDisabled(t *testing.T) {
	cfg, pols := load(t, "per-op-disabled", "duration_s", 30, "episodes.0.end_s", 30)
	m := simulate(t, cfg, pols)
	noErrors(t, m)
	s := get(t, m, "static-200ms")
	if n := terminal(s, 0); n < 0.45 || n > 0.55 {
		t.Errorf("static-200ms: none share %.3f, want ~0.5", n)
	}
	if w := terminal(s, hedging.AlternateWon); w < 0.45 || w > 0.55 {
		t.Errorf("static-200ms: AlternateWon share %.3f, want ~0.5", w)
	}
	var disabledOps, hedgedOps int64
	runEach(t, cfg, policy(t, pols, "static-200ms"), func(r *hedging.Race, op *hedging.Operation) {
		if op.Strategy == (hedging.AvailabilityStrategy{}) {
			if r.AlternateSpawned() {
				hedgedOps++
			}
			return
		}
		disabledOps++
		if _, hedged := r.Diagnostics(); hedged || r.AlternateSpawned() {
			t.Fatal("an operation with the Disabled strategy was hedged")
		}
		if lat := r.DoneAt() - r.Start(); lat < 2000*time.Millisecond {
			t.Fatalf("a Disabled operation took %v, want the slow primary's >= 2 s", lat)
		}
	})
	if disabledOps != s.Terminal[0] || hedgedOps != s.Hedged {
		t.Errorf("Disabled ops %d vs none %d; hedged others %d vs Hedged %d", disabledOps, s.Terminal[0], hedgedOps, s.Hedged)
	}
}

// deadline-short: a threshold above the deadline never fires; the slow
// reads end in DeadlineExceededPreThreshold. A lower threshold saves them.
func TestLibraryDeadlineShort(t *testing.T) {
	cfg, pols := load(t, "deadline-short", "duration_s", 30, "episodes.0.end_s", 30)
	m := simulate(t, cfg, pols)
	for _, name := range []string{"static-500ms", "driver-default"} {
		s := get(t, m, name)
		if s.Hedged != 0 || s.Terminal[hedging.AlternateWon]+s.Terminal[hedging.PrimaryWonAfterHedge] != 0 {
			t.Errorf("%s: %d hedges, want 0 (threshold > deadline)", name, s.Hedged)
		}
		dl := s.Terminal[hedging.DeadlineExceededPreThreshold]
		if f := share(dl, s.Ops); f < 0.15 || f > 0.25 {
			t.Errorf("%s: DeadlineExceededPreThreshold share %.3f, want ~0.2", name, f)
		}
		if s.Errors != dl {
			t.Errorf("%s: %d errors, want = DeadlineExceededPreThreshold (%d)", name, s.Errors, dl)
		}
		if mx := float64(s.Latency.Max()) / 1000; mx > 201 {
			t.Errorf("%s: max latency %.1f ms, want <= the 200 ms deadline", name, mx)
		}
	}
	dis := get(t, m, "disabled")
	if f := share(dis.Errors, dis.Ops); f < 0.15 || f > 0.25 {
		t.Errorf("disabled: error rate %.3f, want ~0.2", f)
	}
	low := get(t, m, "static-100ms")
	if low.Errors != 0 || low.Terminal[hedging.DeadlineExceededPreThreshold] != 0 {
		t.Errorf("static-100ms: %d errors, %d deadline states, want 0", low.Errors, low.Terminal[hedging.DeadlineExceededPreThreshold])
	}
	if w := terminal(low, hedging.AlternateWon); w < 0.1 {
		t.Errorf("static-100ms: AlternateWon share %.3f, want > 0.1", w)
	}
	if p99 := low.QuantileMs(0.99); p99 > 120 {
		t.Errorf("static-100ms: p99 %.1f ms, want threshold + RTT (< 120 ms)", p99)
	}
}

// breaker-trip: consecutive alternate wins trip the partition breaker,
// reads go straight to East US 2 (no hedging) and fail back to East US
// after the episode.
func TestLibraryBreakerTrip(t *testing.T) {
	cfg, pols := load(t, "breaker-trip")
	pols = []simnet.Policy{policy(t, pols, "disabled"), policy(t, pols, "static-200ms")}
	m := simulate(t, cfg, pols)
	noErrors(t, m)
	st := get(t, m, "static-200ms")
	if st.BreakerTrips == 0 {
		t.Fatal("static-200ms: no breaker trips")
	}
	if st.WindowWidth != 5*time.Second || len(st.Timeline) != 96 {
		t.Fatalf("timeline: %d windows of %v, want 96 of 5s", len(st.Timeline), st.WindowWidth)
	}
	win := func(startS int) simnet.Window { return st.Timeline[startS/5] }
	hr := func(w simnet.Window) float64 { return share(w.Hedged, w.Ops) }
	// The episode starts at 60 s: the breakers trip in the first window.
	trip := win(60)
	if hr(trip) < 0.3 {
		t.Errorf("hedge rate in 60-65 s = %.3f, want > 0.3 (before the breakers trip)", hr(trip))
	}
	// Between probes (70-85 s) and after failback (>= 400 s): no hedging.
	for _, s := range []int{70, 75, 80, 400, 420, 440, 460} {
		w := win(s)
		if hr(w) >= 0.01 || hr(w) >= hr(trip)/10 {
			t.Errorf("hedge rate in %d-%d s = %.4f, want < 1%% (trip window %.3f)", s, s+5, hr(w), hr(trip))
		}
	}
	// While tripped (windows between the 30 s probes), East US 2 (8 ms)
	// serves; before the episode and after failback East US (~1 ms).
	for _, s := range []int{70, 75, 80, 105, 135, 200, 230} {
		if p50 := windowP50Ms(win(s)); p50 < 8 || p50 > 10 {
			t.Errorf("p50 in %d-%d s = %.2f ms, want ~8.5 ms (East US 2 serving while tripped)", s, s+5, p50)
		}
		if p99 := float64(win(s).Latency.ValueAtQuantile(99)) / 1000; p99 > 50 {
			t.Errorf("p99 in %d-%d s = %.1f ms, want < 50 ms (no hedging while tripped)", s, s+5, p99)
		}
	}
	for _, s := range []int{0, 30, 400, 450} {
		if p50 := windowP50Ms(win(s)); p50 > 2 {
			t.Errorf("p50 in %d-%d s = %.2f ms, want ~1 ms (East US serving)", s, s+5, p50)
		}
	}
	dis := get(t, m, "disabled")
	if p99 := float64(dis.Timeline[40].Latency.ValueAtQuantile(99)) / 1000; p99 < 1900 {
		t.Errorf("disabled: p99 in 200-205 s = %.1f ms, want ~2 s", p99)
	}
}

// exclude-regions-503: the alternate's 503 retry stays pinned to its
// region (East US 2) and never goes to the healthy third region.
func TestLibraryExcludeRegions503(t *testing.T) {
	cfg, pols := load(t, "exclude-regions-503", "duration_s", 30, "episodes.0.end_s", 30)
	m := simulate(t, cfg, pols)
	noErrors(t, m)
	s := get(t, m, "static-200ms")
	if hr := hedgeRate(s); hr < 0.25 || hr > 0.35 {
		t.Errorf("static-200ms: hedge rate %.3f, want ~0.3", hr)
	}
	if s.Faults != s.Hedged {
		t.Errorf("static-200ms: %d injected 503s, want one per hedged read (%d)", s.Faults, s.Hedged)
	}
	if max := s.Ops + 2*s.Hedged; s.Attempts > max {
		t.Errorf("static-200ms: %d attempts, want <= ops + 2 x hedged = %d", s.Attempts, max)
	}
	if p99 := s.QuantileMs(0.99); p99 < 210 || p99 > 225 {
		t.Errorf("static-200ms: p99 %.1f ms, want ~217.7 (pinned retry on East US 2, not >= 237.5 via Central US)", p99)
	}
	if d := get(t, m, "disabled"); d.Faults != 0 {
		t.Errorf("disabled: %d faults, want 0 (never reaches East US 2)", d.Faults)
	}
	retried := 0
	runEach(t, cfg, policy(t, pols, "static-200ms"), func(r *hedging.Race, op *hedging.Operation) {
		for _, l := range []hedging.Leg{hedging.Primary, hedging.Alternate} {
			if r.Endpoint(l).Region == "Central US" {
				t.Fatalf("leg %v went to Central US", l)
			}
		}
		d, ok := r.Diagnostics()
		if !ok || !r.AlternateSpawned() {
			return
		}
		alt := d.Leg(hedging.Alternate)
		if alt.Endpoint.Region != "East US 2" {
			t.Fatalf("alternate ended on %q, want East US 2", alt.Endpoint.Region)
		}
		if d.TerminalState().WasHedge() {
			if alt.Attempts != 2 {
				t.Fatalf("winning alternate made %d attempts, want 2 (503, local retry)", alt.Attempts)
			}
			retried++
		}
	})
	if retried == 0 {
		t.Error("no alternate won after a local retry")
	}
}

// hub-header-1002: a 404/1002 on the primary's first attempt sets the hub
// latch; the header reaches the primary's retry and the alternate.
func TestLibraryHubHeader1002(t *testing.T) {
	cfg, pols := load(t, "hub-header-1002", "duration_s", 30, "episodes.0.end_s", 30)
	m := simulate(t, cfg, pols)
	noErrors(t, m)
	for _, name := range []string{"static-100ms", "p99-dynamic"} {
		s := get(t, m, name)
		if s.Faults == 0 {
			t.Fatalf("%s: no injected 1002", name)
		}
		if s.HubHeaderAttempts < s.Faults*19/10 {
			t.Errorf("%s: %d hub-header attempts for %d injected 1002s, want ~2 each (primary retry + alternate)",
				name, s.HubHeaderAttempts, s.Faults)
		}
		if w := terminal(s, hedging.PrimaryWonAfterHedge); w < 0.7*share(s.Faults, s.Ops) {
			t.Errorf("%s: PrimaryWonAfterHedge share %.4f, want ~ the 1002 share %.4f", name, w, share(s.Faults, s.Ops))
		}
	}
	dis := get(t, m, "disabled")
	if dis.HubHeaderAttempts != dis.Faults || dis.Faults == 0 {
		t.Errorf("disabled: %d hub-header attempts, want one per injected 1002 (%d)", dis.HubHeaderAttempts, dis.Faults)
	}
	if p90 := dis.QuantileMs(0.9); p90 < 15 || p90 > 25 {
		t.Errorf("disabled: p90 %.1f ms, want ~19 ms (session retry forwarded via East US 2)", p90)
	}
	st := get(t, m, "static-100ms")
	if p90 := st.QuantileMs(0.9); p90 > 5 {
		t.Errorf("static-100ms: p90 %.1f ms, want ~3 ms (primary's header retry wins)", p90)
	}
	// Replication lag produces real 1002s on East US 2 for threshold hedges.
	if st.SessionNotAvailable <= st.Faults {
		t.Errorf("static-100ms: %d 404/1002 answers, %d injected: want lag-model 1002s too", st.SessionNotAvailable, st.Faults)
	}
}
