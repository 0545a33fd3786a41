package hedging_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
)

// htRace runs one read on c that ends in the given way and returns its
// terminal state. start must grow between calls on the same client.
func htRace(t *testing.T, c *hedging.Client, start time.Duration, partition string, p, a htResp) hedging.TerminalState {
	t.Helper()
	op := hedging.Operation{Kind: hedging.PointRead, Partition: partition}
	d := htNewDriver(t, c, &op, htLegs(p, a))
	d.start = start
	d.run()
	return htDiag(t, &d.r).TerminalState()
}

var (
	htAltWins     = [2]htResp{htR(time.Second, 200, 0), htR(10*time.Millisecond, 200, 0)}  // AlternateWon
	htPrimaryPre  = [2]htResp{htR(10*time.Millisecond, 200, 0), htR(time.Second, 200, 0)}  // PrimaryWonPreThreshold
	htPrimaryPost = [2]htResp{htR(150*time.Millisecond, 200, 0), htR(time.Second, 200, 0)} // PrimaryWonAfterHedge
)

func TestHedgeWinTrackerThroughRace(t *testing.T) {
	t.Run("record_hedge_win_increments_ppcb_counter", func(t *testing.T) {
		cfg := htCfg(100*htMillisecond, "A", "B", "C")
		cfg.ConsecutiveHedgeWinThreshold = 100
		c := htClient(t, cfg)
		tr := c.HedgeWinTracker()
		for i := 1; i <= 4; i++ {
			if got := htRace(t, c, time.Duration(i)*time.Second, "p", htAltWins[0], htAltWins[1]); got != hedging.AlternateWon {
				t.Fatalf("race %d = %v", i, got)
			}
			if got := tr.Consecutive("p", "A"); got != i {
				t.Errorf("after %d alternate wins Consecutive(p, A) = %d, want %d (exactly one per win)", i, got, i)
			}
			if got := tr.Consecutive("p", "B"); got != 0 {
				t.Errorf("the alternate's region B was credited: %d", got)
			}
		}
		// Non-winning hedged outcomes do not increment.
		for _, tc := range []struct {
			name string
			p, a htResp
		}{
			{"both transient", htR(300*htMillisecond, 503, 0), htR(50*htMillisecond, 503, 0)},
		} {
			htRace(t, c, 10*time.Second, "p", tc.p, tc.a)
			if got := tr.Consecutive("p", "A"); got != 4 {
				t.Errorf("%s changed the counter to %d", tc.name, got)
			}
		}
	})
	for _, tc := range []struct {
		name string
		p, a htResp
	}{
		{"pre_threshold_200", htPrimaryPre[0], htPrimaryPre[1]},
		{"after_hedge_200", htPrimaryPost[0], htPrimaryPost[1]},
		{"after_hedge_404_0", htR(150*htMillisecond, 404, 0), htR(time.Second, 200, 0)},
		{"pre_threshold_409", htR(10*htMillisecond, 409, 0), htR(time.Second, 200, 0)},
		{"after_hedge_412", htR(150*htMillisecond, 412, 0), htR(time.Second, 200, 0)},
		{"429_3200_final", htR(150*htMillisecond, 429, 3200), htR(time.Second, 200, 0)},
	} {
		t.Run("primary_win_resets_hedge_win_counter/"+tc.name, func(t *testing.T) {
			cfg := htCfg(100*htMillisecond, "A", "B")
			cfg.ConsecutiveHedgeWinThreshold = 100
			c := htClient(t, cfg)
			for i := 1; i <= 3; i++ {
				htRace(t, c, time.Duration(i)*time.Second, "p", htAltWins[0], htAltWins[1])
			}
			if got := c.HedgeWinTracker().Consecutive("p", "A"); got != 3 {
				t.Fatalf("setup: counter = %d, want 3", got)
			}
			htRace(t, c, 10*time.Second, "p", tc.p, tc.a)
			if got := c.HedgeWinTracker().Consecutive("p", "A"); got != 0 {
				t.Errorf("a primary final (%s) left the counter at %d, want 0", tc.name, got)
			}
		})
	}
}

