package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// tinyScenario returns the path of the embedded tiny scenario's source.
func tinyScenario(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "scenarios", "tiny.toml")
}

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestGoldenSummary compares summary.json of the tiny scenario with the
// checked-in golden file; go test ./cmd/hedgesim -update rewrites it.
func TestGoldenSummary(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runCLI(t, "run", tinyScenario(t), "--out", dir, "-q"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tiny.summary.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/hedgesim -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("summary.json differs from %s (run with -update if the change is intended):\n%s", golden, got)
	}
}

// TestOutputIndependentOfParallelism: --parallel 1 and 4 write identical
// files, byte for byte.
func TestOutputIndependentOfParallelism(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		dir, par string
	}{{a, "1"}, {b, "4"}} {
		if _, stderr, code := runCLI(t, "run", tinyScenario(t), "--out", c.dir, "-q", "--parallel", c.par, "--replications", "3"); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	files, _ := filepath.Glob(filepath.Join(a, "*"))
	if len(files) < 10 {
		t.Fatalf("only %d files written", len(files))
	}
	for _, fa := range files {
		x, _ := os.ReadFile(fa)
		y, err := os.ReadFile(filepath.Join(b, filepath.Base(fa)))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between --parallel 1 and 4", filepath.Base(fa))
		}
	}
}

// A sweep runs its points in parallel and still writes the same files,
// byte for byte, with --parallel 1 and 4.
func TestSweepIndependentOfParallelism(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		dir, par string
	}{{a, "1"}, {b, "4"}} {
		if _, stderr, code := runCLI(t, "sweep", tinyScenario(t), "--param", "policies.static-20ms.threshold_ms=10:40:10", "--out", c.dir, "-q", "--parallel", c.par, "--replications", "2"); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	files, _ := filepath.Glob(filepath.Join(a, "*"))
	if len(files) < 4 {
		t.Fatalf("only %d files written", len(files))
	}
	for _, fa := range files {
		x, _ := os.ReadFile(fa)
		y, err := os.ReadFile(filepath.Join(b, filepath.Base(fa)))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between --parallel 1 and 4", filepath.Base(fa))
		}
	}
}

