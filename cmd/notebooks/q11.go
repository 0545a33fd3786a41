package main

import "strings"

// Notebook 01's policies, shared by its editions: the third edition
// (q11third.go) adds the recommended policy to these.

// q11PolicyTOML is every policy of the study, in the scenario file syntax
// (built by scenarios.BuildPolicies, the one definition of the policy
// types).
const q11PolicyTOML = `[[policies]]
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
`

// q11PolicySettings are the settings of q11PolicyTOML the "q11/policies"
// paragraph names: the claim "q11 policy text matches q11PolicyTOML"
// checks that each is there.
var q11PolicySettings = []string{
	`name = "p99-tps"` + "\ntype = \"p99_dynamic\"\npreset = \"tps_literal\"",
	`name = "p99-dynamic-min20"` + "\ntype = \"p99_dynamic\"\nmin_ms = 20\n",
	`name = "p99-budget-20pct"` + "\ntype = \"p99_dynamic\"\nhedge_budget = 0.2\n",
	`name = "cassandra-100ms"` + "\ntype = \"capped_quantile\"\ncap_ms = 100\n",
	`name = "finagle-2pct"` + "\ntype = \"backup_requests\"\nmax_extra_load = 0.02\n",
	`name = "grpc-throttle-50ms"` + "\ntype = \"retry_throttle\"\nthreshold_ms = 50\n",
	`name = "static-50ms"` + "\ntype = \"static\"\nthreshold_ms = 50\n",
}

func joinOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, ", ")
}

func firstSentence(s string) string {
	for i, c := range s {
		if c == '.' && (i+1 == len(s) || s[i+1] == ' ') {
			return s[:i+1]
		}
	}
	return s
}