func TestHedgeWinTracker(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		tr := hedging.NewHedgeWinTracker(0, 0)
		if tr.Threshold() != 5 || tr.ProbeInterval() != hedging.DefaultProbeInterval || hedging.DefaultProbeInterval != 30*time.Second {
			t.Errorf("defaults = %d, %v", tr.Threshold(), tr.ProbeInterval())
		}
		tr = hedging.NewHedgeWinTracker(-3, -time.Second)
		if tr.Threshold() != 5 || tr.ProbeInterval() != 30*time.Second {
			t.Errorf("negative inputs = %d, %v; want the defaults", tr.Threshold(), tr.ProbeInterval())
		}
	})
	t.Run("trip_at_threshold", func(t *testing.T) {
		tr := hedging.NewHedgeWinTracker(3, 10*time.Second)
		now := time.Second
		for i := 1; i <= 2; i++ {
			if tr.RecordHedgeWin(now, "p", "A") {
				t.Fatalf("tripped after %d wins, threshold 3", i)
			}
			if tr.Unhealthy(now, "p", "A") {
				t.Fatalf("unhealthy after %d wins", i)
			}
		}
		if !tr.RecordHedgeWin(now, "p", "A") {
			t.Fatalf("third win did not trip")
		}
		if tr.Trips() != 1 {
			t.Errorf("Trips() = %d, want 1", tr.Trips())
		}
		// Unhealthy for exactly the probe interval.
		if !tr.Unhealthy(now, "p", "A") || !tr.Unhealthy(now+10*time.Second-1, "p", "A") {
			t.Errorf("not unhealthy during the probe interval")
		}
		if tr.Unhealthy(now+10*time.Second, "p", "A") {
			t.Errorf("still unhealthy once the probe interval has passed")
		}
		// Wins while demoted do not re-trip.
		if tr.RecordHedgeWin(now+time.Second, "p", "A") {
			t.Errorf("re-tripped while still demoted")
		}
		// Probing: one more win after the interval re-trips at once.
		probe := now + 10*time.Second
		if !tr.RecordHedgeWin(probe, "p", "A") {
			t.Errorf("a win while probing did not re-trip")
		}
		if !tr.Unhealthy(probe, "p", "A") || tr.Trips() != 2 {
			t.Errorf("after the re-trip: unhealthy=%v trips=%d", tr.Unhealthy(probe, "p", "A"), tr.Trips())
		}
	})
	t.Run("probing_primary_final_heals", func(t *testing.T) {
		tr := hedging.NewHedgeWinTracker(2, 10*time.Second)
		tr.RecordHedgeWin(0, "p", "A")
		tr.RecordHedgeWin(0, "p", "A")
		// While demoted a primary final keeps the trip but forgets the streak.
		tr.RecordPrimaryFinal(time.Second, "p", "A")
		if !tr.Unhealthy(time.Second, "p", "A") || tr.Consecutive("p", "A") != 0 {
			t.Errorf("primary final while demoted: unhealthy=%v consecutive=%d; want true, 0",
				tr.Unhealthy(time.Second, "p", "A"), tr.Consecutive("p", "A"))
		}
		// After the interval, a primary final makes the pair healthy: a
		// single win no longer re-trips.
		tr.RecordPrimaryFinal(11*time.Second, "p", "A")
		if tr.RecordHedgeWin(12*time.Second, "p", "A") {
			t.Errorf("one win after healing re-tripped")
		}
		if tr.Consecutive("p", "A") != 1 {
			t.Errorf("consecutive = %d, want 1", tr.Consecutive("p", "A"))
		}
	})
	t.Run("per_partition_region_isolation", func(t *testing.T) {
		tr := hedging.NewHedgeWinTracker(2, time.Minute)
		tr.RecordHedgeWin(0, "p1", "A")
		tr.RecordHedgeWin(0, "p2", "A")
		tr.RecordHedgeWin(0, "p1", "B")
		if tr.Consecutive("p1", "A") != 1 || tr.Consecutive("p2", "A") != 1 || tr.Consecutive("p1", "B") != 1 || tr.Consecutive("p2", "B") != 0 {
			t.Errorf("counters leaked between pairs")
		}
		if !tr.RecordHedgeWin(0, "p1", "A") {
			t.Fatalf("(p1, A) did not trip")
		}
		if tr.Unhealthy(0, "p2", "A") || tr.Unhealthy(0, "p1", "B") {
			t.Errorf("a trip of (p1, A) affected another pair")
		}
		tr.RecordPrimaryFinal(0, "p2", "A")
		if tr.Consecutive("p1", "B") != 1 || !tr.Unhealthy(0, "p1", "A") {
			t.Errorf("a reset of (p2, A) affected another pair")
		}
		tr.RecordPrimaryFinal(0, "unknown", "Z") // no-op, no panic
	})
}

