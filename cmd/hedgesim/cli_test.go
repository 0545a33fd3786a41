package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 12, CLI: every reported input with its right answer.
func TestCLIIssue12(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tiny, err := os.ReadFile(tinyScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	twin := filepath.Join(tmp, "twin.toml") // another file named "tiny"
	if err := os.WriteFile(twin, tiny, 0o644); err != nil {
		t.Fatal(err)
	}
	userDir := filepath.Join(tmp, "user")
	if err := os.MkdirAll(userDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userDir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		args       []string
		code       int
		stdout     string // substring of stdout ("" = empty stdout)
		stderr     string // substring of stderr ("" = empty stderr)
		noOutFiles string // a directory that must not exist afterwards
	}{
		{"--version", []string{"--version"}, exitOK, "hedgesim ", "", ""},
		{"version", []string{"version"}, exitOK, "hedgesim ", "", ""},
		{"top-level bad flag gives top-level usage", []string{"-x"}, exitUsage, "", "hedgesim: flag provided but not defined: -x\nUsage: hedgesim [COMMAND] [flags] [FILE|NAME...]  (commands: run, sweep, merge, validate, scorecard, fuzz, calibrate, whatif, telemetry, list, version, help)\nRun \"hedgesim help\" for help.\n", ""},
		{"run -h to stdout", []string{"run", "-h"}, exitOK, "Usage: hedgesim run", "", ""},
		{"run -h lists every chart", []string{"run", "-h"}, exitOK, "ccdf, percentiles, cost, timeline,\nthreshold and hedge_rate", "", ""},
		{"sweep --help to stdout", []string{"sweep", "--help"}, exitOK, "Usage: hedgesim sweep", "", ""},
		{"validate -h to stdout", []string{"validate", "-h"}, exitOK, "Usage: hedgesim validate", "", ""},
		{"list -h to stdout", []string{"list", "-h"}, exitOK, "Usage: hedgesim list", "", ""},
		{"-param example names a real policy", []string{"sweep", "-h"}, exitOK, "e.g. policies.static-100ms.threshold_ms=", "", ""},
		{"validate an embedded name", []string{"validate", "default"}, exitOK, "default: ok (default)", "", ""},
		{"list extra", []string{"list", "extra"}, exitUsage, "", `list takes no arguments, got ["extra"]`, ""},
		{"--replications 0", []string{"run", "tiny", "--replications", "0"}, exitUsage, "", `invalid value "0" for flag -replications: must be an integer >= 1, got "0"`, ""},
		{"--seed -1", []string{"run", "tiny", "--seed", "-1"}, exitUsage, "", `invalid value "-1" for flag -seed: must be an integer from 0 to 9223372036854775807, got "-1"`, ""},
		{"--seed too large", []string{"run", "tiny", "--seed", "99999999999999999999"}, exitUsage, "", `for flag -seed: must be an integer from 0 to 9223372036854775807`, ""},
		{"--param twice", []string{"sweep", "tiny", "--param", "workload.rate_per_s=1:2:1", "--param", "seed=1:2:1"}, exitUsage, "", `given twice ("workload.rate_per_s=1:2:1" and "seed=1:2:1"): a sweep varies one parameter`, ""},
		{"--out is a file", []string{"run", "tiny", "--out", file, "-q"}, exitError, "", "hedgesim: output directory " + file + " is a file; choose a directory\n", ""},
		{"--out under a file", []string{"run", "tiny", "--out", filepath.Join(file, "sub"), "-q"}, exitError, "", "not a directory", ""},
		{"--out holds a user's files", []string{"run", "tiny", "--out", userDir, "-q"}, exitError, "", "which hedgesim did not write", ""},
		{"two scenarios with one name", []string{"run", tinyScenario(t), twin, "-q"}, exitError, "", `are both named "tiny"`, filepath.Join("results", "tiny")},
		{"sweep index out of range", []string{"sweep", "tiny", "--param", "policies.7.threshold_ms=10:20:10", "-q", "--out", filepath.Join(tmp, "sw")}, exitError, "", "policy index 7 out of range (the scenario has 2 policies, 0-based)", filepath.Join(tmp, "sw")},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			if c.stdout == "" && out != "" || !strings.Contains(out, c.stdout) {
				t.Errorf("stdout %q, want it to contain %q", out, c.stdout)
			}
			if c.stderr == "" && errOut != "" || !strings.Contains(errOut, c.stderr) {
				t.Errorf("stderr %q, want it to contain %q", errOut, c.stderr)
			}
			if strings.Count(errOut, file) > 1 {
				t.Errorf("stderr names %s more than once: %q", file, errOut)
			}
			if c.noOutFiles != "" {
				if _, err := os.Stat(c.noOutFiles); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was written", c.noOutFiles)
				}
			}
		})
	}
}

