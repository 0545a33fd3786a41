package hedging_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/racecases"
)

// The §10.1 taxonomy, with the names used in shared/cases/race-cases.toml.
var htStateTable = []struct {
	s        hedging.TerminalState
	name     string
	wasHedge bool
	reqs     int
	deadline bool
}{
	{hedging.PrimaryWonPreThreshold, "PrimaryWonPreThreshold", false, 1, false},
	{hedging.DeadlineExceededPreThreshold, "DeadlineExceededPreThreshold", false, 1, true},
	{hedging.PrimaryWonAfterHedge, "PrimaryWonAfterHedge", false, 2, false},
	{hedging.AlternateWon, "AlternateWon", true, 2, false},
	{hedging.BothTransientDeadlineElapsed, "BothTransient{deadline_elapsed=true}", false, 2, true},
	{hedging.BothTransient, "BothTransient{deadline_elapsed=false}", false, 2, false},
	{hedging.CancelledAwaitingPartner, "CancelledAwaitingPartner", false, 2, true},
}

func TestTerminalStateTaxonomy(t *testing.T) {
	if len(hedging.TerminalStates) != 7 || len(htStateTable) != 7 {
		t.Fatalf("%d terminal states, want the seven of §10.1", len(hedging.TerminalStates))
	}
	for i, tc := range htStateTable {
		t.Run(tc.name, func(t *testing.T) {
			if hedging.TerminalStates[i] != tc.s {
				t.Errorf("TerminalStates[%d] = %v, want %v (spec order)", i, hedging.TerminalStates[i], tc.s)
			}
			if got := tc.s.String(); got != tc.name {
				t.Errorf("String() = %q, want %q", got, tc.name)
			}
			back, err := hedging.ParseTerminalState(tc.s.String())
			if err != nil || back != tc.s {
				t.Errorf("ParseTerminalState(%q) = %v, %v", tc.s.String(), back, err)
			}
			if got := tc.s.WasHedge(); got != tc.wasHedge {
				t.Errorf("WasHedge() = %v, want %v", got, tc.wasHedge)
			}
			if got := tc.s.Requests(); got != tc.reqs {
				t.Errorf("Requests() = %d, want %d", got, tc.reqs)
			}
			if got := tc.s.DeadlineElapsed(); got != tc.deadline {
				t.Errorf("DeadlineElapsed() = %v, want %v", got, tc.deadline)
			}
		})
	}
	for _, bad := range []string{"", "BothTransient", "alternatewon", "none", "BothTransient{deadline_elapsed: true}", "TerminalState(0)"} {
		s, err := hedging.ParseTerminalState(bad)
		if err == nil || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("ParseTerminalState(%q) = %v, %v; want an error naming the value", bad, s, err)
		}
	}
	for _, s := range []hedging.TerminalState{0, 8, 255} {
		if want := "TerminalState(" + strconv.Itoa(int(s)) + ")"; s.String() != want {
			t.Errorf("String() of invalid state = %q, want %q", s.String(), want)
		}
		if s.WasHedge() {
			t.Errorf("invalid state %d reports WasHedge", s)
		}
	}
}

// Every terminal-state name used by the shared race cases parses back.
func TestTerminalStateNamesMatchSharedCases(t *testing.T) {
	cases, err := racecases.LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range cases {
		name := c.Expect.TerminalState
		if name == "none" {
			continue
		}
		s, err := hedging.ParseTerminalState(name)
		if err != nil || s.String() != name {
			t.Errorf("case %q: terminal_state %q does not round-trip: %v, %v", c.Name, name, s, err)
		}
		seen++
	}
	if seen < 10 {
		t.Fatalf("only %d named states in the shared cases", seen)
	}
}