// Concurrent use of the shared state (run with -race).
func TestSharedStateConcurrent(t *testing.T) {
	const workers, n = 32, 200
	tr := hedging.NewHedgeWinTracker(1<<30, time.Minute)
	store := hedging.NewLocationStore(time.Second)
	sess := hedging.NewSessionTokens()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				now := time.Duration(i) * time.Millisecond
				tr.RecordHedgeWin(now, "hot", "A")
				tr.RecordHedgeWin(now, fmt.Sprintf("p%d", w), "A")
				_ = tr.Unhealthy(now, "hot", "A")
				_ = tr.Consecutive("hot", "A")
				ep := hedging.Endpoint{Region: "A", Key: fmt.Sprintf("k%d", i%4)}
				store.Observe(now, "hot", ep, htSt(503, 0))
				store.Observe(now, "hot", ep, htSt(403, 3))
				_ = store.Unavailable(now, "hot", ep)
				sess.Merge("hot", int64(w*n+i+1))
				_ = sess.Get("hot")
			}
		}(w)
	}
	wg.Wait()
	if got := tr.Consecutive("hot", "A"); got != workers*n {
		t.Errorf("Consecutive = %d after %d concurrent wins (lost updates)", got, workers*n)
	}
	for w := 0; w < workers; w++ {
		if got := tr.Consecutive(fmt.Sprintf("p%d", w), "A"); got != n {
			t.Errorf("p%d counter = %d, want %d", w, got, n)
		}
	}
	if got := store.RefreshRequests(); got != workers*n {
		t.Errorf("RefreshRequests = %d, want %d", got, workers*n)
	}
	if got := sess.Get("hot"); got != workers*n {
		t.Errorf("session LSN = %d, want the max %d", got, workers*n)
	}
}

// Concurrent races on one client share its state safely (-race).
func TestClientConcurrentRaces(t *testing.T) {
	cfg := htCfg(100*htMillisecond, "A", "B", "C")
	cfg.ConsecutiveHedgeWinThreshold = 1 << 20
	c := htClient(t, cfg)
	const workers, n = 16, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r hedging.Race
			for i := 0; i < n; i++ {
				op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
				now := time.Duration(i) * time.Second
				htBegin(c, &r, now, &op)
				e := htTimerFired(&r, now+100*htMillisecond, hedging.TimerThreshold)
				htResponded(&r, now+150*htMillisecond, e.At(0).Attempt, hedging.Result{Status: htSt(200, 0), SessionLSN: int64(i)})
			}
		}()
	}
	wg.Wait()
	if got := c.HedgeWinTracker().Consecutive("p", "A"); got != workers*n {
		t.Errorf("Consecutive = %d, want %d", got, workers*n)
	}
	if got := c.SessionTokens().Get("p"); got != n-1 {
		t.Errorf("session LSN = %d, want %d", got, n-1)
	}
}

