package scorecard

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/BurntSushi/toml"

	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// Recommended is the name of the policy the scorecard's last line counts
// the losses of: the roster's `type = "recommended"` (or a scenario's own
// policy of that name).
const Recommended = "recommended"

// RosterTOML is the roster every scenario is scored with, beside its own
// policies: one policy per type (and the presets notebook 01 studies), in
// the scenario file syntax (built by scenarios.BuildPolicies, the one
// definition of the policy types).
const RosterTOML = `[[policies]]
name = "disabled"
type = "disabled"

[[policies]]
name = "driver-default"
type = "driver_default"

[[policies]]
name = "static-50ms"
type = "static"
threshold_ms = 50

[[policies]]
name = "p99-tps"
type = "p99_dynamic"
preset = "tps_literal"

[[policies]]
name = "p99-dynamic"
type = "p99_dynamic"

[[policies]]
name = "p99-dynamic-min20"
type = "p99_dynamic"
min_ms = 20

[[policies]]
name = "p99-budget-20pct"
type = "p99_dynamic"
hedge_budget = 0.2

[[policies]]
name = "cassandra-100ms"
type = "capped_quantile"
cap_ms = 100

[[policies]]
name = "finagle-2pct"
type = "backup_requests"
max_extra_load = 0.02

[[policies]]
name = "grpc-throttle-50ms"
type = "retry_throttle"
threshold_ms = 50

[[policies]]
name = "` + Recommended + `"
type = "recommended"
`

// GridMs are the fixed thresholds (ms) of the hindsight frontier: a static
// threshold at each, with no hedging (disabled) as the threshold +Inf.
var GridMs = []float64{1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 500, 1000}

// rosterFile is RosterTOML decoded, for comparing its entries with a
// scenario's own.
var rosterFile = func() scenarios.File {
	var f scenarios.File
	if _, err := toml.Decode(RosterTOML, &f); err != nil {
		panic(err) // a constant: TestRoster builds it
	}
	return f
}()

// RosterNames returns the roster's policy names in order.
func RosterNames() []string {
	var out []string
	for _, p := range rosterFile.Policies {
		out = append(out, p.Name)
	}
	return out
}

// sameSettings reports whether two [[policies]] entries differ in nothing
// but their names.
func sameSettings(a, b scenarios.Policy) bool {
	a.Name, b.Name = "", ""
	return reflect.DeepEqual(a, b)
}

// staticMs returns the threshold of an entry that is a static threshold
// and nothing else (no budget), and whether it is one.
func staticMs(p scenarios.Policy) (float64, bool) {
	if p.Type != "static" || p.ThresholdMs == nil {
		return 0, false
	}
	ms := *p.ThresholdMs
	p.Name, p.Type, p.ThresholdMs = "", "", nil
	return ms, reflect.DeepEqual(p, scenarios.Policy{})
}

// entry is one policy a scenario is scored with: its scenario-file entry,
// the roster name it stands for ("" = the scenario's own) and the built
// policy.
type entry struct {
	file   scenarios.Policy
	roster string
	pol    simnet.Policy
}

// lineup returns the policies a scenario is scored with — its own, in
// file order (none with rosterOnly), then every roster entry it does not already have (its entry
// of a roster entry's name, or else of its settings, stands for it) — and the fixed thresholds of the hindsight frontier that no
// scored policy already is (index into GridMs → the scored policy that is
// that threshold, or -1).
func lineup(s *scenarios.Scenario, cfg *simnet.Config, own []simnet.Policy, ownOnly, rosterOnly bool) ([]entry, []int, error) {
	var out []entry
	for i, p := range s.File.Policies {
		if rosterOnly {
			break
		}
		out = append(out, entry{file: p, pol: own[i]})
	}
	built, err := scenarios.BuildPolicies("scorecard roster", []byte(RosterTOML), cfg.Client.RequestTimeout)
	if err != nil {
		return nil, nil, err
	}
	for i, r := range rosterFile.Policies {
		if ownOnly {
			break
		}
		j := slices.IndexFunc(out, func(e entry) bool { return e.file.Name == r.Name })
		if j < 0 {
			j = slices.IndexFunc(out, func(e entry) bool { return e.roster == "" && sameSettings(e.file, r) })
		}
		if j >= 0 {
			out[j].roster = r.Name // the scenario's own entry stands for the roster's
			continue
		}
		out = append(out, entry{file: r, roster: r.Name, pol: built[i]})
	}
	grid := make([]int, len(GridMs))
	for g, ms := range GridMs {
		grid[g] = -1
		for j := range out {
			if t, ok := staticMs(out[j].file); ok && t == ms {
				grid[g] = j
				break
			}
		}
	}
	return out, grid, nil
}

// gridPolicies builds the fixed thresholds of GridMs that need a run of
// their own (grid[g] < 0), named "fixed-<ms>ms".
func gridPolicies(grid []int) ([]simnet.Policy, []int, error) {
	var text []byte
	var idx []int
	for g, j := range grid {
		if j >= 0 {
			continue
		}
		idx = append(idx, g)
		text = fmt.Appendf(text, "[[policies]]\nname = %q\ntype = \"static\"\nthreshold_ms = %s\n\n", gridName(GridMs[g]), strconv.FormatFloat(GridMs[g], 'g', -1, 64))
	}
	if len(idx) == 0 {
		return nil, nil, nil
	}
	pols, err := scenarios.BuildPolicies("scorecard frontier", text, 0)
	return pols, idx, err
}

// gridName names the fixed threshold ms on the frontier.
func gridName(ms float64) string { return "fixed-" + strconv.FormatFloat(ms, 'g', -1, 64) + "ms" }