// TestBinaryEndToEnd builds the real binary, runs it on the tiny scenario
// with --png and checks that every output file exists and parses.
func TestBinaryEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "hedgesim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := t.TempDir()
	cmd := exec.Command(bin, "run", "--png", tinyScenario(t))
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hedgesim run: %v\n%s", err, out)
	}
	for _, want := range []string{"disabled", "static-20ms", "p99 ms", "wrote"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	dir := filepath.Join(work, "results", "tiny")
	var summary struct {
		Scenario string           `json:"scenario"`
		Policies []map[string]any `json:"policies"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &summary); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if summary.Scenario != "tiny" || len(summary.Policies) != 2 {
		t.Fatalf("summary.json: scenario %q with %d policies", summary.Scenario, len(summary.Policies))
	}
	for _, p := range summary.Policies {
		for _, k := range []string{"policy", "ops", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "p9999_ms", "max_ms", "mean_ms",
			"hedge_rate", "hedge_rate_latency", "hedge_rate_failover", "alternate_win_rate", "ru_multiplier", "error_rate", "terminal_states"} {
			if _, ok := p[k]; !ok {
				t.Errorf("summary.json policy lacks %q", k)
			}
		}
	}
	for _, name := range []string{"summary.csv", "timeline.csv", "quantiles_disabled.csv", "quantiles_static-20ms.csv"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(rows) < 2 {
			t.Errorf("%s: %d rows, %v", name, len(rows), err)
		}
	}
	for _, chart := range []string{"ccdf", "percentiles", "cost", "timeline"} {
		f, err := os.Open(filepath.Join(dir, chart+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s.png: %v", chart, err)
		}
		f.Close()
		svg, err := os.ReadFile(filepath.Join(dir, chart+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s.svg: %v", chart, err)
		}
	}
}

func TestCommandErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("name = \"x\"\nseed = -1\nbogus = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"run"}, exitUsage, "Usage: hedgesim run"},
		{[]string{"run", "no-such-scenario"}, exitError, "no-such-scenario"},
		{[]string{"validate", bad}, exitError, bad + ":"},
		{[]string{"sweep", "tiny"}, exitUsage, "Usage: hedgesim sweep"},
		{[]string{"sweep", "tiny", "--param", "policies.static-20ms.threshold_ms=10:5:1"}, exitUsage, "TO (5) must be >= FROM (10)"},
		{[]string{"sweep", "tiny", "--param", "x=1:2:0"}, exitUsage, "STEP must be > 0"},
		{[]string{"sweep", "tiny", "--param", "x=1:1e9:1"}, exitUsage, "the limit is 1000"},
		{[]string{"run", "tiny", "tiny", "--out", "x"}, exitUsage, "--out needs exactly one scenario"},
		{[]string{"run", "tiny", "--replications", "10000000"}, exitError, "the limit is 2e+09"},
		{[]string{"run", "tiny", "--parallel", "0"}, exitUsage, "--parallel must be >= 1, got 0"},
		{[]string{"run", "tiny", "--replications", "-1"}, exitUsage, `for flag -replications: must be an integer >= 1, got "-1"`},
		{[]string{"run", "tiny", "no-such-scenario"}, exitError, "no-such-scenario"},
		{[]string{"sweep", "tiny", "--param", "workload.rate_per_s=1e7:1e8:1e7"}, exitError, "number of sweep points"},
		{[]string{"sweep", "tiny", "--param", "replications=1:2:0.5"}, exitError, "replications"},
	}
	for _, c := range cases {
		_, stderr, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("hedgesim %v: exit %d, stderr %q; want exit %d containing %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

func TestListAndValidate(t *testing.T) {
	out, stderr, code := runCLI(t, "list")
	if code != 0 || !strings.Contains(out, "default") || !strings.Contains(out, "tiny") {
		t.Fatalf("list: exit %d, %q %q", code, out, stderr)
	}
	out, stderr, code = runCLI(t, "validate", tinyScenario(t))
	if code != 0 || !strings.Contains(out, "ok (tiny)") {
		t.Fatalf("validate: exit %d, %q %q", code, out, stderr)
	}
	out, _, code = runCLI(t, "-h")
	if code != 0 || !strings.Contains(out, "Examples:") {
		t.Fatalf("-h: exit %d, %q", code, out)
	}
}

func TestSweepWritesCurves(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := runCLI(t, "sweep", tinyScenario(t), "--param", "policies.static-20ms.threshold_ms=10:30:10", "--out", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"sweep.csv", "sweep.json", "sweep_p99.svg", "sweep_cost.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s missing (%v); stdout:\n%s", f, err, out)
		}
	}
	// PNG only with --png.
	if _, err := os.Stat(filepath.Join(dir, "sweep_p99.png")); err == nil {
		t.Error("sweep_p99.png written without --png")
	}
	// A policy parameter sweeps that policy only.
	data, err := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "disabled") || !strings.Contains(string(data), "static-20ms") {
		t.Errorf("sweep.csv should hold only the swept policy:\n%s", data)
	}
}

func TestParseSweep(t *testing.T) {
	path, vals, err := parseSweep("policies.a.threshold_ms=50:200:50")
	if err != nil || path != "policies.a.threshold_ms" || len(vals) != 4 || vals[0] != 50 || vals[3] != 200 {
		t.Fatalf("got %q %v %v", path, vals, err)
	}
	_, vals, _ = parseSweep("x=0.1:0.3:0.1")
	if len(vals) != 3 || vals[2] != 0.3 {
		t.Fatalf("float steps: %v", vals)
	}
	// Issue 19: values are not rounded to 1e-9 (1e-300 became 0).
	_, vals, _ = parseSweep("x=1e-300:1:0.5")
	if len(vals) != 3 || vals[0] != 1e-300 || vals[1] != 0.5 || vals[2] != 1 {
		t.Fatalf("tiny from: %v", vals)
	}
}

// The legend under a results table is wrapped at legendWidth columns at
// spaces, losing no word.
func TestWrapLegend(t *testing.T) {
	for _, c := range []struct {
		text  string
		width int
		want  string
	}{
		{"a bb ccc dddd", 6, "a bb\nccc\ndddd"},
		{"a bb ccc", 8, "a bb ccc"},
		{"toolongword x", 4, "toolongword\nx"},
		{"  spaced   out  ", 80, "spaced out"},
		{"", 10, ""},
	} {
		if got := wrap(c.text, c.width); got != c.want {
			t.Errorf("wrap(%q, %d) = %q, want %q", c.text, c.width, got, c.want)
		}
	}
	legend := "ops: operations that arrived (and finished), over all replications; p50, p99, p99.9, max ms: end-to-end latency of every operation"
	got := wrap(legend, legendWidth)
	for _, line := range strings.Split(got, "\n") {
		if len(line) > legendWidth {
			t.Errorf("line of %d columns: %q", len(line), line)
		}
	}
	if strings.Join(strings.Fields(got), " ") != legend {
		t.Errorf("wrapping changed the words: %q", got)
	}
}