func TestLocationStore(t *testing.T) {
	epA := hedging.Endpoint{Region: "A", Key: "kA"}
	t.Run("503_marks_until_expiry", func(t *testing.T) {
		s := hedging.NewLocationStore(5 * time.Second)
		if s.Unavailable(0, "p", epA) {
			t.Fatalf("fresh store reports a mark")
		}
		s.Observe(time.Second, "p", epA, htSt(503, 0))
		if !s.Unavailable(time.Second, "p", epA) || !s.Unavailable(6*time.Second-1, "p", epA) {
			t.Errorf("not unavailable within the mark")
		}
		if s.Unavailable(6*time.Second, "p", epA) {
			t.Errorf("still unavailable at expiry")
		}
		if s.Unavailable(2*time.Second, "p", epA) {
			t.Errorf("an expired mark came back")
		}
	})
	t.Run("keyed_by_partition_and_endpoint_key", func(t *testing.T) {
		s := hedging.NewLocationStore(time.Second)
		s.Observe(0, "p", epA, htSt(503, 0))
		if s.Unavailable(0, "q", epA) {
			t.Errorf("mark leaked to another partition")
		}
		if s.Unavailable(0, "p", hedging.Endpoint{Region: "A", Key: "other"}) {
			t.Errorf("mark leaked to another endpoint key")
		}
		if !s.Unavailable(0, "p", hedging.Endpoint{Region: "alias", Key: "kA"}) {
			t.Errorf("an alias of the same physical endpoint is not marked")
		}
	})
	t.Run("remark_extends", func(t *testing.T) {
		s := hedging.NewLocationStore(time.Second)
		s.Observe(0, "p", epA, htSt(503, 0))
		s.Observe(800*htMillisecond, "p", epA, htSt(503, 0))
		if !s.Unavailable(1500*htMillisecond, "p", epA) {
			t.Errorf("a second 503 did not extend the mark")
		}
	})
	t.Run("other_statuses_no_mark", func(t *testing.T) {
		s := hedging.NewLocationStore(time.Second)
		for _, st := range []hedging.Status{htSt(200, 0), htSt(500, 0), htSt(408, 0), htSt(410, 0), htSt(429, 3092), htSt(404, 1002), htSt(403, 0)} {
			s.Observe(0, "p", epA, st)
		}
		if s.Unavailable(0, "p", epA) || s.RefreshRequests() != 0 {
			t.Errorf("non-503 statuses marked or refreshed: %v, %d", s.Unavailable(0, "p", epA), s.RefreshRequests())
		}
		s.Observe(0, "p", epA, htSt(503, 0))
		s.Observe(0, "p", epA, htSt(200, 0))
		if !s.Unavailable(0, "p", epA) {
			t.Errorf("a 200 cleared the 503 mark early")
		}
	})
	t.Run("403_3_requests_refresh", func(t *testing.T) {
		s := hedging.NewLocationStore(0)
		s.Observe(0, "p", epA, htSt(403, hedging.SubStatusWriteForbidden))
		s.Observe(0, "q", epA, htSt(403, hedging.SubStatusWriteForbidden))
		if s.RefreshRequests() != 2 {
			t.Errorf("RefreshRequests = %d, want 2", s.RefreshRequests())
		}
		if s.Unavailable(0, "p", epA) {
			t.Errorf("403/3 marked the endpoint")
		}
	})
	// Config.UnavailableAfter (issue 27, Azure/azure-sdk-for-python PR
	// #39883): the n-th consecutive 503 of a (partition, endpoint) marks it;
	// any other status of that pair starts the count again; other pairs'
	// answers do not.
	for _, tc := range []struct {
		name   string
		after  int
		seq    []int // statuses of (p, epA), one per millisecond
		marked bool  // after the sequence
	}{
		{"after 1: one 503", 1, []int{503}, true},
		{"after 0 is the default 1", 0, []int{503}, true},
		{"after 2: one 503", 2, []int{503}, false},
		{"after 2: two 503s", 2, []int{503, 503}, true},
		{"after 2: 503 200 503", 2, []int{503, 200, 503}, false},
		{"after 2: 503 429 503", 2, []int{503, 429, 503}, false},
		{"after 3: 503 503 404 503 503", 3, []int{503, 503, 404, 503, 503}, false},
		{"after 3: 200 503 503 503", 3, []int{200, 503, 503, 503}, true},
		{"after 5: four 503s", 5, []int{503, 503, 503, 503}, false},
		{"after 5: five 503s", 5, []int{503, 503, 503, 503, 503}, true},
	} {
		t.Run("consecutive/"+tc.name, func(t *testing.T) {
			s := hedging.NewLocationStoreAfter(time.Second, tc.after)
			epB := hedging.Endpoint{Region: "B", Key: "kB"}
			for i, code := range tc.seq {
				now := time.Duration(i) * htMillisecond
				s.Observe(now, "p", epA, htSt(code, 0))
				s.Observe(now, "q", epA, htSt(200, 0)) // another partition's answers
				s.Observe(now, "p", epB, htSt(200, 0)) // another endpoint's
			}
			now := time.Duration(len(tc.seq)) * htMillisecond
			if got := s.Unavailable(now, "p", epA); got != tc.marked {
				t.Errorf("marked %v, want %v", got, tc.marked)
			}
			if s.Unavailable(now, "q", epA) || s.Unavailable(now, "p", epB) {
				t.Errorf("another pair was marked")
			}
		})
	}
	t.Run("default_duration", func(t *testing.T) {
		s := hedging.NewLocationStore(-1)
		s.Observe(0, "p", epA, htSt(503, 0))
		if !s.Unavailable(hedging.DefaultUnavailableFor-1, "p", epA) || s.Unavailable(hedging.DefaultUnavailableFor, "p", epA) {
			t.Errorf("default mark is not DefaultUnavailableFor (%v)", hedging.DefaultUnavailableFor)
		}
	})
	t.Run("race_403_3_on_a_leg_refreshes", func(t *testing.T) {
		c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
		htRace(t, c, time.Second, "p", htR(time.Second, 200, 0), htR(10*htMillisecond, 403, 3))
		if c.LocationStore().RefreshRequests() != 1 {
			t.Errorf("a 403/3 on the alternate did not request a refresh")
		}
	})
}

