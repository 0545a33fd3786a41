package main

import (
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// Issue 19: what `run` and `sweep` refuse, they refuse before simulating
// or writing anything, with the exact message.
func TestRefusedBeforeRunning(t *testing.T) {
	tmp := t.TempDir()
	results := filepath.Join(tmp, "r")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(results, "summary.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tiny, err := os.ReadFile(tinyScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	long := strings.Repeat("p", 300)
	longName := write("long.toml", strings.Replace(strings.Replace(string(tiny), `name = "tiny"`, `name = "long"`, 1), `name = "static-20ms"`, `name = "`+long+`"`, 1))
	queued := write("queued.toml", strings.Replace(string(tiny), "name = \"eastus2\"\n", "name = \"eastus2\"\nservers = 4\n", 1))
	for _, c := range []struct {
		name    string
		args    []string
		code    int
		stderr  string // all of stderr
		notMade string // must not exist afterwards
	}{
		{"--out inside a results directory", []string{"run", "tiny", "-q", "--out", filepath.Join(results, "nested")}, exitError,
			"hedgesim: output directory " + filepath.Join(results, "nested") + " is inside " + results + ", a directory of hedgesim results that its next run replaces as a whole; choose a directory outside it\n",
			filepath.Join(results, "nested")},
		{"sweep --out inside a results directory", []string{"sweep", "tiny", "-q", "--param", "seed=1:2:1", "--out", filepath.Join(results, "a", "b")}, exitError,
			"hedgesim: output directory " + filepath.Join(results, "a", "b") + " is inside " + results + ", a directory of hedgesim results that its next run replaces as a whole; choose a directory outside it\n",
			filepath.Join(results, "a")},
		// The first scenario's results were written, then the second failed.
		{"a policy name too long for a file name", []string{"run", "-q", "tiny", longName}, exitError,
			"hedgesim: " + longName + ":62: policies." + long + ".name: must be at most 64 characters (it names files), got 300\n",
			filepath.Join("results", "tiny")},
		{"sweep: a fraction for an integer", []string{"sweep", queued, "-q", "--param", "replicas.eastus2.queue_limit=1:2:0.5", "--out", filepath.Join(tmp, "s1")}, exitError,
			"hedgesim: --param replicas.eastus2.queue_limit=1:2:0.5, value 2 of 3: " + queued + " (replicas.eastus2.queue_limit=1.5):41: replicas.eastus2.queue_limit: must be an integer, got 1.5\n",
			filepath.Join(tmp, "s1")},
		{"sweep: a tiny value is not rounded to 0", []string{"sweep", "tiny", "-q", "--param", "policies.static-20ms.threshold_ms=1e-300:1:0.5", "--out", filepath.Join(tmp, "s2")}, exitError,
			"hedgesim: --param policies.static-20ms.threshold_ms=1e-300:1:0.5, value 1 of 3: embedded:tiny.toml (policies.static-20ms.threshold_ms=1e-300):64: policies.static-20ms.threshold_ms: must be at least 1 ns, got 1e-300\n",
			filepath.Join(tmp, "s2")},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, c.args...)
			if code != c.code || errOut != c.stderr {
				t.Errorf("exit %d, stderr\n%q\nwant exit %d,\n%q", code, errOut, c.code, c.stderr)
			}
			if _, err := os.Stat(c.notMade); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was written", c.notMade)
			}
		})
	}
}

// TestNoArrivalWithFlags: --seed and --replications are checked like the
// file's own: at 200 operations/s over 10 ms a replication without an
// arrival is refused before anything runs.
func TestNoArrivalWithFlags(t *testing.T) {
	tmp := t.TempDir()
	tiny, err := os.ReadFile(tinyScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(tmp, "short.toml")
	if err := os.WriteFile(short, []byte(strings.Replace(string(tiny), "duration_s = 10", "duration_s = 0.01", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// --seed 4: the one replication's first arrival is at 16.509 ms.
	out := filepath.Join(tmp, "out")
	_, errOut, code := runCLI(t, "run", short, "-q", "--seed", "4", "--out", out)
	want := "hedgesim: " + short + ":6: duration_s: no operation arrives in the run: the first would arrive at 16.509ms, at or after duration_s = 0.01 s (2 expected per replication); raise duration_s or the rate\n"
	if code != exitError || errOut != want {
		t.Errorf("exit %d, stderr\n%q\nwant\n%q", code, errOut, want)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was written", out)
	}
	// Over 50 replications (seed 1) 6 are empty: the run goes ahead and
	// leaves them out of the means.
	_, errOut, code = runCLI(t, "run", short, "-q", "--replications", "50", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(sum), `"empty_replications": 6`); n == 0 {
		t.Errorf("summary.json does not say empty_replications 6:\n%.400s", sum)
	}
}

// TestFormatVersion: the module version, the revision (12 hex digits,
// +dirty when modified) and the Go version; without a revision, why.
func TestFormatVersion(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201135557-87a28f53daf2+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "87a28f53daf206ac99dee1445f916295c71e04a6"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := formatVersion(info), "v0.0.0-20261201135557-87a28f53daf2+dirty 87a28f53daf2+dirty go1.26.8"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	info = &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	if got, want := formatVersion(info), "(devel) go1.26.8 (no VCS revision recorded: built by go run, with -buildvcs=false, or outside a git clone; make build records it)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
