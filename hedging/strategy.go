package hedging

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Threshold is a validated, strictly positive hedging threshold: how long
// the primary may run without a final response before the alternate is
// sent. The zero value is not a valid threshold; build one with
// [NewThreshold]. Spec §4.1 (HedgeThreshold).
type Threshold struct{ d time.Duration }

// NewThreshold returns the threshold d and true, or the zero Threshold and
// false when d is zero or negative. Spec §4.1.
func NewThreshold(d time.Duration) (Threshold, bool) {
	if d <= 0 {
		return Threshold{}, false
	}
	return Threshold{d}, true
}

// MustThreshold is [NewThreshold] for constants known to be positive; it
// panics on a zero or negative duration. Use it only with literals.
func MustThreshold(d time.Duration) Threshold {
	t, ok := NewThreshold(d)
	if !ok {
		panic(fmt.Sprintf("hedging: threshold must be > 0, got %v", d))
	}
	return t
}

// Get returns the threshold's duration (always > 0 for a valid Threshold).
func (t Threshold) Get() time.Duration { return t.d }

// IsZero reports whether t is the invalid zero value.
func (t Threshold) IsZero() bool { return t.d == 0 }

// String renders the threshold as a duration ("200ms").
func (t Threshold) String() string { return t.d.String() }

// DefaultThresholdCap is the upper bound of the driver default threshold
// (spec §5.2): 1 s.
const DefaultThresholdCap = time.Second

// MetadataThreshold is the threshold of every hedged metadata read
// (OperationKind.IsMetadata): the first control-plane attempt timeout
// (about 1 s) plus a 500 ms step, so a hedge fires strictly between the
// first (1 s) and second (5 s) attempt timeouts. It is .NET's
// MetadataHedgingStrategy threshold and the Rust driver's
// METADATA_HEDGE_THRESHOLD, and like theirs it replaces the strategy's
// threshold (and its policy and gate) without deciding whether the read is
// hedged: a Disabled client or operation, or the master switch off, hedges
// no metadata read (spec §16 Phase 2).
const MetadataThreshold = 1500 * time.Millisecond

// DriverDefaultThreshold returns the driver default threshold of spec §5.2:
// min(1 s, requestTimeout/2), and 1 s when requestTimeout is zero or
// negative (unset). A positive timeout under 2 ns yields the smallest
// positive threshold (1 ns) rather than an invalid zero.
func DriverDefaultThreshold(requestTimeout time.Duration) Threshold {
	if requestTimeout <= 0 {
		return Threshold{DefaultThresholdCap}
	}
	d := min(DefaultThresholdCap, requestTimeout/2)
	return Threshold{max(d, 1)}
}

// HedgingStrategy is the cross-region hedging availability strategy: after
// the threshold, one request goes to the alternate region. The threshold is
// either fixed or chosen per operation by a [ThresholdPolicy] (spec §17 Q11;
// the policy is an extension beyond §4.1, which knows only a fixed
// threshold). Build one with [NewHedgingStrategy] or [NewPolicyStrategy],
// then set Gate to bound the hedges it sends.
type HedgingStrategy struct {
	// Gate, when not nil, admits each hedge the threshold makes due, and
	// each read a tripped partition breaker moves to the alternate region,
	// before it is sent (a hedge budget,
	// [hedgelab/hedging/threshold.Budget]; spec §17 Q11 extension). The
	// threshold is unchanged by it. Nil sends every hedge that is due.
	Gate HedgeGate

	threshold Threshold
	policy    ThresholdPolicy
}

// stateless reports whether s keeps no state of its own: a fixed
// threshold, no threshold policy (latency windows) and no Gate (a hedge
// budget). Clients may share a stateless strategy; this is the one
// definition of it.
func (s HedgingStrategy) stateless() bool { return s.policy == nil && s.Gate == nil }

// NewHedgingStrategy returns a strategy with the fixed threshold t. Spec §4.1.
func NewHedgingStrategy(t Threshold) HedgingStrategy { return HedgingStrategy{threshold: t} }

