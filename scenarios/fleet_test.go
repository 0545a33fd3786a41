package scenarios

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"hedgelab/simnet"
)

// [fleet] errors name file, line and field; unknown keys are rejected.
func TestFleetErrors(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, fleet, want string }{
		{"zero instances", "instances = 0", `x.toml:44: fleet.instances: must be between 1 and 100000, got 0`},
		{"negative instances", "instances = -3", `x.toml:44: fleet.instances: must be between 1 and 100000, got -3`},
		{"too many instances", "instances = 100001", `x.toml:44: fleet.instances: must be between 1 and 100000, got 100001`},
		{"fractional instances", "instances = 2.5", `x.toml:44: fleet.instances: must be an integer, written without a decimal point or exponent (2, not 2.0)`},
		{"string instances", `instances = "10"`, `x.toml:44: fleet.instances: must be an integer, got a string`},
		{"unknown assignment", "instances = 10\nassignment = \"random\"", `x.toml:45: fleet.assignment: must be "uniform" or "partition", got "random"`},
		{"empty assignment", "instances = 10\nassignment = \"\"", `x.toml:45: fleet.assignment: must be "uniform" or "partition", got ""`},
		{"unknown key", "instances = 10\nsize = 3", `x.toml:45: fleet.size: unknown field`},
		{"instances × buckets", "instances = 100000\n[[policies]]\nname = \"p99\"\ntype = \"p99_dynamic\"\nbuckets = 1000",
			`x.toml:48: policies.p99.buckets: fleet.instances (100000) × buckets (1000) = 100000000 per-instance window sketches; the limit is 1000000 (each instance keeps its own window): lower buckets or fleet.instances`},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := string(base) + "\n[fleet]\n" + c.fleet + "\n"
			_, err := Parse("x.toml", []byte(data))
			if err == nil || err.Error() != c.want {
				t.Errorf("error\n got: %v\nwant: %s", err, c.want)
			}
		})
	}
}

// Valid [fleet] tables build into simnet.Fleet, and WithParam reaches
// fleet.instances.
func TestFleetConfig(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fleet string
		want  simnet.Fleet
	}{
		{"", simnet.Fleet{}},
		{"[fleet]\n", simnet.Fleet{}},
		{"[fleet]\ninstances = 1", simnet.Fleet{Instances: 1}},
		{"[fleet]\ninstances = 100\nassignment = \"uniform\"", simnet.Fleet{Instances: 100}},
		{"[fleet]\ninstances = 7\nassignment = \"partition\"", simnet.Fleet{Instances: 7, Assignment: simnet.AssignPartition}},
	} {
		s, err := Parse("x.toml", []byte(string(base)+"\n"+c.fleet+"\n"))
		if err != nil {
			t.Fatalf("%q: %v", c.fleet, err)
		}
		cfg, _, err := s.Config()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Fleet != c.want {
			t.Errorf("%q: Fleet = %+v, want %+v", c.fleet, cfg.Fleet, c.want)
		}
	}
	s, err := Parse("x.toml", base)
	if err != nil {
		t.Fatal(err)
	}
	s, err = s.WithParam("fleet.instances", 40)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, _, _ := s.Config(); cfg.Fleet.Instances != 40 {
		t.Errorf("WithParam(fleet.instances, 40): Fleet = %+v", cfg.Fleet)
	}
	if _, err := s.WithParam("fleet.instances", 0); err == nil || !strings.Contains(err.Error(), "fleet.instances: must be between 1 and 100000, got 0") {
		t.Errorf("WithParam(fleet.instances, 0) = %v", err)
	}
}

// A fleet with instances that can get no operation is warned about.
func TestFleetWarnings(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, edit, with, fleet, want string }{
		{"partition, more instances than partitions", "", "", "instances = 10\nassignment = \"partition\"",
			`x.toml:44: fleet.instances: warning: 10 instances but workload.partitions = 1: instances 1..9 receive no operations (see [fleet] assignment)`},
		{"partition, enough partitions", "rate_per_s = 100", "rate_per_s = 100\npartitions = 10", "instances = 10\nassignment = \"partition\"", ``},
		{"uniform open loop", "", "", "instances = 10", ``},
		{"uniform closed loop, fewer clients", "rate_per_s = 100", "clients = 4\nthink = { family = \"constant\", value_ms = 10.0 }", "instances = 10",
			`x.toml:45: fleet.instances: warning: 10 instances but workload.clients = 4: instances 4..9 receive no operations (see [fleet] assignment)`},
		{"one instance", "", "", "instances = 1\nassignment = \"partition\"", ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := strings.Replace(string(base), c.edit, c.with, 1) + "\n[fleet]\n" + c.fleet + "\n"
			s, err := Parse("x.toml", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range s.Warnings() {
				got = append(got, w.Error())
			}
			if g := strings.Join(got, "\n"); g != c.want {
				t.Errorf("warnings\n got: %s\nwant: %s", g, c.want)
			}
		})
	}
}

// An explicit [fleet] instances = 1 is today's single client: the same
// Stats, byte for byte, as the scenario without [fleet] (cold-start, with
// the breaker, location marks and p99-dynamic state all in play).
func TestFleetOfOneIsIdentical(t *testing.T) {
	data, err := embeddedFS.ReadFile("cold-start.toml")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Parse("a.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	one, err := Parse("b.toml", []byte(string(data)+"\n[fleet]\ninstances = 1\nassignment = \"uniform\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	partition, err := Parse("c.toml", []byte(string(data)+"\n[fleet]\ninstances = 1\nassignment = \"partition\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(s *Scenario) []*simnet.Stats {
		s, err := s.WithParam("duration_s", 60)
		if err != nil {
			t.Fatal(err)
		}
		cfg, pols, err := s.Config()
		if err != nil {
			t.Fatal(err)
		}
		var out []*simnet.Stats
		for _, p := range pols {
			st, err := simnet.Run(cfg, p, 1, simnet.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, st)
		}
		return out
	}
	want := run(plain)
	for i, s := range []*Scenario{one, partition} {
		got := run(s)
		for j := range want {
			if want[j].Ops == 0 || !reflect.DeepEqual(got[j], want[j]) {
				t.Errorf("fleet %d, policy %s: stats differ from the scenario without [fleet] (ops %d vs %d, hedged %d vs %d)",
					i, want[j].Policy, got[j].Ops, want[j].Ops, got[j].Hedged, want[j].Hedged)
			}
		}
	}
}
