package scenarios

import (
	"os"
	"strings"
	"testing"
)

// bgFull is the error for background load that alone needs busy servers
// of a replica with one server and no queue_limit.
func bgFull(busy, replica string) string {
	return "background load alone needs " + busy + " servers at replica " + replica + " (rate_per_s × mean service time, summed over the sources running together), which has 1 server; background requests have no deadline, so with no queue_limit its queue and the run's memory grow without limit: set replicas." + replica + ".queue_limit, raise its servers or lower rate_per_s"
}

// Issue 12: valid but suspicious scenarios get warnings naming file, line
// and field (or, for the overloads that cannot end well, errors); the
// shipped scenarios get none.
func TestWarnings(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	const (
		eastus      = `service = { family = "lognormal", median_ms = 4.0, p99_ms = 8.0 }`
		eastusSlow  = "servers = 1\nservice = { family = \"constant\", value_ms = 20.0 }"
		westus      = "servers = 4\nservice = { family = \"constant\", value_ms = 2.0 }"
		westusSlow  = "servers = 1\nservice = { family = \"constant\", value_ms = 20.0 }"
		rate        = `rate_per_s = 100`
		excludeEast = "rate_per_s = 100\nexclude_regions = [\"East US\"]\nexclude_fraction = "
	)
	for _, c := range []struct {
		name  string
		edits []string // pairs: text in valid.toml, its replacement
		want  string
	}{
		{"none", nil, ""},
		{"asymmetric rtt", []string{`"East US" = { "West US" = 60.0 }`, "\"East US\" = { \"West US\" = 60.0 }\n\"West US\" = { \"East US\" = 600.0 }"},
			`x.toml:30: network.rtt_ms.West US.East US: warning: RTT "East US" -> "West US" is 60 ms but "West US" -> "East US" is 600 ms, more than twice as much (a typo?); the simulator uses each direction as written`},
		{"slightly asymmetric rtt (measured)", []string{`"East US" = { "West US" = 60.0 }`, "\"East US\" = { \"West US\" = 60.0 }\n\"West US\" = { \"East US\" = 62.0 }"}, ``},
		{"symmetric rtt written twice", []string{`"East US" = { "West US" = 60.0 }`, "\"East US\" = { \"West US\" = 60.0 }\n\"West US\" = { \"East US\" = 60.0 }"}, ``},
		{"episode after the end", []string{rate, "rate_per_s = 100\n[[episodes]]\ntarget = \"East US\"\nstart_s = 10\nend_s = 20"},
			`x.toml:35: episodes.0.start_s: warning: starts at 10 s, at or after the run ends (duration_s = 10): it never applies`},
		{"overloaded primary", []string{eastus, eastusSlow},
			`x.toml:20: replicas.eastus.servers: warning: replica eastus is offered 100 primary operations/s but its 1 server serves at most 50/s (mean service time 20 ms); with no operation_timeout_ms and no queue_limit its queue grows without limit`},
		{"overloaded primary with a deadline", []string{eastus, eastusSlow, "[client]\n", "[client]\noperation_timeout_ms = 500\n"}, ``},
		// Issue 10: background load counts, a queue limit bounds the queue,
		// and a deadline helps only when its cancellations reach the queue
		// and the background alone fits.
		// Issue 19: background load that alone fills the servers of a
		// replica without a queue_limit is an error (the queue grew to
		// 7.6 GB in 40 s), also at exactly its capacity and when two
		// sources overlap; back-to-back windows do not add up.
		{"background overloads", []string{westus, westusSlow, rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 60"},
			`x.toml:35: background.0.rate_per_s: ` + bgFull("1.2", "westus")},
		{"background at capacity", []string{westus, westusSlow, rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 50"},
			`x.toml:35: background.0.rate_per_s: ` + bgFull("1", "westus")},
		{"overlapping background sources", []string{westus, westusSlow, rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 30\nend_s = 6\n[[background]]\ntarget = \"West US\"\nrate_per_s = 30\nstart_s = 5"},
			`x.toml:39: background.1.rate_per_s: ` + bgFull("1.2", "westus")},
		{"back-to-back background sources", []string{westus, westusSlow, rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 30\nend_s = 5\n[[background]]\ntarget = \"West US\"\nrate_per_s = 30\nstart_s = 5"},
			`x.toml:25: replicas.westus.servers: warning: replica westus is offered 60 background requests/s but its 1 server serves at most 50/s (mean service time 20 ms); with no operation_timeout_ms and no queue_limit its queue grows without limit`},
		// Issue 19 item 4: background traffic scheduled after a run that
		// max_ops ends at ~2 s (start_s = 50 in a 9.96 s run wrote a
		// replicas.csv row for 50-51 s), or ending after it (silently cut).
		{"background after a max_ops run", []string{"duration_s = 10", "duration_s = 60\nmax_ops = 200", rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 5\nstart_s = 50"},
			`x.toml:37: background.0.start_s: warning: starts at 50 s, but the run is expected to end at ~2 s (max_ops = 200 at rate_per_s = 100): it meets no client operation`},
		{"background cut by a max_ops run", []string{"duration_s = 10", "duration_s = 60\nmax_ops = 200", rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 5\nstart_s = 1\nend_s = 30"},
			`x.toml:38: background.0.end_s: warning: ends at 30 s, but the run is expected to end at ~2 s (max_ops = 200 at rate_per_s = 100): the source stops with the run`},
		{"background within a max_ops run", []string{"duration_s = 10", "duration_s = 60\nmax_ops = 200", rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 5\nstart_s = 1\nend_s = 2"}, ``},
		{"background overload bounded by a queue limit", []string{westus, westusSlow + "\nqueue_limit = 100", rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 60"}, ``},
		{"background adds to the primaries", []string{eastus, "servers = 3\nservice = { family = \"constant\", value_ms = 20.0 }", rate, "rate_per_s = 100\n[[background]]\ntarget = \"East US\"\nrate_per_s = 100\nservice = { family = \"constant\", value_ms = 15.0 }"},
			`x.toml:20: replicas.eastus.servers: warning: replica eastus is offered 100 primary operations/s and 100 background requests/s but its 3 servers serve at most 171.4/s (mean service time 17.5 ms); with no operation_timeout_ms and no queue_limit its queue grows without limit`},
		{"queue limit bounds it", []string{eastus, eastusSlow + "\nqueue_limit = 100"}, ``},
		{"deadline with cancel none", []string{eastus, eastusSlow + "\ncancel = \"none\"", "[client]\n", "[client]\noperation_timeout_ms = 500\n"},
			`x.toml:21: replicas.eastus.servers: warning: replica eastus is offered 100 primary operations/s but its 1 server serves at most 50/s (mean service time 20 ms); cancel = "none" keeps timed-out requests queued, and with no queue_limit its queue grows without limit`},
		{"deadline and background that fits", []string{eastus, eastusSlow, rate, "rate_per_s = 100\n[[background]]\ntarget = \"eastus\"\nrate_per_s = 40", "[client]\n", "[client]\noperation_timeout_ms = 500\n"}, ``},
		{"deadline and background that does not fit", []string{eastus, eastusSlow, rate, "rate_per_s = 100\n[[background]]\ntarget = \"eastus\"\nrate_per_s = 60", "[client]\n", "[client]\noperation_timeout_ms = 500\n"},
			`x.toml:37: background.0.rate_per_s: ` + bgFull("1.2", "eastus")},
		{"retries without a queue limit", []string{rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 5\nretries = 2"},
			`x.toml:36: background.0.retries: warning: no replica targeted by "westus" has a queue_limit, so no request is ever refused and retried`},
		{"retries with a queue limit", []string{westus, westus + "\nqueue_limit = 10", rate, "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\nrate_per_s = 5\nretries = 2"}, ``},
		{"primary within capacity", []string{eastus, "servers = 3\nservice = { family = \"constant\", value_ms = 20.0 }"}, ``},
		// The saturation report: ExcludeRegions moves 60% of the reads off
		// the primary, which then runs at rho 0.8.
		{"exclusions move load off the primary", []string{eastus, eastusSlow, rate, excludeEast + "0.6"}, ``},
		{"overloaded primary despite exclusions", []string{eastus, eastusSlow, rate, excludeEast + "0.2"},
			`x.toml:20: replicas.eastus.servers: warning: replica eastus is offered 80 primary operations/s (of rate_per_s = 100, after ExcludeRegions and write routing) but its 1 server serves at most 50/s (mean service time 20 ms); with no operation_timeout_ms and no queue_limit its queue grows without limit`},
		{"exclusions overload the second region", []string{westus, westusSlow, rate, excludeEast + "0.6"},
			`x.toml:25: replicas.westus.servers: warning: replica westus is offered 60 primary operations/s (of rate_per_s = 100, after ExcludeRegions and write routing) but its 1 server serves at most 50/s (mean service time 20 ms); with no operation_timeout_ms and no queue_limit its queue grows without limit`},
		{"single-master writes overload the write region", []string{westus, westusSlow, rate, "rate_per_s = 100\nmix = { read = 0.4, create = 0.6 }", "[[endpoints]]\nregion = \"East US\"", "[account]\nwrite_region = \"West US\"\n\n[[endpoints]]\nregion = \"East US\""},
			`x.toml:28: replicas.westus.servers: warning: replica westus is offered 60 primary operations/s (of rate_per_s = 100, after ExcludeRegions and write routing) but its 1 server serves at most 50/s (mean service time 20 ms); with no operation_timeout_ms and no queue_limit its queue grows without limit`},
		{"multi-master writes stay on the first region", []string{westus, westusSlow, rate, "rate_per_s = 100\nmix = { read = 0.4, create = 0.6 }", "[[endpoints]]\nregion = \"East US\"", "[account]\nmulti_master = true\n\n[[endpoints]]\nregion = \"East US\""}, ``},
		{"per-kind service times", []string{eastus, "servers = 1\nservice = { family = \"constant\", value_ms = 5.0 }\nservice_by_op = { create = { family = \"constant\", value_ms = 20.0 } }", rate, "rate_per_s = 100\nmix = { read = 0.5, create = 0.5 }", "[[endpoints]]\nregion = \"East US\"", "[account]\nmulti_master = true\n\n[[endpoints]]\nregion = \"East US\""},
			`x.toml:23: replicas.eastus.servers: warning: replica eastus is offered 100 primary operations/s but its 1 server serves at most 80/s (mean service time 12.5 ms); with no operation_timeout_ms and no queue_limit its queue grows without limit`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := applyEdits(t, string(base), c.edits)
			var got []string
			if sc, err := Parse("x.toml", []byte(s)); err != nil {
				got = append(got, err.Error())
			} else {
				for _, w := range sc.Warnings() {
					got = append(got, w.Error())
				}
			}
			if g := strings.Join(got, "\n"); g != c.want {
				t.Errorf("warnings\n got: %s\nwant: %s", g, c.want)
			}
		})
	}
}

// The shipped scenarios are warning-free. saturation runs North Europe at
// rho ~0.90 because exclude_fraction = 0.5 pins half the reads to West
// Europe; it used to get a false "queue grows without limit" warning that
// counted all 1208 reads/s against North Europe.
func TestEmbeddedWarnings(t *testing.T) {
	list, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		for _, w := range s.Warnings() {
			t.Errorf("%v", w)
		}
	}
}

// Without its exclusions saturation would overload North Europe (1208
// reads/s against ~671/s); the warning fires then.
func TestSaturationWithoutExclusionsWarns(t *testing.T) {
	s, err := Get("saturation")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(s.data), "exclude_fraction = 0.5", "exclude_fraction = 0.0", 1)
	sc, err := Parse("saturation.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	w := sc.Warnings()
	if len(w) != 1 || w[0].Field != "replicas.northeurope.servers" || !strings.Contains(w[0].Msg, "offered 1208 primary operations/s") {
		t.Errorf("warnings %v, want North Europe's overload at 1208/s", w)
	}
}