// NewPolicyStrategy returns a strategy whose threshold p chooses per
// operation (for example [hedgelab/hedging/threshold.Recommended]). A nil p
// yields the driver default.
func NewPolicyStrategy(p ThresholdPolicy) HedgingStrategy {
	return HedgingStrategy{threshold: DriverDefaultThreshold(0), policy: p}
}

// Threshold returns the strategy's fixed threshold. For a policy strategy it
// is the fallback used when the policy has no opinion.
func (s HedgingStrategy) Threshold() Threshold { return s.threshold }

// Policy returns the strategy's threshold policy, or nil for a fixed
// threshold.
func (s HedgingStrategy) Policy() ThresholdPolicy { return s.policy }

type strategyKind uint8

const (
	strategyUnset strategyKind = iota
	strategyHedging
	strategyDisabled
)

// AvailabilityStrategy is what a client or a single operation asks for:
// hedging with a strategy, explicitly Disabled, or (the zero value) nothing,
// which defers to the layer below. Spec §4.2, §4.3.
type AvailabilityStrategy struct {
	kind    strategyKind
	hedging HedgingStrategy
}

// Disabled is the explicit opt-out: on a client it suppresses the driver
// default for every operation; on an operation it suppresses only that
// operation. Spec §4.2.
var Disabled = AvailabilityStrategy{kind: strategyDisabled}

// Hedging returns an AvailabilityStrategy that selects s. Spec §4.2.
func Hedging(s HedgingStrategy) AvailabilityStrategy {
	return AvailabilityStrategy{kind: strategyHedging, hedging: s}
}

// isSet reports whether the strategy says anything (Hedging or Disabled).
func (a AvailabilityStrategy) isSet() bool { return a.kind != strategyUnset }

// HedgingStrategy returns the hedging strategy and true when a selects
// hedging.
func (a AvailabilityStrategy) HedgingStrategy() (HedgingStrategy, bool) {
	return a.hedging, a.kind == strategyHedging
}

// String renders "unset", "disabled", "hedging(200ms)" or, with a policy
// and a gate, "hedging(p99_dynamic+budget(0.2))".
func (a AvailabilityStrategy) String() string {
	switch a.kind {
	case strategyHedging:
		name := a.hedging.threshold.String()
		if a.hedging.policy != nil {
			name = a.hedging.policy.Name()
		}
		if a.hedging.Gate != nil {
			name += "+" + a.hedging.Gate.Name()
		}
		return "hedging(" + name + ")"
	case strategyDisabled:
		return "disabled"
	}
	return "unset"
}

// Switch is an optional boolean layer of the hedging_enabled master switch
// (spec §4.4, §11.3): unset, on or off.
type Switch uint8

// The three values of a [Switch].
const (
	SwitchUnset Switch = iota
	SwitchOn
	SwitchOff
)

// switchOf returns SwitchOn for true and SwitchOff for false.
func switchOf(b bool) Switch {
	if b {
		return SwitchOn
	}
	return SwitchOff
}

// String renders "unset", "on" or "off".
func (s Switch) String() string {
	switch s {
	case SwitchOn:
		return "on"
	case SwitchOff:
		return "off"
	}
	return "unset"
}

// HedgingEnabledLayers holds every layer of the hedging_enabled master
// switch. The effective value is the first set layer in the order
// EnvOverride > Operation > Account > Runtime > Env (spec §11.3).
type HedgingEnabledLayers struct {
	EnvOverride Switch // AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE: the incident kill switch
	Operation   Switch // per-operation options
	Account     Switch // account-level options
	Runtime     Switch // runtime (client) options
	Env         Switch // AZURE_COSMOS_HEDGING_ENABLED
}

// effective returns the first set layer, or SwitchUnset. Spec §11.3.
func (l HedgingEnabledLayers) effective() Switch {
	for _, s := range [...]Switch{l.EnvOverride, l.Operation, l.Account, l.Runtime, l.Env} {
		if s != SwitchUnset {
			return s
		}
	}
	return SwitchUnset
}

