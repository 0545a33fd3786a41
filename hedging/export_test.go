package hedging

import "time"

// Duration abbreviates time.Duration in this file.
type Duration = time.Duration

// Test-only exports: the spec-table helpers (§4.2, §5.1, §6.2–§6.4.1,
// §7.2.1, §10.1, §11.3.1) and the shared state's mutators, which the public
// API keeps unexported, are reachable from the package's external tests
// under their spec names.

type (
	LocationStore = locationStore
	SessionTokens = sessionTokens
	Eligibility   = eligibility
	Reason        = eligibilityReason
)

const (
	ReasonNoStrategy         = reasonNoStrategy
	ReasonNoPreferredRegions = reasonNoPreferredRegions
	ReasonNotInPhase         = reasonNotInPhase
	ReasonWrite              = reasonWrite
	ReasonRegionAffineFeed   = reasonRegionAffineFeed
	ReasonTooFewRegions      = reasonTooFewRegions
	ReasonEligible           = reasonEligible
)

var (
	ShouldHedge             = shouldHedge
	ApplicableRegions       = applicableRegions
	AlternateExcludeRegions = alternateExcludeRegions
	Distinct                = distinct
	ResolveStrategy         = resolveStrategy
	CanSpawnHedge           = canSpawnHedge
	IsFinalFor              = isFinalFor
	ParseBool               = parseBool
	SwitchOf                = switchOf
	TerminalStates          = terminalStates
	ParseTerminalState      = parseTerminalState
	NewHedgeWinTracker      = func(n int, probe time.Duration) *HedgeWinTracker { return newHedgeWinTracker(n, probe, 0) }
	NewHedgeWinTrackerSpan  = newHedgeWinTracker
	NewLocationStore        = func(d time.Duration) *LocationStore { return newLocationStore(d, 0) }
	NewLocationStoreAfter   = newLocationStore
	NewSessionTokens        = newSessionTokens
)

// RecordHedgeWin, RecordPrimaryFinal, Observe and Merge drive the shared
// state directly.
func (t *HedgeWinTracker) RecordHedgeWin(now Duration, partition string, primary Region) bool {
	return t.recordHedgeWin(t.hot, now, partition, primary)
}

func (t *HedgeWinTracker) RecordPrimaryFinal(now Duration, partition string, primary Region) {
	t.recordPrimaryFinal(t.hot, now, partition, primary)
}

func (s *LocationStore) Observe(now Duration, partition string, endpoint Endpoint, st Status) {
	s.observe(now, partition, endpoint, st)
}

func (s *SessionTokens) Merge(partition string, lsn int64) { s.merge(partition, lsn) }

// LocationStore returns the client's shared location store (§6.5 #10).
func (c *Client) LocationStore() *LocationStore { return &c.store }

// SessionTokens returns the client's session tokens (§9.2).
func (c *Client) SessionTokens() *SessionTokens { return &c.sessions }

// Accessors only the tests read, moved out of the public API (a package
// exports what a user calls).

// Config returns the configuration with defaults applied.
func (c *Client) Config() Config { return c.cfg }

// DeadlineElapsed reports whether the state is a deadline/cancellation
// outcome.
func (t TerminalState) DeadlineElapsed() bool {
	return t == DeadlineExceededPreThreshold || t == BothTransientDeadlineElapsed || t == CancelledAwaitingPartner
}

// Requests is the number of legs the state implies: 1 for the two
// pre-threshold states, 2 otherwise (spec §10.1 "Total reqs").
func (t TerminalState) Requests() int {
	if t == PrimaryWonPreThreshold || t == DeadlineExceededPreThreshold {
		return 1
	}
	return 2
}

// MostAdvancedLeg returns the leg that got furthest: the one with a
// completed result (the alternate if both), else the alternate if it was
// spawned, else the primary (spec §6.5 #7).
func (d *HedgeDiagnostics) MostAdvancedLeg() Leg {
	switch {
	case d.legs[Alternate].completed:
		return Alternate
	case d.legs[Primary].completed:
		return Primary
	case d.spawnCause != 0:
		return Alternate
	}
	return Primary
}

// Threshold returns the number of consecutive alternate wins that trips.
func (t *HedgeWinTracker) Threshold() int { return t.threshold }

// ProbeInterval returns how long a tripped region stays demoted.
func (t *HedgeWinTracker) ProbeInterval() time.Duration { return t.probe }

// Trips returns how many times any pair has tripped.
func (t *HedgeWinTracker) Trips() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.trips
}

// With returns the set with k added.
func (p PhaseSet) With(k OperationKind) PhaseSet { return p | 1<<k }

// Allows reports whether k is in the set.
func (p PhaseSet) Allows(k OperationKind) bool { return p.allows(k) }

// IsSet reports whether the strategy says anything (Hedging or Disabled).
func (a AvailabilityStrategy) IsSet() bool { return a.isSet() }

// Effective returns the first set layer, or SwitchUnset. Spec §11.3.
func (l HedgingEnabledLayers) Effective() Switch { return l.effective() }

// Redundant accessors removed from the public API, kept for the tests
// written against them; each is its public equivalent.

// IsDisabled is a == Disabled.
func (a AvailabilityStrategy) IsDisabled() bool { return a == Disabled }

// Hedged is the ok of r.Diagnostics(): a hedging strategy was active.
func (r *Race) Hedged() bool { _, ok := r.Diagnostics(); return ok }

// Legs is 2 when r.AlternateSpawned(), else 1.
func (r *Race) Legs() int {
	if r.AlternateSpawned() {
		return 2
	}
	return 1
}

// TotalRequestCharge returns the RU of every attempt that reported back,
// both legs (§10.4 cosmos.hedge.ru_charge_total), as Observer's
// OperationEvent.TotalRequestCharge and, for a hedged race,
// Diagnostics().RequestChargeTotal().
func (r *Race) TotalRequestCharge() float64 { return r.totalCharge }

// WasHedge is d.TerminalState().WasHedge().
func (d *HedgeDiagnostics) WasHedge() bool { return d.TerminalState().WasHedge() }

// Pairs is the number of (partition, region) pairs the tracker holds at
// now: its slots that are not dead (a dead slot behaves as no entry).
func (t *HedgeWinTracker) Pairs(now Duration) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for i := range t.slots {
		if s := &t.slots[i]; s.used && !t.dead(s, now) {
			n++
		}
	}
	return n
}

// PairSlots is the size of the tracker's table of pairs (its memory, in
// 64-byte slots).
func (t *HedgeWinTracker) PairSlots() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.slots)
}
