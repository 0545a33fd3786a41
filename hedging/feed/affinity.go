package feed

import (
	"fmt"

	"hedgelab/hedging"
)

// Affinity is the page-affinity policy of a leaf whose continuation is
// portable: whether later pages of the leaf are pinned to a region
// ([hedging.Client.Pin]: not hedged, no failover) once a page was served
// there (spec §16 Phase 2, §9.5). A region-affine continuation pins the
// next page to its issuing region whatever the policy.
type Affinity uint8

// Affinity policies.
const (
	// AffinityNone hedges every page afresh (the .NET and Java data
	// plane: every page starts on the primary and waits the threshold).
	AffinityNone Affinity = iota
	// PinAfterHedgeWin pins the rest of the leaf to the alternate's region
	// once a page's alternate won (.NET's partition-key-range feed).
	PinAfterHedgeWin
	// PinAlways pins the rest of the leaf to the region that served its
	// first page (the Rust driver's partition-key-range feed).
	PinAlways
	// BreakerDriven pins the rest of the leaf to the serving region while
	// the partition's breaker holds its primary region unhealthy after N
	// consecutive alternate wins (spec §9.5), and releases the pin when the
	// breaker lets the primary back (probe interval elapsed).
	BreakerDriven
	numAffinities
)

var affinityNames = [...]string{"none", "pin_after_hedge_win", "pin_always", "breaker_driven"}

// String returns "none", "pin_after_hedge_win", "pin_always" or
// "breaker_driven".
func (a Affinity) String() string { return enumName(affinityNames[:], a, "Affinity") }

// ParseAffinity maps a name written by [Affinity.String] to its policy, or
// returns an error naming the unknown value.
func ParseAffinity(s string) (Affinity, error) {
	return parseEnum[Affinity](affinityNames[:], s, "affinity")
}

// enumName returns names[v], or "Type(v)" for a value out of range.
func enumName[T ~uint8](names []string, v T, typ string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, uint8(v))
}

// parseEnum returns the value whose name is s, or an error naming what
// and the unknown value.
func parseEnum[T ~uint8](names []string, s, what string) (T, error) {
	for v, name := range names {
		if name == s {
			return T(v), nil
		}
	}
	return 0, fmt.Errorf("feed: unknown %s %q", what, s)
}

// DefaultAffinity is the policy of a feed kind when Config.Affinity does
// not name one: what the peer SDKs ship. Data-plane pages (query, ReadMany,
// change feed, point reads) are not pinned (.NET, Java); metadata feeds
// (the partition-key-range feed) pin after a hedge win (.NET; the Rust
// driver pins always, and its ETag continuation is region-affine, which
// pins regardless).
func DefaultAffinity(kind hedging.OperationKind) Affinity {
	if kind.IsMetadata() {
		return PinAfterHedgeWin
	}
	return AffinityNone
}

// PinAfter returns the region a leaf's later pages are pinned to after a
// page served by region served won on leg (primaryOpen: the breaker holds
// the page's primary region unhealthy, §9.5), or "" for no pin (spec §16
// Phase 2): PinAlways pins to served, PinAfterHedgeWin when leg is the
// alternate, BreakerDriven while primaryOpen, AffinityNone never. cur is the
// current policy pin ("" for none), which every policy keeps once set. The
// [Driver] and hedginghttp's continuation rules both decide with it.
func (a Affinity) PinAfter(cur, served hedging.Region, leg hedging.Leg, primaryOpen bool) hedging.Region {
	if cur != "" {
		return cur
	}
	switch {
	case a == PinAlways,
		a == PinAfterHedgeWin && leg == hedging.Alternate,
		a == BreakerDriven && primaryOpen:
		return served
	}
	return ""
}