func TestSessionTokens(t *testing.T) {
	s := hedging.NewSessionTokens()
	if s.Get("p") != 0 {
		t.Fatalf("fresh token = %d", s.Get("p"))
	}
	s.Merge("p", 10)
	s.Merge("p", 7) // a late, lower LSN from a losing leg
	if s.Get("p") != 10 {
		t.Errorf("a lower LSN regressed the token to %d", s.Get("p"))
	}
	s.Merge("p", 0)
	s.Merge("p", -5)
	if s.Get("p") != 10 {
		t.Errorf("non-positive LSN changed the token: %d", s.Get("p"))
	}
	s.Merge("q", 3)
	if s.Get("p") != 10 || s.Get("q") != 3 {
		t.Errorf("partitions not independent: p=%d q=%d", s.Get("p"), s.Get("q"))
	}
	s.Merge("p", 11)
	if s.Get("p") != 11 {
		t.Errorf("higher LSN not taken: %d", s.Get("p"))
	}

	t.Run("race_losing_leg_late_lower_lsn", func(t *testing.T) {
		c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
		var r hedging.Race
		e := htBegin(c, &r, 0, &op)
		prim := e.At(0).Attempt
		e = htTimerFired(&r, 100*htMillisecond, hedging.TimerThreshold)
		alt := e.At(0).Attempt
		htResponded(&r, 120*htMillisecond, alt, hedging.Result{Status: htSt(200, 0), SessionLSN: 50})
		htResponded(&r, 130*htMillisecond, prim, hedging.Result{Status: htSt(200, 0), SessionLSN: 40}) // cancelled loser
		if got := c.SessionTokens().Get("p"); got != 50 {
			t.Errorf("token = %d, want 50", got)
		}
		var r2 hedging.Race
		if e := htBegin(c, &r2, time.Second, &op); e.At(0).Attempt.SessionLSN != 50 {
			t.Errorf("next operation sends LSN %d, want 50", e.At(0).Attempt.SessionLSN)
		}
	})
}

// §9.2: merges commute under max — any interleaving of the same writes
// ends at the per-partition maximum, and the token never decreases.
func TestSessionTokensMaxMergeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type write struct {
			p   string
			lsn int64
		}
		writes := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) write {
			return write{
				p:   rapid.SampledFrom([]string{"p0", "p1", "p2"}).Draw(t, "partition"),
				lsn: rapid.Int64Range(-5, 1000).Draw(t, "lsn"),
			}
		}), 0, 60).Draw(t, "writes")
		perm := rapid.Permutation(writes).Draw(t, "interleaving")

		want := map[string]int64{}
		for _, w := range writes {
			if w.lsn > want[w.p] {
				want[w.p] = w.lsn
			}
		}
		a, b := hedging.NewSessionTokens(), hedging.NewSessionTokens()
		prev := map[string]int64{}
		for _, w := range writes {
			a.Merge(w.p, w.lsn)
		}
		for _, w := range perm {
			b.Merge(w.p, w.lsn)
			if got := b.Get(w.p); got < prev[w.p] {
				t.Fatalf("token of %s regressed %d -> %d", w.p, prev[w.p], got)
			} else {
				prev[w.p] = got
			}
		}
		// Concurrently, too: split the permutation over goroutines.
		c := hedging.NewSessionTokens()
		var wg sync.WaitGroup
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := g; i < len(perm); i += 3 {
					c.Merge(perm[i].p, perm[i].lsn)
				}
			}(g)
		}
		wg.Wait()
		for _, p := range []string{"p0", "p1", "p2"} {
			if a.Get(p) != want[p] || b.Get(p) != want[p] || c.Get(p) != want[p] {
				t.Fatalf("%s: in order %d, permuted %d, concurrent %d; want max %d", p, a.Get(p), b.Get(p), c.Get(p), want[p])
			}
		}
	})
}

// Routing reads the tracker's demotions without its lock (a copy published
// on every trip, re-trip and end of a trip): whatever the sequence of wins
// and primary finals, Begin's primary for a partition is the first region
// that Unhealthy (which takes the lock) does not report.
func TestRoutingFollowsTrackerProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := htCfg(20*time.Millisecond, "A", "B", "C")
		cfg.ConsecutiveHedgeWinThreshold = rapid.IntRange(1, 3).Draw(rt, "threshold")
		cfg.ProbeInterval = time.Duration(rapid.IntRange(1, 5).Draw(rt, "probe_s")) * time.Second
		c, err := hedging.NewClient(cfg)
		if err != nil {
			rt.Fatal(err)
		}
		tr := c.HedgeWinTracker()
		parts := []string{"p0", "p1"}
		regions := []hedging.Region{"A", "B", "C"}
		var now time.Duration
		for i := range rapid.IntRange(1, 60).Draw(rt, "steps") {
			now += time.Duration(rapid.IntRange(0, 2000).Draw(rt, fmt.Sprintf("dt%d", i))) * time.Millisecond
			p := rapid.SampledFrom(parts).Draw(rt, fmt.Sprintf("part%d", i))
			r := rapid.SampledFrom(regions).Draw(rt, fmt.Sprintf("region%d", i))
			if rapid.Bool().Draw(rt, fmt.Sprintf("win%d", i)) {
				tr.RecordHedgeWin(now, p, r)
			} else {
				tr.RecordPrimaryFinal(now, p, r)
			}
			for _, q := range parts {
				want := hedging.Region("")
				for _, reg := range regions {
					if !tr.Unhealthy(now, q, reg) {
						want = reg
						break
					}
				}
				if want == "" {
					want = "A" // all demoted: the order is kept
				}
				var race hedging.Race
				e := htBegin(c, &race, now, &hedging.Operation{Kind: hedging.PointRead, Partition: q})
				if got := e.At(0).Attempt.Endpoint.Region; got != want {
					rt.Fatalf("step %d at %v: partition %s reads from %s, want %s", i, now, q, got, want)
				}
			}
		}
	})
}