// resolveStrategy picks the effective hedging strategy of one operation by
// the priority of spec §11.3.1:
//
//  0. the hedging_enabled master switch (enabled, already resolved through
//     its layers): off forces hedging off even over an explicit Hedging;
//     on forces it on even over an explicit Disabled, with the threshold of
//     a programmatic Hedging (operation first, then client) or else the
//     driver default;
//  1. the operation's strategy, including Disabled;
//  2. the client's (runtime's) strategy, including Disabled;
//  3. the driver default, min(1 s, requestTimeout/2) (§5.2).
//
// It returns the strategy and true when hedging is on. Whether the
// operation is then hedged is decided by [shouldHedge] (row 4 of §11.3.1,
// "none", is the region and operation-kind check there).
func resolveStrategy(enabled Switch, operation, client AvailabilityStrategy, requestTimeout time.Duration) (HedgingStrategy, bool) {
	switch enabled {
	case SwitchOff:
		return HedgingStrategy{}, false
	case SwitchOn:
		if s, ok := operation.HedgingStrategy(); ok {
			return s, true
		}
		if s, ok := client.HedgingStrategy(); ok {
			return s, true
		}
		return NewHedgingStrategy(DriverDefaultThreshold(requestTimeout)), true
	}
	for _, layer := range [...]AvailabilityStrategy{operation, client} {
		switch layer.kind {
		case strategyDisabled:
			return HedgingStrategy{}, false
		case strategyHedging:
			return layer.hedging, true
		}
	}
	return NewHedgingStrategy(DriverDefaultThreshold(requestTimeout)), true
}

// Environment variable names read once when a client is built (spec §4.4,
// §9.5).
const (
	EnvHedgingEnabled               = "AZURE_COSMOS_HEDGING_ENABLED"
	EnvHedgingEnabledOverride       = "AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE"
	EnvConsecutiveHedgeWinThreshold = "AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD"
)

// parseBool parses a lenient boolean (spec §4.4): true/false, 1/0, yes/no,
// on/off, in any case, with surrounding spaces ignored. Anything else is an
// error, never a silent default.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q (want true/false, 1/0, yes/no or on/off)", s)
}

// EnvConfig is the process environment as the driver reads it once at client
// build time (spec §4.4, §9.5 #3).
type EnvConfig struct {
	HedgingEnabled         Switch // AZURE_COSMOS_HEDGING_ENABLED
	HedgingEnabledOverride Switch // AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE
	// ConsecutiveHedgeWinThreshold is AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD,
	// 0 when unset.
	ConsecutiveHedgeWinThreshold int
}

// LoadEnv reads the hedging environment variables through lookup (use
// os.LookupEnv). Unset variables are inert. A value that does not parse is
// an error naming the variable and the value, e.g.
// `AZURE_COSMOS_HEDGING_ENABLED="maybe": not a boolean ...`.
func LoadEnv(lookup func(string) (string, bool)) (EnvConfig, error) {
	var cfg EnvConfig
	for _, v := range []struct {
		name string
		dst  *Switch
	}{{EnvHedgingEnabled, &cfg.HedgingEnabled}, {EnvHedgingEnabledOverride, &cfg.HedgingEnabledOverride}} {
		raw, ok := lookup(v.name)
		if !ok {
			continue
		}
		b, err := parseBool(raw)
		if err != nil {
			return EnvConfig{}, fmt.Errorf("%s=%q: %w", v.name, raw, err)
		}
		*v.dst = switchOf(b)
	}
	if raw, ok := lookup(EnvConsecutiveHedgeWinThreshold); ok {
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n < 1 {
			return EnvConfig{}, fmt.Errorf("%s=%q: want a positive integer", EnvConsecutiveHedgeWinThreshold, raw)
		}
		cfg.ConsecutiveHedgeWinThreshold = n
	}
	return cfg, nil
}
