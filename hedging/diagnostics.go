package hedging

import (
	"fmt"
	"time"
)

// TerminalState is how a hedge race ended: the authoritative
// classification for observability (spec §10.1). Consumers must use it
// rather than infer the outcome from the regions.
type TerminalState uint8

// The seven terminal states of spec §10.1.
const (
	// PrimaryWonPreThreshold: the primary finished before the threshold and
	// the alternate was never spawned. One request.
	PrimaryWonPreThreshold TerminalState = iota + 1
	// DeadlineExceededPreThreshold: the deadline fired before the threshold;
	// only the primary was launched. Cancellation error.
	DeadlineExceededPreThreshold
	// PrimaryWonAfterHedge: the alternate was spawned but the primary's final
	// result won the race. Two requests.
	PrimaryWonAfterHedge
	// AlternateWon: the alternate produced the winning final result. The only
	// state with was_hedge = true.
	AlternateWon
	// BothTransientDeadlineElapsed is BothTransient{deadline_elapsed: true}:
	// both legs ended transient (a leg cancelled by the deadline counts as
	// transient) and the deadline had fired. Cancellation error.
	BothTransientDeadlineElapsed
	// BothTransient is BothTransient{deadline_elapsed: false}: both legs
	// returned transient results without the deadline firing; the most
	// recent transient result is returned as an error (§14.1).
	BothTransient
	// CancelledAwaitingPartner: one leg had ended transient and the deadline
	// fired while the other was still running. Cancellation error.
	CancelledAwaitingPartner
	numTerminalStates
)

var terminalStateNames = [...]string{
	"",
	"PrimaryWonPreThreshold",
	"DeadlineExceededPreThreshold",
	"PrimaryWonAfterHedge",
	"AlternateWon",
	"BothTransient{deadline_elapsed=true}",
	"BothTransient{deadline_elapsed=false}",
	"CancelledAwaitingPartner",
}

// terminalStates lists all seven states in spec order.
var terminalStates = [...]TerminalState{
	PrimaryWonPreThreshold, DeadlineExceededPreThreshold, PrimaryWonAfterHedge, AlternateWon,
	BothTransientDeadlineElapsed, BothTransient, CancelledAwaitingPartner,
}

// String returns the spec's name, with BothTransient rendered as
// "BothTransient{deadline_elapsed=true}" or "...=false}".
func (t TerminalState) String() string {
	if t > 0 && t < numTerminalStates {
		return terminalStateNames[t]
	}
	return fmt.Sprintf("TerminalState(%d)", uint8(t))
}

// parseTerminalState maps a name produced by String back to its state.
func parseTerminalState(s string) (TerminalState, error) {
	for i := 1; i < len(terminalStateNames); i++ {
		if terminalStateNames[i] == s {
			return TerminalState(i), nil
		}
	}
	return 0, fmt.Errorf("unknown terminal state %q", s)
}

// WasHedge reports whether the alternate produced the returned response:
// true only for AlternateWon (spec §10.1 hedge win-rate invariant).
func (t TerminalState) WasHedge() bool { return t == AlternateWon }

// LegDiagnostics describes one leg of a race.
type LegDiagnostics struct {
	Endpoint      Endpoint      // where the leg's last attempt went
	Attempts      int           // attempts sent on this leg (local retries included)
	LastStatus    Status        // status of the leg's last completed attempt (zero if none)
	Completed     bool          // the leg produced a result (final or transient) before the race ended
	Elapsed       time.Duration // time from the leg's start to its last completed attempt
	RequestCharge float64       // RU charged across the leg's completed attempts
}

// HedgeDiagnostics describes one hedge race. It is attached to an
// operation's outcome if and only if a hedging strategy was resolved and
// active for the operation (should_hedge returned true and the race was
// entered) — the attachment contract of spec §10.1. All fields are read
// through accessors.
//
// It is copied into every hedged answer, so it holds nothing an accessor
// can derive: the alternate's and the response's regions are those of the
// legs' endpoints as the race ended (the alternate has one candidate,
// regions[1], so its endpoint never changes; the winner's is the one it
// answered from), and a leg is stored without LegDiagnostics' padding.
type HedgeDiagnostics struct {
	diagDecisions
	// legs and totalCharge are written whole when the race ends (finish),
	// so Begin need not clear them.
	legs        [2]legDiag
	totalCharge float64
}

