package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrors loads every testdata/errors/*.toml file (the valid
// testdata/valid.toml with one defect each) and checks the exact message.
func TestErrors(t *testing.T) {
	kinds := strings.Join(strings.Split(kindNames, ", "), ", ")
	cases := map[string]string{
		"bad-name":                 `2: name: must match [a-z0-9-]+ and not start with a dash, got "Base"`,
		"closed-loop-no-think":     `31: workload.think: required with clients (closed loop): the think time in ms`,
		"closed-loop-zero-think":   `33: workload.think: a closed loop without max_ops needs a think time with a mean > 0 ms, got 0`,
		"dist-family":              `26: replicas.westus.service: unknown family "konstant" (want one of constant, uniform, exponential, normal, lognormal, gamma, weibull, pareto, empirical, mixture)`,
		"dist-inline":              `20: replicas.eastus.service: lognormal: p99_ms (3) must be greater than median_ms (4)`,
		"dist-mixture":             `36: replicas.westus.service: mixture: components[1]: pareto: alpha must be > 0, got -1.5`,
		"duplicate-endpoint":       `14: endpoints.East US.region: duplicate endpoint region "East US" (already used on line 10)`,
		"duplicate-policy":         `39: policies.disabled.name: duplicate policy name "disabled" (already used on line 35)`,
		"duplicate-replica":        `23: replicas.eastus.name: duplicate replica name "eastus" (already used on line 18)`,
		"endpoint-unknown-replica": `15: endpoints.West US.replica: unknown replica "westus3" (replicas: eastus, westus)`,
		"episode-target":           `45: episodes.0.target: unknown target "centralus" (want a replica name or region: East US, West US, eastus, westus)`,
		"episode-window":           `47: episodes.0.end_s: must be > start_s (5), got 2`,
		"exclude-regions":          `34: workload.exclude_regions.1: "Central US" is not an endpoint region (endpoints: East US, West US)`,
		"fault-status":             `44: faults.0.status: must be between 400 and 599, got 200`,
		"fraction":                 `33: workload.disabled_fraction: must be between 0 and 1, got -0.1`,
		"rate-changes-overlap":     `40: workload.rate_changes.1.at_s: must be >= 15 s, where the previous rate change ends (at_s + ramp_s)`,
		"inapplicable-field":       `37: policies.disabled.threshold_ms: applies only to types "static", "retry_throttle", not "disabled"`,
		"inf-in-inline-table":      `29: network.rtt_ms.East US.West US: must be a finite number, got +Inf`,
		"lag-region":               `44: network.replication_lag_ms.North Europe: unknown region "North Europe" (replica regions: East US, West US)`,
		"missing-hub-rtt":          `28: network.rtt_ms: missing the RTT between "West US" (region of replica westus) and the write region's replica region "East US" (hub forwarding)`,
		"missing-name":             `1: name: required`,
		"missing-rtt": `28: network.rtt_ms: missing the RTT between the client region "East US" and "West US" (region of replica westus)
28: network.rtt_ms: missing the RTT between "West US" (region of replica westus) and the write region's replica region "East US" (hub forwarding)`,
		"nan":               `4: duration_s: must be a finite number, got NaN`,
		"negative-add-ms":   `47: episodes.0.add_ms: must be >= 0, got -5`,
		"negative-duration": `4: duration_s: must be >= 0, got -10`,
		"negative-latency":  `29: network.rtt_ms.East US.West US: must be >= 0, got -60`,
		"negative-seed":     `3: seed: must be >= 0, got -1`,
		"no-duration":       `1: duration_s: need duration_s > 0 or max_ops > 0`,
		"no-policies":       `1: policies: at least one [[policies]] entry is required`,
		"open-and-closed": `33: workload.clients: set rate_per_s (open loop) or clients (closed loop), not both
31: workload.think: required with clients (closed loop): the think time in ms`,
		"p99-min-max":              `47: policies.p99.max_ms: must be >= min_ms (100), got 10`,
		"p99-quantile":             `46: policies.p99.quantile: must be between 0 and 1 (exclusive), got 1`,
		"phase":                    `8: client.phase: must be 1, 2 or 3 (future), got 4`,
		"probability":              `45: faults.0.probability: must be between 0 and 1, got 1.5`,
		"replications":             `4: replications: must be >= 1, got 0`,
		"region-offset":            `51: feed.change_feed.region_offset: must be between 0 and 1099511627776 (simnet.MaxRegionOffset: any offset beyond the commit log acts alike), got 9223372036854775807`,
		"ru-too-large":             `44: ru.read: must be between 0 and 1e6 RU (simnet.MaxRequestCharge), got 1e+308`,
		"feed-page-charge":         `46: feed.ru_per_item: a page may cost 1e+07 RU (ru_cover + ru_per_item × 100 items); the limit is 1e+06 RU (simnet.MaxRequestCharge): lower ru_cover or ru_per_item`,
		"syntax":                   `3: TOML syntax error: expected value but found '=' instead`,
		"threshold-zero":           `41: policies.static-50ms.threshold_ms: must be > 0, got 0`,
		"too-many-ops-max-ops":     `4: max_ops: would simulate 4e+09 operations (max_ops × 1 replications × 2 policies); the limit is 2e+09: lower max_ops or replications`,
		"too-many-ops":             `4: duration_s: would simulate 1.2e+12 operations (rate_per_s × duration_s × 10 replications × 2 policies); the limit is 2e+09: lower duration_s, rate_per_s or replications`,
		"too-many-pages-per-query": `37: feed.pages: a query may race 2e+06 pages (fan_out 1000 × the largest pages per leaf); the limit is 1000000 pages per operation: lower pages or fan_out`,
		"too-much-work-polls":      `41: feed.change_feed.poll_interval_ms: would send 6e+09 requests (per run: 6e+04 operations, 0 pages, 0 setup reads, 6e+09 change-feed pages, 0 background requests; × 1 replications × 1 policies); the limit is 2e+09: raise poll_interval_ms, or lower the partitions, duration_s or replications`,
		"too-many-windows":         `5: timeline_window_s: 1e-05 s windows over duration_s = 10 would make 1000000 timeline windows; the limit is 10000: raise timeline_window_s`,
		"undeclared-rtt-region":    `29: network.rtt_ms.East US.Mars: undeclared region "Mars" (not a replica region or the client region)`,
		"unknown-client-region":    `7: client.region: unknown region "Mars": not the region of any replica and not in network.rtt_ms`,
		"unknown-key-in-array":     `25: replicas.westus.servrs: unknown field`,
		"unknown-key-in-dist":      `26: replicas.westus.service.valu: unknown field`,
		"unknown-key":              `3: sead: unknown field`,
		"unknown-kind-fault":       `45: faults.0.operations.1: unknown operation kind "wrte" (want one of ` + kinds + `)`,
		"unknown-kind-mix":         `33: workload.mix.reed: unknown operation kind "reed" (want one of ` + kinds + `)`,
		"unknown-kind-ru":          `45: ru.query_page: unknown operation kind "query_page" (want one of ` + kinds + `)`,
		"unknown-kind-service":     `26: replicas.westus.service_by_op.crate: unknown operation kind "crate" (want one of ` + kinds + `)`,
		"unknown-policy-type":      `40: policies.static-50ms.type: unknown policy type "statik" (want disabled, static, driver_default, p99_dynamic, capped_quantile, backup_requests, retry_throttle or recommended)`,
		"unknown-table":            `43: workloads: unknown field`,
		"write-region":             `44: account.write_region: "North Europe" is not an endpoint region (endpoints: East US, West US)`,
		"wrong-type-in-array":      `25: replicas.westus.servers: must be an integer, got a string`,
		"wrong-type-in-map":        `29: network.rtt_ms.East US.West US: must be a number, got a string`,
		"wrong-type":               `3: seed: must be an integer, got a string`,
		"zipf":                     `33: workload.zipf_s: must be 0 (uniform) or > 1, got 0.5`,
	}
	if kinds != "read, query, read_many, change_feed, metadata_read, create, replace, upsert, delete, patch, stored_procedure, query_plan" {
		t.Errorf("kindNames = %q", kindNames)
	}
	files, err := filepath.Glob("testdata/errors/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".toml")
		seen[name] = true
		want, ok := cases[name]
		if !ok {
			t.Errorf("%s: no expected message in the table", f)
			continue
		}
		t.Run(name, func(t *testing.T) {
			s, err := Load(f)
			if err == nil {
				t.Fatalf("Load(%s) = %q, want an error", f, s.Name)
			}
			// One line per error, each naming the file.
			if got, want := err.Error(), f+":"+strings.ReplaceAll(want, "\n", "\n"+f+":"); got != want {
				t.Errorf("error\n got: %s\nwant: %s", got, want)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != f || e.Line < 1 {
				t.Errorf("error %#v is not an *Error with file %s and a line", err, f)
			}
		})
	}
	for name := range cases {
		if !seen[name] {
			t.Errorf("testdata/errors/%s.toml is missing", name)
		}
	}
}

// TestValidBase checks that the base of the error files is valid, so each
// error file fails for its one defect only.
func TestValidBase(t *testing.T) {
	s, err := Load("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "base" || s.Source != "testdata/valid.toml" || s.Replications != 1 {
		t.Errorf("got %q %q %d", s.Name, s.Source, s.Replications)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load("testdata/no-such-file.toml"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrNotExist", err)
	}
}

func TestErrorFormat(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{File: "a.toml", Line: 3, Field: "x.y", Msg: "bad"}, "a.toml:3: x.y: bad"},
		{Error{File: "a.toml", Line: 3, Msg: "bad"}, "a.toml:3: bad"},
		{Error{File: "a.toml", Msg: "bad"}, "a.toml: bad"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%#v.Error() = %q, want %q", c.e, got, c.want)
		}
	}
}

// TestParseErrors covers errors written inline: messages of rules that
// need more context than one edit of the base file.
func TestParseErrors(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, edit, with, want string }{
		{"empty file", "", "", "x.toml:1: name: required\nx.toml:1: duration_s: need duration_s > 0 or max_ops > 0\nx.toml:1: client.region: required (the physical region of the client)\nx.toml:1: replicas: at least one [[replicas]] entry is required\nx.toml:1: endpoints: at least one [[endpoints]] entry is required\nx.toml:1: workload.rate_per_s: required: rate_per_s > 0 (open loop) or clients > 0 (closed loop)\nx.toml:1: policies: at least one [[policies]] entry is required"},
		{"missing type", `type = "disabled"`, ``, `x.toml:34: policies.disabled.type: required (disabled, static, driver_default, p99_dynamic, capped_quantile, backup_requests, retry_throttle or recommended)`},
		{"static without threshold", `threshold_ms = 50`, ``, `x.toml:38: policies.static-50ms.threshold_ms: required for type "static" (ms, > 0)`},
		{"p99 field on static", `threshold_ms = 50`, "threshold_ms = 50\nwindow_s = 5", `x.toml:42: policies.static-50ms.window_s: applies only to types "p99_dynamic", "capped_quantile", "backup_requests", not "static"`},
		{"tiny threshold", `threshold_ms = 50`, `threshold_ms = 1e-9`, `x.toml:41: policies.static-50ms.threshold_ms: must be at least 1 ns, got 1e-09`},
		{"huge duration", `duration_s = 10`, `duration_s = 1e12`, `x.toml:4: duration_s: must be at most 1e+09 s, got 1e+12`},
		// Issue 12: values the simulator would silently cap at 1000 h are refused.
		{"delay past the cap", `rate_per_s = 100`, "rate_per_s = 100\n[[episodes]]\ntarget = \"East US\"\nstart_s = 1\nend_s = 3\nadd_ms = 1e12", `x.toml:37: episodes.0.add_ms: must be at most 3.6e+09 ms (1000 h, the longest delay the simulator represents), got 1e+12`},
		{"rtt past the cap", `"West US" = 60.0`, `"West US" = 4e9`, `x.toml:29: network.rtt_ms.East US.West US: must be at most 3.6e+09 ms (1000 h, the longest delay the simulator represents), got 4e+09`},
		// Issue 12: plain wording for a float in an integer field.
		{"float replications", `seed = 1`, "seed = 1\nreplications = 2.0", `x.toml:4: replications: must be an integer, written without a decimal point or exponent (2, not 2.0)`},
		// Issue 12: every error of a section is reported, not just the first.
		{"several errors", `seed = 1`, "seed = -1\nmax_ops = -5\ntimeline_window_s = -1", "x.toml:3: seed: must be >= 0, got -1\nx.toml:4: max_ops: must be >= 0, got -5\nx.toml:5: timeline_window_s: must be > 0, got -1"},
		{"errors in several sections", `rate_per_s = 100`, "rate_per_s = -100\n[[policies]]\nname = \"x\"\ntype = \"statik\"", "x.toml:32: workload.rate_per_s: must be >= 0, got -100\nx.toml:35: policies.x.type: unknown policy type \"statik\" (want disabled, static, driver_default, p99_dynamic, capped_quantile, backup_requests, retry_throttle or recommended)"},
		{"several unknown fields", `seed = 1`, "sead = 1\n[workloads]\nrate = 1\n[client2]\nx = 1", "x.toml:3: sead: unknown field\nx.toml:4: workloads: unknown field\nx.toml:6: client2: unknown field"},
		{"bad policy name", `name = "static-50ms"`, `name = "static 50ms"`, `x.toml:39: policies.static 50ms.name: must match [A-Za-z0-9_-]+, got "static 50ms"`},
		{"missing service", "service = { family = \"constant\", value_ms = 2.0 }\n", "", `x.toml:22: replicas.westus.service: required: the service time in ms, e.g. { family = "lognormal", median_ms = 1.0, p99_ms = 3.0 }`},
		{"think on open loop", `rate_per_s = 100`, "rate_per_s = 100\nthink = { family = \"constant\", value_ms = 1.0 }", `x.toml:33: workload.think: applies only to a closed loop (clients > 0)`},
		{"zero mix weight", `rate_per_s = 100`, "rate_per_s = 100\n[workload.mix]\nread = 1\ncreate = 0", `x.toml:35: workload.mix.create: weight must be > 0, got 0`},
		{"exclude fraction alone", `rate_per_s = 100`, "rate_per_s = 100\nexclude_fraction = 0.5", `x.toml:33: workload.exclude_fraction: needs exclude_regions`},
		{"fault partition out of range", `[workload]`, "[[faults]]\nprobability = 1\npartitions = [0, 4]\n\n[workload]\npartitions = 4", `x.toml:33: faults.0.partitions: must be between 0 and 3, got 4`},
		{"ru budget rate", `rate_per_s = 100`, "rate_per_s = 100\n[ru_budget]\nburst = 10", `x.toml:33: ru_budget.ru_per_s: must be > 0, got 0`},
		{"servers", `servers = 4`, `servers = -4`, `x.toml:25: replicas.westus.servers: must be between 0 and 1000000, got -4`},
		{"ramps", `rate_per_s = 100`, "rate_per_s = 100\n[[episodes]]\ntarget = \"East US\"\nstart_s = 1\nend_s = 3\nramp_up_s = 1.5\nramp_down_s = 1", `x.toml:37: episodes.0.ramp_up_s: ramp_up_s + ramp_down_s (2.5) must be <= end_s - start_s (2)`},
		{"fault window", `rate_per_s = 100`, "rate_per_s = 100\n[[faults]]\nprobability = 1\nstart_s = 5\nend_s = 1", `x.toml:36: faults.0.end_s: must be 0 (forever) or > start_s (5), got 1`},
		{"fault target", `rate_per_s = 100`, "rate_per_s = 100\n[[faults]]\nprobability = 1\ntargets = [\"westus\", \"Mars\"]", `x.toml:35: faults.0.targets.1: unknown target "Mars" (want a replica name or region: East US, West US, eastus, westus)`},
		{"integer overflow", `seed = 1`, `seed = 99999999999999999999`, `x.toml:3: seed: 99999999999999999999 is too large: an integer must be at most 9223372036854775807`},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := ""
			if c.name != "empty file" {
				s := string(base)
				if strings.Count(s, c.edit) != 1 {
					t.Fatalf("edit %q matches %d times", c.edit, strings.Count(s, c.edit))
				}
				data = strings.Replace(s, c.edit, c.with, 1)
			}
			_, err := Parse("x.toml", []byte(data))
			if err == nil || err.Error() != c.want {
				t.Errorf("error\n got: %v\nwant: %s", err, c.want)
			}
		})
	}
}

// Issue 12: errors in [client], [workload] and [[policies]] are all
// reported, not only the first section's.
func TestErrorsAcrossSections(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(base), "[client]\nregion = \"East US\"\n", "[client]\nregion = \"East US\"\nphase = 7\n", 1)
	src = strings.Replace(src, "rate_per_s = 100", "rate_per_s = -100", 1)
	src = strings.Replace(src, `type = "static"`, `type = "statik"`, 1)
	_, err = Parse("x.toml", []byte(src))
	want := `x.toml:8: client.phase: must be 1, 2 or 3 (future), got 7
x.toml:33: workload.rate_per_s: must be >= 0, got -100
x.toml:41: policies.static-50ms.type: unknown policy type "statik" (want disabled, static, driver_default, p99_dynamic, capped_quantile, backup_requests, retry_throttle or recommended)`
	if err == nil || err.Error() != want {
		t.Errorf("error\n got: %v\nwant: %s", err, want)
	}
	var es Errors
	if !errors.As(err, &es) || len(es) != 3 {
		t.Errorf("want a scenarios.Errors of 3, got %T", err)
	}
}

// A newcomer's file with five errors in four sections (a replica's service
// time, an endpoint, the workload, two policies) got only the first; each
// fix revealed the next. All five are independent, so all are reported.
func TestErrorsAllSections(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	src := string(base)
	for _, e := range [][2]string{
		{`median_ms = 4.0, p99_ms = 8.0`, `median_ms = 4.0, p99_ms = 3.0`},
		{`replica = "westus"`, `replica = "westus3"`},
		{`rate_per_s = 100`, `rate_per_s = -5`},
		{"threshold_ms = 50\n", ""},
		{`name = "static-50ms"`, `name = "disabled"`},
	} {
		if strings.Count(src, e[0]) != 1 {
			t.Fatalf("edit %q matches %d times", e[0], strings.Count(src, e[0]))
		}
		src = strings.Replace(src, e[0], e[1], 1)
	}
	_, err = Parse("x.toml", []byte(src))
	want := `x.toml:20: replicas.eastus.service: lognormal: p99_ms (3) must be greater than median_ms (4)
x.toml:15: endpoints.West US.replica: unknown replica "westus3" (replicas: eastus, westus)
x.toml:32: workload.rate_per_s: must be >= 0, got -5
x.toml:39: policies.disabled.name: duplicate policy name "disabled" (already used on line 35)
x.toml:38: policies.disabled.threshold_ms: required for type "static" (ms, > 0)`
	if err == nil || err.Error() != want {
		t.Errorf("error\n got: %v\nwant: %s", err, want)
	}
}

// Checks that look a name up in an incomplete list are skipped (they could
// only report a false "unknown"); checks inside a section run whatever
// errors other sections have.
func TestErrorsDependentChecks(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		edits []string
		want  string
	}{
		{"replica without a region: its RTTs are not undeclared", []string{"region = \"West US\"\nservers = 4", "servers = 4"},
			`x.toml:22: replicas.westus.region: required (the physical region of the replica)`},
		{"replica without a name: endpoints naming it are not unknown", []string{`name = "westus"`, ``},
			`x.toml:22: replicas.1.name: required`},
		{"duplicate replica: the renamed copy is not unknown", []string{`name = "westus"`, `name = "eastus"`},
			`x.toml:23: replicas.eastus.name: duplicate replica name "eastus" (already used on line 18)`},
		{"endpoint without a region: exclude_regions not checked", []string{"region = \"West US\"\nreplica", "replica", "rate_per_s = 100", "rate_per_s = 100\nexclude_regions = [\"West US\"]\nexclude_fraction = 0.5"},
			`x.toml:13: endpoints.1.region: required`},
		{"replica error, then cross-field policy checks", []string{`median_ms = 4.0, p99_ms = 8.0`, `median_ms = 4.0, p99_ms = 3.0`,
			"[[policies]]\nname = \"disabled\"", "[[policies]]\nname = \"p99\"\ntype = \"p99_dynamic\"\nmin_ms = 100\nmax_ms = 10\n\n[[policies]]\nname = \"disabled\""},
			"x.toml:20: replicas.eastus.service: lognormal: p99_ms (3) must be greater than median_ms (4)\nx.toml:38: policies.p99.max_ms: must be >= min_ms (100), got 10"},
		{"replica error, then an episode window", []string{`median_ms = 4.0, p99_ms = 8.0`, `median_ms = 4.0, p99_ms = 3.0`,
			"rate_per_s = 100", "rate_per_s = 100\n[[episodes]]\ntarget = \"Mars\"\nstart_s = 5\nend_s = 2"},
			"x.toml:20: replicas.eastus.service: lognormal: p99_ms (3) must be greater than median_ms (4)\nx.toml:34: episodes.0.target: unknown target \"Mars\" (want a replica name or region: East US, West US, eastus, westus)\nx.toml:36: episodes.0.end_s: must be > start_s (5), got 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := applyEdits(t, string(base), c.edits)
			_, err := Parse("x.toml", []byte(s))
			if err == nil || err.Error() != c.want {
				t.Errorf("error\n got: %v\nwant: %s", err, c.want)
			}
		})
	}
}

// applyEdits returns base with each pair of edits (text that must occur
// exactly once, its replacement) applied in order.
func applyEdits(t *testing.T, base string, edits []string) string {
	t.Helper()
	for i := 0; i+1 < len(edits); i += 2 {
		if n := strings.Count(base, edits[i]); n != 1 {
			t.Fatalf("edit %q matches %d times", edits[i], n)
		}
		base = strings.Replace(base, edits[i], edits[i+1], 1)
	}
	return base
}
