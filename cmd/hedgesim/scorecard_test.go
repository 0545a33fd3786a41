package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