// The attachment contract of §10.1: diagnostics present iff a strategy
// resolved and should_hedge was true.
func TestDiagnosticsAttachmentContract(t *testing.T) {
	hedge := htHedging(100 * time.Millisecond)
	for _, tc := range []struct {
		name    string
		cfg     hedging.Config
		op      hedging.Operation
		present bool
	}{
		{"disabled client", hedging.Config{Regions: htRegions("A", "B"), Strategy: hedging.Disabled}, hedging.Operation{Kind: hedging.PointRead}, false},
		{"disabled op", hedging.Config{Regions: htRegions("A", "B"), Strategy: hedge}, hedging.Operation{Kind: hedging.PointRead, Strategy: hedging.Disabled}, false},
		{"master switch off", hedging.Config{Regions: htRegions("A", "B"), Strategy: hedge}, hedging.Operation{Kind: hedging.PointRead, HedgingEnabled: hedging.SwitchOff}, false},
		{"write", hedging.Config{Regions: htRegions("A", "B"), Strategy: hedge}, hedging.Operation{Kind: hedging.Upsert}, false},
		{"single region", hedging.Config{Regions: htRegions("A"), Strategy: hedge}, hedging.Operation{Kind: hedging.PointRead}, false},
		{"excluded to one region", hedging.Config{Regions: htRegions("A", "B"), Strategy: hedge}, hedging.Operation{Kind: hedging.PointRead, ExcludeRegions: []hedging.Region{"B"}}, false},
		{"aliased replica", hedging.Config{Regions: []hedging.Endpoint{{Region: "A", Key: "shared"}, {Region: "B", Key: "shared"}}, Strategy: hedge}, hedging.Operation{Kind: hedging.PointRead}, false},
		{"query in phase 1", hedging.Config{Regions: htRegions("A", "B"), Strategy: hedge}, hedging.Operation{Kind: hedging.QueryPage}, false},
		{"normal read", hedging.Config{Regions: htRegions("A", "B"), Strategy: hedge}, hedging.Operation{Kind: hedging.PointRead}, true},
		{"driver default read", hedging.Config{Regions: htRegions("A", "B")}, hedging.Operation{Kind: hedging.PointRead}, true},
		{"query in phase 2", hedging.Config{Regions: htRegions("A", "B"), Strategy: hedge, Phase: hedging.Phase2}, hedging.Operation{Kind: hedging.QueryPage}, true},
	} {
		for _, outcome := range []struct {
			name string
			p    htResp
		}{{"final", htR(20*time.Millisecond, 200, 0)}, {"transient", htR(20*time.Millisecond, 500, 0)}} {
			t.Run(tc.name+"/"+outcome.name, func(t *testing.T) {
				cfg := tc.cfg
				cfg.Retry.MaxAttempts = 1
				c := htClient(t, cfg)
				op := tc.op
				op.Partition = "p"
				d := htNewDriver(t, c, &op, htLegs(outcome.p, htR(time.Second, 200, 0))).run()
				diag, ok := d.r.Diagnostics()
				if ok != tc.present || (diag != nil) != tc.present || d.r.Hedged() != tc.present {
					t.Fatalf("Diagnostics() present = %v (hedged %v), want %v", ok, d.r.Hedged(), tc.present)
				}
				res, err := d.r.Result()
				if outcome.name == "final" {
					if err != nil || res.Status.Code != 200 {
						t.Fatalf("outcome %v, %v", res.Status, err)
					}
				} else {
					var he *hedging.Error
					if !errors.As(err, &he) {
						t.Fatalf("err = %v, want *Error", err)
					}
					if (he.Diagnostics != nil) != tc.present {
						t.Errorf("Error.Diagnostics present = %v, want %v", he.Diagnostics != nil, tc.present)
					}
					if he.Status != htSt(500, 0) || !errors.Is(err, hedging.ErrTransient) {
						t.Errorf("Error = %v, want last status 500 and ErrTransient", he)
					}
				}
				if !tc.present {
					return
				}
				if diag.TerminalState() != hedging.PrimaryWonPreThreshold {
					t.Errorf("terminal state = %v, want PrimaryWonPreThreshold", diag.TerminalState())
				}
				if alt, ok := diag.AlternateRegion(); ok {
					t.Errorf("alternate region = %q, want none", alt)
				}
				// A response region only when a response was returned (§10.1).
				if rr, ok := diag.ResponseRegion(); ok != (outcome.name == "final") || (ok && rr != "A") {
					t.Errorf("response region = %q,%v; want regions[0] = A only for a final response", rr, ok)
				}
				if diag.PrimaryRegion() != "A" {
					t.Errorf("primary region = %q, want A", diag.PrimaryRegion())
				}
				if diag.Threshold() != d.r.Threshold() || diag.Threshold().IsZero() {
					t.Errorf("diagnostics threshold %v, race threshold %v", diag.Threshold(), d.r.Threshold())
				}
				if diag.WasHedge() || diag.MostAdvancedLeg() != hedging.Primary {
					t.Errorf("WasHedge=%v MostAdvanced=%v", diag.WasHedge(), diag.MostAdvancedLeg())
				}
				if l := diag.Leg(hedging.Primary); !l.Completed || l.Attempts != 1 || l.Elapsed != 20*time.Millisecond || l.Endpoint.Region != "A" {
					t.Errorf("primary leg = %+v", l)
				}
				if l := diag.Leg(hedging.Alternate); l.Attempts != 0 || l.Completed {
					t.Errorf("alternate leg = %+v, want untouched", l)
				}
				if !strings.Contains(diag.String(), "PrimaryWonPreThreshold") {
					t.Errorf("String() = %q", diag.String())
				}
			})
		}
	}
}

