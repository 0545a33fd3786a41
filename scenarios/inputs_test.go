package scenarios

import (
	"os"
	"strings"
	"testing"
)

// TestRefusedBeforeRunning: issue 19's inputs that `hedgesim run` refused
// only after simulating (or after writing an earlier scenario's results)
// are refused by Parse, so by `hedgesim validate`, with the exact message.
func TestRefusedBeforeRunning(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("p", 300)
	for _, c := range []struct {
		name  string
		edits []string // pairs: text in valid.toml, its replacement
		want  string
	}{
		{"policy name too long for a file name", []string{`name = "disabled"`, `name = "` + long + `"`},
			"x.toml:35: policies." + long + ".name: must be at most 64 characters (it names files), got 300"},
		{"replica name too long", []string{`name = "westus"`, `name = "` + long + `"`, `replica = "westus"`, `replica = "` + long + `"`},
			"x.toml:23: replicas." + long + ".name: must be at most 64 characters (it names files), got 300"},
		{"scenario name too long", []string{`name = "base"`, `name = "` + strings.Repeat("s", 65) + `"`},
			"x.toml:2: name: must be at most 64 characters (it names the output directory), got 65"},
		{"names at the limit", []string{`name = "disabled"`, `name = "` + long[:64] + `"`, `name = "base"`, `name = "` + strings.Repeat("s", 64) + `"`}, ""},
		// duration_s = 0.001 at 200 ops/s: 0.2 operations expected, and
		// with seed 1 the first arrives at 1.565 ms.
		{"no operation arrives", []string{"duration_s = 10", "duration_s = 0.001", "rate_per_s = 100", "rate_per_s = 200"},
			"x.toml:4: duration_s: no operation arrives in the run: the first would arrive at 1.565ms, at or after duration_s = 0.001 s (0.2 expected per replication); raise duration_s or the rate"},
		// One empty replication among others is a warning (the report
		// leaves it out of the means; TestEmptyReplicationWarning); none
		// with an operation is an error.
		{"no operation arrives in one replication", []string{"duration_s = 10", "duration_s = 0.01\nreplications = 50", "rate_per_s = 100", "rate_per_s = 200"}, ""},
		{"no operation arrives in any replication", []string{"duration_s = 10", "duration_s = 0.0001\nreplications = 3", "rate_per_s = 100", "rate_per_s = 200"},
			"x.toml:4: duration_s: no operation arrives in any of the 3 replications: the first would arrive at 1.565ms, at or after duration_s = 0.0001 s (0.02 expected per replication); raise duration_s or the rate"},
		// 1e-300 s is 0 ns: it failed simnet's backstop, on line 1 with no field.
		{"duration_s below 1 ns", []string{"duration_s = 10", "duration_s = 1e-300"},
			"x.toml:4: duration_s: must be at least 1 ns, got 1e-300"},
		// A positive time below 1 ns was truncated to 0, which means
		// "unset" (no deadline, the driver default's 1 s) for these keys:
		// the opposite of what was written (hostile pass).
		{"request_timeout_ms below 1 ns", []string{`region = "East US"` + "\n\n[[endpoints]]", `region = "East US"` + "\nrequest_timeout_ms = 1e-300\n\n[[endpoints]]"},
			"x.toml:8: client.request_timeout_ms: must be 0 or at least 1 ns, got 1e-300"},
		{"operation_timeout_ms below 1 ns", []string{`region = "East US"` + "\n\n[[endpoints]]", `region = "East US"` + "\noperation_timeout_ms = 4.9e-324\n\n[[endpoints]]"},
			"x.toml:8: client.operation_timeout_ms: must be 0 or at least 1 ns, got 5e-324"},
		// backup_requests' quantile is 1 - max_extra_load: a load that
		// leaves it 1 was refused as "policies.x: quantile must be in
		// (0,1), got 1", a key the entry does not have, on its first line;
		// a load out of range was reported twice (hostile pass).
		{"max_extra_load below the quantile's resolution", []string{"type = \"static\"\nthreshold_ms = 50", "type = \"backup_requests\"\nmax_extra_load = 1e-300"},
			"x.toml:41: policies.static-50ms.max_extra_load: must be at least 1.11e-16 (1 - max_extra_load is the quantile, and rounds to 1 below that), got 1e-300"},
		{"max_extra_load out of range, once", []string{"type = \"static\"\nthreshold_ms = 50", "type = \"backup_requests\"\nmax_extra_load = 0"},
			"x.toml:41: policies.static-50ms.max_extra_load: must be between 0 and 1 (exclusive), got 0"},
		{"max_extra_load at the quantile's resolution", []string{"type = \"static\"\nthreshold_ms = 50", "type = \"backup_requests\"\nmax_extra_load = 1.2e-16"}, ""},
		// Every timeline window keeps a latency histogram (~36 KB): 1e5
		// windows ran out of memory at 4 GB with --parallel 2 (hostile pass).
		{"timeline windows beyond memory", []string{"duration_s = 10", "duration_s = 10\ntimeline_window_s = 0.0001"},
			"x.toml:5: timeline_window_s: 0.0001 s windows over duration_s = 10 would make 100000 timeline windows; the limit is 10000: raise timeline_window_s"},
		{"timeline windows at the limit", []string{"duration_s = 10", "duration_s = 10\ntimeline_window_s = 0.001"}, ""},
		{"request_timeout_ms of 1 ns", []string{`region = "East US"` + "\n\n[[endpoints]]", `region = "East US"` + "\nrequest_timeout_ms = 1e-6\n\n[[endpoints]]"}, ""},
		{"an operation arrives in every replication", []string{"duration_s = 10", "duration_s = 0.01\nreplications = 12", "rate_per_s = 100", "rate_per_s = 200"}, ""},
		{"closed loop: no client's first think time ends in time", []string{"duration_s = 10", "duration_s = 1", "rate_per_s = 100", "clients = 3\nthink = { family = \"constant\", value_ms = 1000.0 }"},
			"x.toml:4: duration_s: no operation arrives in the run: the first would arrive at 1s, at or after duration_s = 1 s (3 expected per replication); raise duration_s or the rate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := applyEdits(t, string(base), c.edits)
			got := ""
			if _, err := Parse("x.toml", []byte(s)); err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("\n got: %s\nwant: %s", got, c.want)
			}
		})
	}
}

// TestErrorLinesOnce: two elements of one name on one line with the same
// defect gave the same error line twice (issue 19).
func TestErrorLinesOnce(t *testing.T) {
	_, err := Parse("e.toml", []byte("name = \"x\"\nreplicas = [{name=\"a\", servers=\"x\"}, {name=\"a\", servers=\"x\"}]\n"))
	if want := "e.toml:2: replicas.a.servers: must be an integer, got a string"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// Replications in which no operation arrives, among others in which one
// does, are named by a warning: the report leaves them out of the means.
// duration_s = 0.01 at 200 ops/s over 50 replications: with seed 1,
// replication 13 is the first empty one (its first arrival 16.038 ms).
func TestEmptyReplicationWarning(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("x.toml", []byte(applyEdits(t, string(base), []string{"duration_s = 10", "duration_s = 0.01\nreplications = 50", "rate_per_s = 100", "rate_per_s = 200"})))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range s.Warnings() {
		if w.Field == "duration_s" {
			got = append(got, w.Error())
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "x.toml:4: duration_s: warning: no operation arrives in ") || !strings.Contains(got[0], "of 50 replications (the first: replication 13)") {
		t.Errorf("warnings on duration_s: %q, want one naming replication 13 of 50", got)
	}
}