// diagDecisions is the part of HedgeDiagnostics set as the race goes,
// which Begin clears.
type diagDecisions struct {
	threshold     Threshold
	primaryRegion Region
	terminalState TerminalState
	spawnCause    SpawnCause // 0: the alternate was not spawned
	hedgeRefused  bool
	// response is 1 + the leg whose response was returned; 0 for the
	// terminal-error states.
	response uint8
}

// legDiag is one leg's LegDiagnostics as stored (Completed beside
// Attempts, which never exceeds the race's int32 count).
type legDiag struct {
	endpoint   Endpoint
	attempts   int32
	completed  bool
	lastStatus Status
	elapsed    time.Duration
	charge     float64
}

// Threshold returns the threshold that was active (strategy_config).
func (d *HedgeDiagnostics) Threshold() Threshold { return d.threshold }

// PrimaryRegion returns regions[0], the region the operation was first sent to.
func (d *HedgeDiagnostics) PrimaryRegion() Region { return d.primaryRegion }

// AlternateRegion returns the alternate's region and true when the alternate
// was spawned; false for PrimaryWonPreThreshold and
// DeadlineExceededPreThreshold.
func (d *HedgeDiagnostics) AlternateRegion() (Region, bool) {
	if d.spawnCause == 0 {
		return "", false
	}
	return d.legs[Alternate].endpoint.Region, true
}

// ResponseRegion returns the region whose response was returned and true for
// the winning states (PrimaryWonPreThreshold, PrimaryWonAfterHedge,
// AlternateWon); false for the terminal-error states.
func (d *HedgeDiagnostics) ResponseRegion() (Region, bool) {
	if d.response == 0 {
		return "", false
	}
	return d.legs[d.response-1].endpoint.Region, true
}

// SpawnCause returns why the alternate was sent, and false when it was not
// (cosmos.hedge.alternate_spawned's cause field, §10.4).
func (d *HedgeDiagnostics) SpawnCause() (SpawnCause, bool) { return d.spawnCause, d.spawnCause != 0 }

// HedgeRefused reports whether an alternate was due (the threshold fired,
// or the primary's result would have upgraded into a hedge) but the
// operation's [LegGate] had no slot (spec §16 Phase 2): the primary ran
// alone, or failed over sequentially.
func (d *HedgeDiagnostics) HedgeRefused() bool { return d.hedgeRefused }

// TerminalState returns how the race ended.
func (d *HedgeDiagnostics) TerminalState() TerminalState { return d.terminalState }

// Leg returns the diagnostics of the primary or alternate leg.
func (d *HedgeDiagnostics) Leg(l Leg) LegDiagnostics {
	g := &d.legs[l]
	return LegDiagnostics{Endpoint: g.endpoint, Attempts: int(g.attempts), LastStatus: g.lastStatus,
		Completed: g.completed, Elapsed: g.elapsed, RequestCharge: g.charge}
}

// RequestChargeTotal returns the RU charged across every completed attempt
// of both legs, the operator-facing figure of spec §10.4
// (cosmos.hedge.ru_charge_total). The caller-visible charge is the winner's
// only (§17 Q3).
func (d *HedgeDiagnostics) RequestChargeTotal() float64 { return d.totalCharge }

// String renders a one-line summary.
func (d *HedgeDiagnostics) String() string {
	alternate, _ := d.AlternateRegion()
	response, _ := d.ResponseRegion()
	return fmt.Sprintf("hedge{state=%s threshold=%s primary=%s alternate=%s cause=%s response=%s}",
		d.terminalState, d.threshold, d.primaryRegion, alternate, d.spawnCause, response)
}