// Field semantics of each winning and error state (§10.1 table).
func TestDiagnosticsFieldsPerTerminalState(t *testing.T) {
	for _, tc := range []struct {
		name      string
		timeout   time.Duration
		p, a      htResp
		state     hedging.TerminalState
		alternate bool
		response  hedging.Region // "" = none
		winner    bool
		legs      int
	}{
		{"PrimaryWonPreThreshold", 0, htR(50*htMillisecond, 200, 0), htR(10*htMillisecond, 200, 0), hedging.PrimaryWonPreThreshold, false, "A", true, 1},
		{"DeadlineExceededPreThreshold", 80 * htMillisecond, htR(time.Second, 200, 0), htR(10*htMillisecond, 200, 0), hedging.DeadlineExceededPreThreshold, false, "", false, 1},
		{"PrimaryWonAfterHedge", 0, htR(150*htMillisecond, 200, 0), htR(100*htMillisecond, 200, 0), hedging.PrimaryWonAfterHedge, true, "A", true, 2},
		{"AlternateWon", 0, htR(time.Second, 200, 0), htR(10*htMillisecond, 200, 0), hedging.AlternateWon, true, "B", true, 2},
		{"BothTransientDeadlineElapsed", 300 * htMillisecond, htR(time.Second, 200, 0), htR(time.Second, 200, 0), hedging.BothTransientDeadlineElapsed, true, "", false, 2},
		{"BothTransient", 0, htR(300*htMillisecond, 503, 0), htR(100*htMillisecond, 410, 0), hedging.BothTransient, true, "", false, 2},
		{"CancelledAwaitingPartner", 300 * htMillisecond, htR(time.Second, 200, 0), htR(50*htMillisecond, 503, 0), hedging.CancelledAwaitingPartner, true, "", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := htClient(t, htCfg(100*htMillisecond, "A", "B"))
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", Timeout: tc.timeout}
			d := htNewDriver(t, c, &op, htLegs(tc.p, tc.a)).run()
			diag := htDiag(t, &d.r)
			if diag.TerminalState() != tc.state {
				t.Fatalf("terminal state = %v, want %v", diag.TerminalState(), tc.state)
			}
			if alt, ok := diag.AlternateRegion(); ok != tc.alternate || (ok && alt != "B") {
				t.Errorf("alternate region = %q,%v; want present=%v", alt, ok, tc.alternate)
			}
			rr, ok := diag.ResponseRegion()
			if ok != (tc.response != "") || rr != tc.response {
				t.Errorf("response region = %q,%v; want %q", rr, ok, tc.response)
			}
			if _, won := d.r.Winner(); won != tc.winner {
				t.Errorf("winner present = %v, want %v", won, tc.winner)
			}
			if d.r.Legs() != tc.legs || tc.state.Requests() != tc.legs {
				t.Errorf("legs = %d, Requests() = %d, want %d", d.r.Legs(), tc.state.Requests(), tc.legs)
			}
			if diag.WasHedge() != (tc.state == hedging.AlternateWon) {
				t.Errorf("WasHedge = %v", diag.WasHedge())
			}
			w, won := d.r.Winner()
			if won && (w == hedging.Alternate) != diag.WasHedge() {
				t.Errorf("winner %v disagrees with WasHedge %v", w, diag.WasHedge())
			}
			_, err := d.r.Result()
			if (err == nil) != tc.winner {
				t.Errorf("err = %v, want error iff no winner", err)
			}
			if err != nil && !strings.Contains(err.Error(), tc.state.String()) {
				t.Errorf("error text %q does not name the terminal state", err)
			}
		})
	}
}
