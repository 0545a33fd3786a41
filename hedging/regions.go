package hedging

import "slices"

// Region is an account region name as it appears in the preferred-region
// list and in ExcludeRegions ("East US 2").
type Region string

// Endpoint is one applicable read endpoint: the region name and the key of
// the physical endpoint (replica) it resolves to. Two endpoints with
// different region names can share a Key when a regional endpoint and a
// global alias reach the same replica (spec §6.4.1).
type Endpoint struct {
	Region Region
	Key    string
}

// applicableRegions returns the preferred endpoints whose region is not in
// excluded, in preference order (spec §6.2). When nothing is excluded it
// returns preferred itself without copying, so the common path does not
// allocate.
func applicableRegions(preferred []Endpoint, excluded []Region) []Endpoint {
	if len(excluded) == 0 {
		return preferred
	}
	out := make([]Endpoint, 0, len(preferred))
	for _, e := range preferred {
		if !slices.Contains(excluded, e.Region) {
			out = append(out, e)
		}
	}
	return out
}

// distinct reports whether the alternate differs from the primary in both
// region name and physical endpoint key, the region+endpoint distinctness
// contract of spec §6.4.1. When it does not (replica aliasing), no hedge is
// produced.
func distinct(primary, alternate Endpoint) bool {
	return primary.Region != alternate.Region && primary.Key != alternate.Key
}

// alternateExcludeRegions returns the alternate's ExcludeRegions set,
// user ∪ (all \ {target}), which pins the alternate to target (spec §6.3,
// §6.4.1 build_secondary_routing). all is the account's preferred-region
// list. The user's regions come first, in their order, then the others in
// preference order; no region appears twice.
func alternateExcludeRegions(user []Region, all []Endpoint, target Region) []Region {
	out := make([]Region, 0, len(user)+len(all))
	for _, r := range user {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, e := range all {
		if e.Region != target && !slices.Contains(out, e.Region) {
			out = append(out, e.Region)
		}
	}
	return out
}
