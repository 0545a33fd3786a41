package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hedgelab/scenarios"
)

// A population scorecard is a function of its flags: the same --n, --seed
// and --space give the same output, byte for byte, whatever --parallel;
// and the merge of its shards (by scenario index) prints the same bytes.
// Its summary names the population's losses and the scenarios whose
// conditions change, and its last line counts the recommended policy's
// losses of N.
func TestScorecardPopulation(t *testing.T) {
	if testing.Short() {
		t.Skip("scores 3 generated scenarios 4 times (about 20 CPU s)")
	}
	space, err := filepath.Abs(filepath.Join("testdata", "population-small.toml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	args := []string{"scorecard", "--n", "3", "--seed", "42", "--space", space, "--cap", "3"}
	one, stderr, code := runCLI(t, append(args, "--parallel", "1")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	three, stderr, code := runCLI(t, append(args, "--parallel", "3")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if one != three {
		t.Errorf("--parallel 1 and 3 differ:\n%s\n---\n%s", one, three)
	}
	for i := range 3 {
		if !strings.Contains(one, "fuzz-42-"+string(rune('0'+i))+"  (") {
			t.Errorf("no line for scenario fuzz-42-%d:\n%s", i, one)
		}
	}
	for _, want := range []string{"loss rate per roster policy", "recommended where conditions change during the run", "\nrecommended: "} {
		if !strings.Contains(one, want) {
			t.Errorf("output lacks %q:\n%s", want, one)
		}
	}
	lines := strings.Split(strings.TrimSpace(one), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "recommended: ") || !strings.HasSuffix(last, " losses of 3") {
		t.Errorf("last line %q, want \"recommended: K losses of 3\"", last)
	}

	for _, sh := range []string{"0/2", "1/2"} {
		dir := filepath.Join("parts", strings.ReplaceAll(sh, "/", "-"))
		out, stderr, code := runCLI(t, append(args, "--parallel", "2", "--shard", sh, "--out", dir)...)
		if code != exitOK {
			t.Fatalf("--shard %s: exit %d: %s", sh, code, stderr)
		}
		if !strings.Contains(out, "shard "+sh+" of hedgesim scorecard") {
			t.Errorf("--shard %s printed %q", sh, out)
		}
	}
	merged, stderr, code := runCLI(t, "merge", "parts")
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if merged != one {
		t.Errorf("merge of 2 shards differs from the unsharded scorecard:\n%s\n---\n%s", merged, one)
	}
	// A missing shard, and a shard of another population, are refused.
	if _, stderr, code := runCLI(t, "merge", filepath.Join("parts", "0-2")); code == exitOK || !strings.Contains(stderr, "missing") {
		t.Errorf("merge of shard 0/2 alone: exit %d, %q; want it refused, naming the missing shard", code, stderr)
	}
	other := append([]string{"scorecard", "--n", "3", "--seed", "43", "--space", space, "--cap", "3"}, "--shard", "1/2", "--out", "other")
	if _, stderr, code := runCLI(t, other...); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "merge", filepath.Join("parts", "0-2"), "other"); code == exitOK || !strings.Contains(stderr, "--seed 42") || !strings.Contains(stderr, "--seed 43") {
		t.Errorf("merge of seeds 42 and 43: exit %d, %q; want it refused, naming both", code, stderr)
	}
	if _, err := os.Stat(filepath.Join("parts", "0-2", "shard.bin")); err != nil {
		t.Error(err)
	}
}

// Inputs users reported: a directory without scenario files printed "0
// losses of 0", and --reps 1000000000 ran unbounded. Both are errors that
// name what to change, and nothing is printed on stdout.
func TestScorecardRefusesEmptyDirAndUnboundedReps(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scorecard", empty}, "no *.toml"},
		{[]string{"scorecard", "--reps", "1000000000", "tiny"}, "--reps"},
		{[]string{"scorecard", "--cap", "1000000000", "tiny"}, "--cap"},
	} {
		out, stderr, code := runCLI(t, tc.args...)
		if code != exitError || out != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d naming %q", tc.args, code, out, stderr, exitError, tc.want)
		}
	}
}

// A --space file that cannot be read is an input problem (exit 1, as
// hedgesim fuzz reports it), a negative --seed a usage error (exit 2); the
// help states the seed's range, not an internal "default -1"; a shard of
// the embedded space is described by flags that reproduce it (no --space).
func TestScorecardSeedAndSpaceErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.toml")
	if _, stderr, code := runCLI(t, "scorecard", "--n", "1", "--seed", "1", "--space", missing); code != exitError || !strings.Contains(stderr, missing) {
		t.Errorf("missing --space: exit %d, %q; want exit %d naming the file", code, stderr, exitError)
	}
	if _, stderr, code := runCLI(t, "scorecard", "--n", "1", "--seed", "-4"); code != exitUsage || !strings.Contains(stderr, "0 to 2^63-1") {
		t.Errorf("--seed -4: exit %d, %q; want a usage error stating the range", code, stderr)
	}
	if help, _, _ := runCLI(t, "scorecard", "-h"); strings.Contains(help, "default -1") {
		t.Errorf("help shows the unset seed's sentinel:\n%s", help)
	}
	w := scorecardWork{N: 3, Seed: 7, Space: scenarios.PopulationSpaceSource}
	if got, want := w.String(), "--n 3 --seed 7"; got != want {
		t.Errorf("embedded space: %q, want %q", got, want)
	}
	w.Space = "my.toml"
	if got, want := w.String(), "--n 3 --seed 7 --space my.toml"; got != want {
		t.Errorf("a --space file: %q, want %q", got, want)
	}
}