// Issue 12: sweep accepts index paths (policies.1 is tiny's static-20ms),
// and prints one table, the swept policy labelled by its swept value.
func TestSweepIndexPathAndOneTable(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := runCLI(t, "sweep", "tiny", "--param", "policies.1.threshold_ms=10:30:10", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, "p99 ms"); n != 1 {
		t.Errorf("%d table headers, want one table:\n%s", n, out)
	}
	for _, want := range []string{"threshold_ms  policy", "\n          10  threshold_ms=10 ", "\n          30  threshold_ms=30 "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "disabled") {
		t.Errorf("a policy parameter sweep simulates that policy only:\n%s", out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), "\n") != 4 || !strings.Contains(string(data), "static-20ms") {
		t.Errorf("sweep.csv: want a header and 3 rows of static-20ms:\n%s", data)
	}
}

// Issue 12: Ctrl-C (a cancelled context) stops the run, writes nothing and
// exits 130.
func TestInterruptWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	code := run(ctx, []string{"run", "default", "--out", dir}, &out, &errb)
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr %q", code, exitInterrupted, errb.String())
	}
	if !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("stderr %q, want it to say interrupted", errb.String())
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists after an interrupted run", dir)
	}
	code = run(ctx, []string{"sweep", "tiny", "--param", "workload.rate_per_s=100:200:100", "--out", dir}, &out, &errb)
	if code != exitInterrupted {
		t.Errorf("sweep: exit %d, want %d", code, exitInterrupted)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists after an interrupted sweep", dir)
	}
}

// Warnings go to stderr and do not fail validation.
func TestValidateWarns(t *testing.T) {
	tiny, err := os.ReadFile(tinyScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "late.toml")
	src := string(tiny) + "\n[[episodes]]\ntarget = \"" + firstReplica(t, string(tiny)) + "\"\nstart_s = 1e6\nend_s = 2e6\nadd_ms = 5\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "validate", f)
	if code != exitOK || !strings.Contains(out, "ok (tiny)") || !strings.Contains(errOut, "start_s: warning: starts at 1e+06 s, at or after the run ends") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func firstReplica(t *testing.T, src string) string {
	t.Helper()
	_, rest, ok := strings.Cut(src, "[[replicas]]")
	if !ok {
		t.Fatal("no [[replicas]]")
	}
	_, rest, _ = strings.Cut(rest, `name = "`)
	name, _, _ := strings.Cut(rest, `"`)
	return name
}

// A newcomer's review of the CLI help: each reported input with its right
// answer.
func TestCLIHelpAndMissingArguments(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout string // substring of stdout ("" = empty stdout)
		stderr string // all of stderr
	}{
		{"sweep -h gives sweep's default --out", []string{"sweep", "-h"}, exitOK, "output directory (default results/<scenario-name>-sweep-<param>)", ""},
		{"run -h: --out needs one scenario", []string{"run", "-h"}, exitOK, "output directory, only with one scenario (default results/<scenario-name>)", ""},
		{"version -h", []string{"version", "-h"}, exitOK, "Usage: hedgesim version", ""},
		{"version --help", []string{"version", "--help"}, exitOK, "Usage: hedgesim version", ""},
		{"--version -h", []string{"--version", "-h"}, exitOK, "Usage: hedgesim version", ""},
		{"version extra", []string{"version", "extra"}, exitUsage, "", "hedgesim: version takes no arguments, got [\"extra\"]\nUsage: hedgesim version (or: hedgesim --version)\nRun \"hedgesim version -h\" for help.\n"},
		{"run without a scenario", []string{"run"}, exitUsage, "", "hedgesim: run needs at least one scenario (a FILE or an embedded NAME; hedgesim list shows them)\nUsage: hedgesim run [flags] FILE|NAME...\nRun \"hedgesim run -h\" for help.\n"},
		{"run with flags only", []string{"run", "-q"}, exitUsage, "", "hedgesim: run needs at least one scenario (a FILE or an embedded NAME; hedgesim list shows them)\nUsage: hedgesim run [flags] FILE|NAME...\nRun \"hedgesim run -h\" for help.\n"},
		{"validate without a scenario", []string{"validate"}, exitUsage, "", "hedgesim: validate needs at least one scenario (a FILE or an embedded NAME; hedgesim list shows them)\nUsage: hedgesim validate FILE|NAME...\nRun \"hedgesim validate -h\" for help.\n"},
		{"sweep without a scenario", []string{"sweep", "--param", "seed=1:2:1"}, exitUsage, "", "hedgesim: sweep needs one scenario (a FILE or an embedded NAME), got none\nUsage: hedgesim sweep [flags] FILE|NAME --param PATH=FROM:TO:STEP\nRun \"hedgesim sweep -h\" for help.\n"},
		{"sweep with two scenarios", []string{"sweep", "tiny", "default", "--param", "seed=1:2:1"}, exitUsage, "", "hedgesim: sweep needs one scenario (a FILE or an embedded NAME), got 2: [\"tiny\" \"default\"]\nUsage: hedgesim sweep [flags] FILE|NAME --param PATH=FROM:TO:STEP\nRun \"hedgesim sweep -h\" for help.\n"},
		// Issue 19: a usage error is one line and the command's usage line,
		// not the whole help.
		{"run: bad flag", []string{"run", "tiny", "--bogus"}, exitUsage, "", "hedgesim: flag provided but not defined: -bogus\nUsage: hedgesim run [flags] FILE|NAME...\nRun \"hedgesim run -h\" for help.\n"},
		{"validate: bad flag", []string{"validate", "tiny", "--out", "x"}, exitUsage, "", "hedgesim: flag provided but not defined: -out\nUsage: hedgesim validate FILE|NAME...\nRun \"hedgesim validate -h\" for help.\n"},
		{"list: bad flag", []string{"list", "-x"}, exitUsage, "", "hedgesim: flag provided but not defined: -x\nUsage: hedgesim list\nRun \"hedgesim list -h\" for help.\n"},
		{"unknown command", []string{"frob"}, exitUsage, "", "hedgesim: unknown command \"frob\"\nUsage: hedgesim [COMMAND] [flags] [FILE|NAME...]  (commands: run, sweep, merge, validate, scorecard, fuzz, calibrate, whatif, telemetry, list, version, help)\nRun \"hedgesim help\" for help.\n"},
		{"--out \"\"", []string{"run", "tiny", "--out", "", "-q"}, exitUsage, "", "hedgesim: --out must name a directory, got \"\"\nUsage: hedgesim run [flags] FILE|NAME...\nRun \"hedgesim run -h\" for help.\n"},
		{"sweep --out \"\"", []string{"sweep", "tiny", "--param", "seed=1:2:1", "--out="}, exitUsage, "", "hedgesim: --out must name a directory, got \"\"\nUsage: hedgesim sweep [flags] FILE|NAME --param PATH=FROM:TO:STEP\nRun \"hedgesim sweep -h\" for help.\n"},
		{"sweep without --param", []string{"sweep", "tiny"}, exitUsage, "", "hedgesim: sweep needs --param PATH=FROM:TO:STEP\nUsage: hedgesim sweep [flags] FILE|NAME --param PATH=FROM:TO:STEP\nRun \"hedgesim sweep -h\" for help.\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			if c.stdout == "" && out != "" || !strings.Contains(out, c.stdout) {
				t.Errorf("stdout %q, want it to contain %q", out, c.stdout)
			}
			if errOut != c.stderr {
				t.Errorf("stderr %q, want %q", errOut, c.stderr)
			}
		})
	}
}

