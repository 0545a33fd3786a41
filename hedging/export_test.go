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
	ParseBool               = parseBool
	SwitchOf                = switchOf
	TerminalStates          = terminalStates
	ParseTerminalState      = parseTerminalState
	NewHedgeWinTracker      = func(n int, probe time.Duration) *HedgeWinTracker { return newHedgeWinTracker(n, probe, 0) }
	NewHedgeWinTrackerSpan  = newHedgeWinTracker
	NewLocationStore        = newLocationStore
	NewSessionTokens        = newSessionTokens
)

// RecordHedgeWin, RecordPrimaryFinal, Observe and Merge drive the shared
// state directly.
func (t *HedgeWinTracker) RecordHedgeWin(now Duration, partition string, primary Region) bool {
	return t.recordHedgeWin(now, partition, primary)
}

func (t *HedgeWinTracker) RecordPrimaryFinal(now Duration, partition string, primary Region) {
	t.recordPrimaryFinal(now, partition, primary)
}

func (s *LocationStore) Observe(now Duration, partition string, endpoint Endpoint, st Status) {
	s.observe(now, partition, endpoint, st)
}

func (s *SessionTokens) Merge(partition string, lsn int64) { s.merge(partition, lsn) }

// LocationStore returns the client's shared location store (§6.5 #10).
func (c *Client) LocationStore() *LocationStore { return c.store }

// SessionTokens returns the client's session tokens (§9.2).
func (c *Client) SessionTokens() *SessionTokens { return c.sessions }