// The minimum span of the breaker's trip rule (§9.5 #3, hedgelab's PPCB),
// at N = 3 and a 1 s span: each case is a pair's events (a win, or a final
// of the primary, at a time in ms) and the time of the trip (ms; -1 none).
func TestHedgeWinMinSpanRule(t *testing.T) {
	type ev struct {
		ms  float64
		win bool
	}
	wins := func(from, step float64, n int) (out []ev) {
		for i := range n {
			out = append(out, ev{from + step*float64(i), true})
		}
		return out
	}
	cat := func(xs ...[]ev) (out []ev) {
		for _, x := range xs {
			out = append(out, x...)
		}
		return out
	}
	fin := func(ms float64) []ev { return []ev{{ms, false}} }
	for _, tc := range []struct {
		name   string
		span   time.Duration
		events []ev
		trip   float64
	}{
		// gc-pause-hot-partition: a 15 ms pause every 5 s; the hot
		// partition's reads in the pause lose, the next ones win.
		{"a pause does not trip", time.Second, wins(10000, 3, 6), -1},
		{"pauses 5 s apart do not trip", time.Second,
			cat(wins(10000, 3, 6), fin(10100), fin(10900), wins(15000, 3, 6), fin(15100), fin(16200), wins(20000, 3, 6)), -1},
		{"count only: a pause trips at the third win", 0, wins(10000, 3, 6), 10006},
		// A slow partition at 400 reads/s with an unhedged read (a
		// primary final) every 500 ms: the count restarts, the run does
		// not; it trips at the third win after the run has lasted 1 s.
		{"a slow hot partition trips after the span", time.Second,
			cat(wins(0, 2.5, 200), fin(500), wins(502.5, 2.5, 199), fin(1000), wins(1002.5, 2.5, 10)), 1007.5},
		// A cold pair (one win every 10 s): its streak spans 20 s.
		{"a cold pair trips at its third win", time.Second, wins(0, 10000, 3), 20000},
		// A gap longer than the span after a final starts a new run.
		{"a gap restarts the run", time.Second,
			cat(wins(0, 100, 3)[:2], fin(300), wins(1500, 100, 11)), 2500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := hedging.NewHedgeWinTrackerSpan(3, time.Minute, tc.span)
			got := -1.0
			for _, e := range tc.events {
				now := time.Duration(e.ms * float64(time.Millisecond))
				if !e.win {
					tr.RecordPrimaryFinal(now, "p0", "A")
				} else if tr.RecordHedgeWin(now, "p0", "A") && got < 0 {
					got = e.ms
				}
			}
			if got != tc.trip {
				t.Errorf("tripped at %g ms, want %g (-1: never)", got, tc.trip)
			}
		})
	}
}

// A client's breaker takes DefaultHedgeWinMinSpan when
// Config.HedgeWinMinSpan is 0, and the spec's count-only rule when it is
// negative: three alternate wins 100 ms apart at N = 3 trip only the
// latter.
func TestClientHedgeWinMinSpanDefault(t *testing.T) {
	if hedging.DefaultHedgeWinMinSpan != time.Second {
		t.Errorf("DefaultHedgeWinMinSpan = %v, want 1s (notebook 02)", hedging.DefaultHedgeWinMinSpan)
	}
	for _, tc := range []struct {
		span time.Duration
		want bool
	}{{0, false}, {-1, true}, {150 * time.Millisecond, true}, {time.Second, false}} {
		cfg := htCfg(100*htMillisecond, "A", "B")
		cfg.ConsecutiveHedgeWinThreshold = 3
		cfg.HedgeWinMinSpan = tc.span
		c := htClient(t, cfg)
		for i := range 3 {
			htRace(t, c, time.Duration(i)*100*time.Millisecond, "p", htAltWins[0], htAltWins[1])
		}
		if got := c.HedgeWinTracker().Unhealthy(time.Second, "p", "A"); got != tc.want {
			t.Errorf("HedgeWinMinSpan %v: tripped = %v after 3 wins 100 ms apart, want %v", tc.span, got, tc.want)
		}
	}
}

