package scenarios

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
	"hedgelab/simnet"
)

func mustGet(t testing.TB, name string) *Scenario {
	t.Helper()
	s, err := Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEmbedded parses every embedded file again through Parse and builds
// it: a broken embedded file fails here.
func TestEmbedded(t *testing.T) {
	list, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := embeddedFS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(entries) || len(list) == 0 {
		t.Fatalf("Embedded() has %d scenarios, %d files", len(list), len(entries))
	}
	if !slices.IsSortedFunc(list, func(a, b *Scenario) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("Embedded() is not sorted by name")
	}
	for _, e := range entries {
		data, err := embeddedFS.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse("scenarios/"+e.Name(), data)
		if err != nil {
			t.Fatal(err)
		}
		cfg, pols, err := s.Config()
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
		for _, p := range pols {
			if _, err := p.New(); err != nil {
				t.Errorf("%s: policy %s: %v", e.Name(), p.Name, err)
			}
		}
		if s.Name+".toml" != e.Name() || s.Description == "" {
			t.Errorf("%s: name %q, description %q", e.Name(), s.Name, s.Description)
		}
		g := mustGet(t, s.Name)
		if g.Source != "embedded:"+e.Name() {
			t.Errorf("Get(%s).Source = %q", s.Name, g.Source)
		}
	}
}

func TestGetUnknown(t *testing.T) {
	_, err := Get("no-such-scenario")
	if err == nil || !strings.HasPrefix(err.Error(), `unknown scenario "no-such-scenario" (available: `) || !strings.Contains(err.Error(), "tiny") {
		t.Errorf("Get(unknown) = %v", err)
	}
}

// TestTiny checks what Config builds from tiny.toml and runs it.
func TestTiny(t *testing.T) {
	s := mustGet(t, "tiny")
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientRegion != "East US" || len(cfg.Endpoints) != 2 || len(cfg.Replicas) != 2 || cfg.Duration != 10*time.Second ||
		cfg.Client.RequestTimeout != 5*time.Second || cfg.SameRegionRTTMs != 1 || cfg.Jitter == nil || cfg.Client.Phase != hedging.Phase1 ||
		cfg.TimelineWindow != time.Second || cfg.Workload.Partitions != 16 {
		t.Errorf("unexpected config %+v", cfg)
	}
	if m := cfg.Workload.Mix; len(m) != 2 || m[0].Kind != hedging.PointRead || m[1].Kind != hedging.Create {
		t.Errorf("mix = %+v, want read then create", m)
	}
	if len(pols) != 2 || pols[0].Name != "disabled" || pols[1].Name != "static-20ms" {
		t.Fatalf("policies = %+v", pols)
	}
	for _, p := range pols {
		st, err := simnet.Run(cfg, p, 0, simnet.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Ops < 1500 || st.Ops > 2500 {
			t.Errorf("%s: %d operations, want about 2000", p.Name, st.Ops)
		}
	}
	// Config builds new values on every call.
	cfg2, _, err := s.Config()
	if err != nil || cfg2 == cfg {
		t.Errorf("second Config: %v", err)
	}
}

// TestPolicies checks the strategy each policy type builds and that p99
// policies get a fresh P99Dynamic per New.
func TestPolicies(t *testing.T) {
	src := strings.Replace(readFile(t, "testdata/valid.toml"), "[client]\n", "[client]\nrequest_timeout_ms = 600\n", 1) + `
[[policies]]
name = "driver-default"
type = "driver_default"

[[policies]]
name = "p99"
type = "p99_dynamic"
quantile = 0.95
window_s = 30
buckets = 3
min_ms = 10
max_ms = 2000
initial_ms = 300
min_samples = 50
refresh_s = 0.5
relative_accuracy = 0.02
`
	s, err := Parse("p.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	get := func(i int) hedging.AvailabilityStrategy {
		a, err := pols[i].New()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if get(0) != hedging.Disabled {
		t.Error("disabled policy is not Disabled")
	}
	if h, ok := get(1).HedgingStrategy(); !ok || h.Threshold().Get() != 50*time.Millisecond || h.Policy() != nil {
		t.Errorf("static: %v %v", h, ok)
	}
	if h, ok := get(2).HedgingStrategy(); !ok || h.Threshold().Get() != 300*time.Millisecond {
		t.Errorf("driver default: %v %v, want 300ms", h, ok)
	}
	h1, _ := get(3).HedgingStrategy()
	h2, _ := get(3).HedgingStrategy()
	p1, ok1 := h1.Policy().(*threshold.P99Dynamic)
	p2, ok2 := h2.Policy().(*threshold.P99Dynamic)
	if !ok1 || !ok2 || p1 == p2 {
		t.Fatalf("p99 policies: %T %T, same=%v", h1.Policy(), h2.Policy(), p1 == p2)
	}
	want := threshold.P99DynamicConfig{Quantile: 0.95, Window: 30 * time.Second, Buckets: 3, Min: 10 * time.Millisecond,
		Max: 2 * time.Second, Initial: 300 * time.Millisecond, MinSamples: 50, Refresh: 500 * time.Millisecond, RelativeAccuracy: 0.02,
		CeilingFactor: threshold.DefaultCeilingFactor}
	if got := p1.Config(); got != want {
		t.Errorf("p99 config = %+v, want %+v", got, want)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWithParam(t *testing.T) {
	tiny := mustGet(t, "tiny")
	s, err := tiny.WithParam("workload.rate_per_s", 50)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != "embedded:tiny.toml (workload.rate_per_s=50)" || s.Name != "tiny" {
		t.Errorf("Source = %q", s.Source)
	}
	s, err = s.WithParam("policies.static-20ms.threshold_ms", 35.5)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != "embedded:tiny.toml (workload.rate_per_s=50) (policies.static-20ms.threshold_ms=35.5)" {
		t.Errorf("Source = %q", s.Source)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := pols[1].New()
	if h, _ := a.HedgingStrategy(); cfg.Workload.RatePerSec != 50 || h.Threshold().Get() != 35500*time.Microsecond {
		t.Errorf("rate %v, threshold %v", cfg.Workload.RatePerSec, h.Threshold())
	}
	if c, _, _ := tiny.Config(); c.Workload.RatePerSec != 200 {
		t.Error("WithParam changed the original")
	}

	for _, c := range []struct {
		path  string
		value float64
		check func(*simnet.Config) bool
	}{
		{"replicas.eastus.servers", 4, func(c *simnet.Config) bool { return c.Replicas[0].Servers == 4 }},
		{"replicas.1.servers", 2, func(c *simnet.Config) bool { return c.Replicas[1].Servers == 2 }},
		{"replicas.eastus.service.components.1.weight", 0.5, func(c *simnet.Config) bool { return c.Replicas[0].Default != nil }},
		{"network.rtt_ms.East US.East US 2", 12, func(c *simnet.Config) bool { return c.RTTMs["East US"]["East US 2"] == 12 }},
		{"ru_budget.ru_per_s", 100, func(c *simnet.Config) bool { return c.RUBudget != nil && c.RUBudget.Burst == 100 }},
		{"client.consecutive_hedge_win_threshold", 3, func(c *simnet.Config) bool { return c.Client.ConsecutiveHedgeWinThreshold == 3 }},
		{"endpoints.East US 2.replica", 0, nil}, // a string: error below instead
		{"seed", 7, func(c *simnet.Config) bool { return c.Seed == 7 }},
		{"duration_s", 2.5, func(c *simnet.Config) bool { return c.Duration == 2500*time.Millisecond }},
	} {
		if c.check == nil {
			continue
		}
		s, err := tiny.WithParam(c.path, c.value)
		if err != nil {
			t.Errorf("WithParam(%s): %v", c.path, err)
			continue
		}
		cfg, _, err := s.Config()
		if err != nil || !c.check(cfg) {
			t.Errorf("WithParam(%s, %v): config %+v, %v", c.path, c.value, cfg, err)
		}
	}

	// Episodes by index, on the base of the error files.
	base, err := Parse("base.toml", []byte(readFile(t, "testdata/valid.toml")+"\n[[episodes]]\ntarget = \"westus\"\nstart_s = 1\nend_s = 5\nadd_ms = 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := base.WithParam("episodes.0.add_ms", 30); err != nil {
		t.Error(err)
	} else if cfg, _, _ := s.Config(); cfg.Episodes[0].AddMs != 30 {
		t.Errorf("add_ms = %v", cfg.Episodes[0].AddMs)
	}
}

func TestWithParamErrors(t *testing.T) {
	tiny := mustGet(t, "tiny")
	const src = "embedded:tiny.toml"
	for _, c := range []struct {
		path  string
		value float64
		want  string
	}{
		{"workload.rate_per_s", math.NaN(), src + ": parameter workload.rate_per_s: value must be a finite number, got NaN"},
		{"workload..rate_per_s", 1, src + ": parameter workload..rate_per_s: empty key in the path"},
		{"replicas.westus.servers", 1, src + `: parameter replicas.westus.servers: replicas: no element named "westus" (have eastus, eastus2, or an index 0..1)`},
		{"episodes.0.add_ms", 1, src + `: parameter episodes.0.add_ms: episodes: no element "0" (the array is empty)`},
		{"name", 1, src + ": parameter name: is a string, not a number"},
		{"replicas", 1, src + ": parameter replicas: is an array, not a number"},
		{"replicas.eastus", 1, src + ": parameter replicas.eastus: replicas.eastus is a table, not a number"},
		{"replicas.eastus.service", 1, src + ": parameter replicas.eastus.service: is a table, not a number"},
		{"description.x", 1, src + ": parameter description.x: description is not a table"},
		{"workload.rate_per_s", -1, src + " (workload.rate_per_s=-1):53: workload.rate_per_s: must be >= 0, got -1"},
		{"workload.rate_per_sec", 5, src + " (workload.rate_per_sec=5):52: workload.rate_per_sec: unknown field"},
		{"replicas.eastus.servers", 1.5, src + " (replicas.eastus.servers=1.5):24: replicas.eastus.servers: must be an integer, got 1.5"},
		{"policies.static-20ms.threshold_ms", 0, src + " (policies.static-20ms.threshold_ms=0):64: policies.static-20ms.threshold_ms: must be > 0, got 0"},
		{"workload.rate_per_s", 1e12, src + " (workload.rate_per_s=1e+12):6: duration_s: would simulate 2e+13 operations (rate_per_s × duration_s × 1 replications × 2 policies); the limit is 2e+09: lower duration_s, rate_per_s or replications"},
		// The product overflows: the message says so instead of "+Inf operations".
		{"workload.rate_per_s", 1e308, src + " (workload.rate_per_s=1e+308):6: duration_s: would simulate more than 1.8e+308 operations (rate_per_s × duration_s × 1 replications × 2 policies); the limit is 2e+09: lower duration_s, rate_per_s or replications"},
	} {
		_, err := tiny.WithParam(c.path, c.value)
		if err == nil || err.Error() != c.want {
			t.Errorf("WithParam(%s, %v)\n got: %v\nwant: %s", c.path, c.value, err, c.want)
		}
	}
}

// FuzzParse: no input makes Parse panic; what parses also builds, and its
// policies construct.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.toml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "fuzz.toml" {
				t.Fatalf("error %q is not an *Error of fuzz.toml", err)
			}
			return
		}
		cfg, pols, err := s.Config()
		if err != nil {
			t.Fatalf("Parse accepted, Config failed: %v", err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Config is invalid: %v", err)
		}
		for _, p := range pols {
			if _, err := p.New(); err != nil {
				t.Fatalf("policy %s: %v", p.Name, err)
			}
		}
		_, _ = s.WithParam("workload.rate_per_s", 1)
	})
}

// addSeeds adds the fuzz seeds of the package: every error file, the
// valid base, every embedded scenario, and a few hand-made inputs.
func addSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/errors/*.toml")
	embedded, _ := filepath.Glob("*.toml")
	files = append(append(files, "testdata/valid.toml"), embedded...)
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name = \"x\"\n[[policies]]\nname = 1\n"))
	// Wrongly typed values in map and struct tables, reported in file
	// order (hub-header-1002.toml without its [[faults]] header is the
	// case that found the bug; see TestTypeErrorsRepro).
	if b, err := os.ReadFile("hub-header-1002.toml"); err == nil {
		f.Add(bytes.Replace(b, []byte("\n[[faults]]\n"), []byte("\n"), 1))
	}
	f.Add([]byte("seed = \"1\"\nduration_s = \"x\"\n[ru]\nupsert = \"a\"\nread = true\n[network.rtt_ms]\na = { b = \"1\", a = [] }\nc = 5\n[[replicas]]\nservice_by_op = { read = 1, create = { family = 2 } }\n"))
}

// TestReadmeExample parses the annotated example of README.md.
func TestReadmeExample(t *testing.T) {
	readme := readFile(t, "README.md")
	_, rest, ok := strings.Cut(readme, "## Annotated example\n\n```toml\n")
	if !ok {
		t.Fatal("README.md has no annotated example")
	}
	example, _, _ := strings.Cut(rest, "```")
	s, err := Parse("README.md example", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	cfg, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	if len(pols) != 8 || len(cfg.Episodes) != 1 || len(cfg.Faults) != 1 || cfg.RUBudget == nil || cfg.ThroughputControl == nil || s.Replications != 5 {
		t.Errorf("example: %d policies, config %+v", len(pols), cfg)
	}
}