// hedgesim scorecard: usage errors name the flag (the population's flags
// go together and alone; --shard is for a population); a small
// scenario's scorecard ends with the recommended policy's count.
func TestCLIScorecard(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"scorecard"}, exitUsage, "no scenarios: give files, directories or names, or --library"},
		{[]string{"scorecard", "--reps", "0", "tiny"}, exitUsage, "reps must be an integer >= 1"},
		{[]string{"scorecard", "--reps", "5", "--cap", "3", "tiny"}, exitUsage, "--reps (5) must be at most --cap (3)"},
		{[]string{"scorecard", "--n", "200"}, exitUsage, "give its seed with --seed S"},
		{[]string{"scorecard", "--seed", "7"}, exitUsage, "give its size with --n N"},
		{[]string{"scorecard", "--n", "0", "--seed", "7"}, exitUsage, "n must be an integer >= 1"},
		{[]string{"scorecard", "--n", "2", "--seed", "7", "tiny"}, exitUsage, "--n scores a generated population alone"},
		{[]string{"scorecard", "--n", "2", "--seed", "7", "--library"}, exitUsage, "--n scores a generated population alone"},
		{[]string{"scorecard", "--n", "2", "--seed", "7", "--space", "nosuch.toml"}, exitError, "nosuch.toml"}, // an input problem, as run, fuzz and a scorecard FILE report it
		{[]string{"scorecard", "--n", "2", "--seed", "7", "--out", "x"}, exitUsage, "--out names a shard's partial result"},
		{[]string{"scorecard", "--shard", "0/2", "tiny"}, exitUsage, "--shard and --out shard a generated population"},
		{[]string{"scorecard", "--n", "2", "--seed", "7", "--shard", "2/2"}, exitUsage, "the shard I is 0-based"},
		{[]string{"scorecard", "nosuch"}, exitError, `unknown scenario "nosuch"`},
	} {
		var out, errb strings.Builder
		if code := run(context.Background(), c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"scorecard", "--cap", "3", "tiny"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "recommended: ") || !strings.HasSuffix(last, " losses of 1") {
		t.Errorf("last line %q, want \"recommended: K losses of 1\"", last)
	}
}