// A breaker whose moved load the budget accounts for: once partition p has
// tripped away from its slow primary A, each of its reads would start on
// B, one more read on B that no hedge sent. Without a budget all 200 reads
// go to B first; under a 10% budget (bucket 2 tokens) the reads moved and
// the hedges sent share Ratio × operations + bucket: at most 22 of 202 on
// B, the rest wait on A.
func TestBudgetAccountsForBreakerMovedLoad(t *testing.T) {
	byRegion := func(at hedging.Attempt, _ int) htResp {
		if at.Endpoint.Region == "A" {
			return htR(time.Second, 200, 0)
		}
		return htR(10*time.Millisecond, 200, 0)
	}
	static := threshold.Static{T: hedging.MustThreshold(100 * time.Millisecond)}
	run := func(gate hedging.HedgeGate) (moved, hedged int) {
		cfg := htCfg(100*htMillisecond, "A", "B")
		s := hedging.NewPolicyStrategy(static)
		s.Gate = gate
		cfg.Strategy = hedging.Hedging(s)
		cfg.ConsecutiveHedgeWinThreshold, cfg.HedgeWinMinSpan, cfg.ProbeInterval = 2, -1, time.Hour
		c := htClient(t, cfg)
		for i := range 202 {
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p"}
			d := htNewDriver(t, c, &op, byRegion)
			d.start = time.Duration(i) * 2 * time.Second
			d.run()
			if i < 2 {
				continue // the two alternate wins that trip p
			}
			if d.sent[0].a.Endpoint.Region == "B" {
				moved++
			}
			if len(d.sent) > 1 {
				hedged++
			}
		}
		if !c.HedgeWinTracker().Unhealthy(404*time.Second, "p", "A") {
			t.Fatal("p did not trip away from A")
		}
		return moved, hedged
	}
	if moved, hedged := run(nil); moved != 200 || hedged != 0 {
		t.Errorf("no budget: %d of 200 reads moved to B, %d hedged; want 200, 0", moved, hedged)
	}
	b, err := threshold.NewBudget(threshold.BudgetConfig{Ratio: 0.1, Burst: 2})
	if err != nil {
		t.Fatal(err)
	}
	moved, hedged := run(b)
	t.Logf("10%% budget: %d reads moved, %d hedged, %d denied", moved, hedged, b.Denied())
	if moved < 1 || moved+hedged > 22 {
		t.Errorf("10%% budget: %d reads moved and %d hedged on B after the trip, want >= 1 moved and <= 22 in all (0.1 × 202 + 2)", moved, hedged)
	}
}

// trackerModel is the breaker's rule (§9.5, hedgelab's minimum span) with
// nothing but a map: every pair keeps its entry until a primary final
// deletes it, and every event looks it up. TestHedgeWinTrackerMatchesModel
// holds the tracker, which skips the lookups that change nothing and
// sweeps ended runs, to it.
type trackerModel struct {
	n           int
	probe, span time.Duration
	pairs       map[[2]string]*trackerModelPair
}

type trackerModelPair struct {
	consecutive                           int
	streakStart, runStart, lastWin, until time.Duration
}

func (m *trackerModel) win(now time.Duration, p, r string) bool {
	s := m.pairs[[2]string{p, r}]
	if s == nil {
		s = &trackerModelPair{}
		m.pairs[[2]string{p, r}] = s
	}
	if s.consecutive == 0 {
		s.streakStart = now
	}
	if s.lastWin == 0 || now-s.lastWin > m.span {
		s.runStart = now
	}
	s.lastWin = max(now, 1)
	s.consecutive++
	if s.consecutive >= m.n && now-min(s.streakStart, s.runStart) >= m.span && (s.until == 0 || now >= s.until) {
		s.until = now + m.probe
		s.consecutive = m.n - 1
		return true
	}
	return false
}

func (m *trackerModel) final(now time.Duration, p, r string) {
	k := [2]string{p, r}
	s := m.pairs[k]
	switch {
	case s == nil:
	case s.until != 0 && now < s.until:
		s.consecutive = 0
	case s.until == 0 && m.span > 0 && now-s.lastWin <= m.span:
		s.consecutive = 0
	default:
		delete(m.pairs, k)
	}
}

func TestHedgeWinTrackerMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := &trackerModel{
			n:     rapid.IntRange(1, 4).Draw(rt, "threshold"),
			probe: time.Duration(rapid.IntRange(1, 3000).Draw(rt, "probe_ms")) * time.Millisecond,
			span:  time.Duration(rapid.SampledFrom([]int{0, 1, 50, 1000}).Draw(rt, "span_ms")) * time.Millisecond,
			pairs: map[[2]string]*trackerModelPair{},
		}
		tr := hedging.NewHedgeWinTrackerSpan(m.n, m.probe, m.span)
		// 3 partitions (6 pairs: one table) or 40 (80 pairs: the table
		// grows, is rebuilt and reuses dead slots).
		parts, regions := make([]string, rapid.SampledFrom([]int{3, 40}).Draw(rt, "partitions")), []string{"A", "B"}
		for i := range parts {
			parts[i] = fmt.Sprintf("p%d", i)
		}
		var now time.Duration
		for i := range rapid.IntRange(1, 200).Draw(rt, "steps") {
			now += time.Duration(rapid.IntRange(0, 700).Draw(rt, fmt.Sprintf("dt%d", i))) * time.Millisecond
			p := rapid.SampledFrom(parts).Draw(rt, fmt.Sprintf("part%d", i))
			r := rapid.SampledFrom(regions).Draw(rt, fmt.Sprintf("region%d", i))
			if rapid.Bool().Draw(rt, fmt.Sprintf("win%d", i)) {
				if got, want := tr.RecordHedgeWin(now, p, hedging.Region(r)), m.win(now, p, r); got != want {
					rt.Fatalf("step %d at %v: win on (%s, %s) tripped %v, the rule says %v", i, now, p, r, got, want)
				}
			} else {
				tr.RecordPrimaryFinal(now, p, hedging.Region(r))
				m.final(now, p, r)
			}
			for _, q := range parts {
				for _, reg := range regions {
					s := m.pairs[[2]string{q, reg}]
					want, unhealthy := 0, false
					if s != nil {
						want, unhealthy = s.consecutive, s.until != 0 && now < s.until
					}
					if got := tr.Consecutive(q, hedging.Region(reg)); got != want {
						rt.Fatalf("step %d at %v: (%s, %s) counts %d wins, the rule %d", i, now, q, reg, got, want)
					}
					if got := tr.Unhealthy(now, q, hedging.Region(reg)); got != unhealthy {
						rt.Fatalf("step %d at %v: (%s, %s) unhealthy %v, the rule says %v", i, now, q, reg, got, unhealthy)
					}
				}
			}
		}
	})
}

// A pair whose streak a primary final reset within its run keeps its
// entry for the run, but not after it: once the run has ended the pair is
// gone (its slot dead, reused by the next pair that needs one), so a
// client that reads many partitions holds the pairs of the last second's
// wins, not of every partition that ever won once; and its table's size
// follows them: 50 rounds of 1000 new partitions each, 2 s apart (50000
// pairs in all, 1000 alive at a time), keep it within 4096 slots.
func TestHedgeWinTrackerForgetsEndedRuns(t *testing.T) {
	tr := hedging.NewHedgeWinTrackerSpan(5, time.Minute, time.Second)
	var now time.Duration
	for i := range 1000 {
		now += time.Millisecond
		p := fmt.Sprintf("p%d", i)
		tr.RecordHedgeWin(now, p, "A")
		tr.RecordPrimaryFinal(now+time.Microsecond, p, "A") // the streak resets, the run goes on
	}
	if n := tr.Pairs(now); n != 1000 {
		t.Fatalf("%d pairs within their runs, want 1000", n)
	}
	now += 2 * time.Second
	tr.RecordHedgeWin(now, "q", "A")
	if n := tr.Pairs(now); n != 1 {
		t.Errorf("%d pairs after every run but one ended, want 1", n)
	}
	if got := tr.Consecutive("p3", "A"); got != 0 {
		t.Errorf("an ended run's pair counts %d wins, want 0", got)
	}
	most := 0
	for round := range 50 {
		now += 2 * time.Second
		for i := range 1000 {
			now += time.Microsecond
			p := fmt.Sprintf("r%d-%d", round, i)
			tr.RecordHedgeWin(now, p, "A")
			tr.RecordPrimaryFinal(now, p, "A")
		}
		most = max(most, tr.PairSlots())
	}
	if most > 4096 {
		t.Errorf("the table grew to %d slots for 1000 pairs alive at a time, want at most 4096", most)
	}
	if n := tr.Pairs(now); n != 1001 {
		t.Errorf("%d pairs after the last round, want 1001 (its 1000 within their runs, and q's streak, which no primary final reset)", n)
	}
	if got := tr.Consecutive("q", "A"); got != 1 {
		t.Errorf("q's streak counts %d wins after the rounds, want 1", got)
	}
}
