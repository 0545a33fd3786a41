package scenarios

import (
	"os"
	"strings"
	"testing"
)

// Issue 12: valid but suspicious scenarios get warnings naming file, line
// and field; the shipped scenarios get none.
func TestWarnings(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, edit, with, want string }{
		{"none", "", "", ""},
		{"asymmetric rtt", `"East US" = { "West US" = 60.0 }`, "\"East US\" = { \"West US\" = 60.0 }\n\"West US\" = { \"East US\" = 600.0 }",
			`x.toml:30: network.rtt_ms.West US.East US: warning: RTT "East US" -> "West US" is 60 ms but "West US" -> "East US" is 600 ms, more than twice as much (a typo?); the simulator uses each direction as written`},
		{"slightly asymmetric rtt (measured)", `"East US" = { "West US" = 60.0 }`, "\"East US\" = { \"West US\" = 60.0 }\n\"West US\" = { \"East US\" = 62.0 }", ``},
		{"symmetric rtt written twice", `"East US" = { "West US" = 60.0 }`, "\"East US\" = { \"West US\" = 60.0 }\n\"West US\" = { \"East US\" = 60.0 }", ``},
		{"episode after the end", `rate_per_s = 100`, "rate_per_s = 100\n[[episodes]]\ntarget = \"East US\"\nstart_s = 10\nend_s = 20",
			`x.toml:35: episodes.0.start_s: warning: starts at 10 s, at or after the run ends (duration_s = 10): it never applies`},
		{"overloaded primary", `service = { family = "lognormal", median_ms = 4.0, p99_ms = 8.0 }`, "servers = 1\nservice = { family = \"constant\", value_ms = 20.0 }",
			`x.toml:20: replicas.eastus.servers: warning: the primary replica eastus is offered 100 operations/s but its 1 servers serve at most 50/s (mean service time 20 ms); with no operation_timeout_ms its queue grows without limit`},
		{"overloaded primary with a deadline", `service = { family = "lognormal", median_ms = 4.0, p99_ms = 8.0 }`, "servers = 1\nservice = { family = \"constant\", value_ms = 20.0 }", ``},
		{"primary within capacity", `service = { family = "lognormal", median_ms = 4.0, p99_ms = 8.0 }`, "servers = 3\nservice = { family = \"constant\", value_ms = 20.0 }", ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := string(base)
			if c.name == "overloaded primary with a deadline" {
				s = strings.Replace(s, "[client]\n", "[client]\noperation_timeout_ms = 500\n", 1)
			}
			if c.edit != "" {
				if strings.Count(s, c.edit) != 1 {
					t.Fatalf("edit %q matches %d times", c.edit, strings.Count(s, c.edit))
				}
				s = strings.Replace(s, c.edit, c.with, 1)
			}
			sc, err := Parse("x.toml", []byte(s))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range sc.Warnings() {
				got = append(got, w.Error())
			}
			if g := strings.Join(got, "\n"); g != c.want {
				t.Errorf("warnings\n got: %s\nwant: %s", g, c.want)
			}
		})
	}
}

// The shipped scenarios are warning-free, except saturation, which
// overloads its primary on purpose.
func TestEmbeddedWarnings(t *testing.T) {
	list, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		for _, w := range s.Warnings() {
			if s.Name == "saturation" && strings.Contains(w.Msg, "queue grows without limit") {
				continue
			}
			t.Errorf("%v", w)
		}
	}
	s, err := Get("saturation")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings()) != 1 {
		t.Errorf("saturation: warnings %v, want the overload warning", s.Warnings())
	}
}
