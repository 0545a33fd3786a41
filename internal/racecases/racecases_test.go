package racecases

import (
	"os"
	"path/filepath"
	"testing"
)

// writeShared makes a shared/ directory holding cases/race-cases.toml with
// the given content and points HEDGELAB_SHARED at it.
func writeShared(t *testing.T, content string) {
	t.Helper()
	dir := t.TempDir()
	if content != "" {
		if err := os.MkdirAll(filepath.Join(dir, "cases"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cases", "race-cases.toml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HEDGELAB_SHARED", dir)
}

func names(cs []Case) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// A clean clone (no shared directory) still has every shared case, from the
// repository's copy.
func TestLoadSharedWithoutSharedDir(t *testing.T) {
	writeShared(t, "")
	cases, err := LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	own, err := Load(testdata("race-cases.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != len(own) || len(cases) < 20 {
		t.Fatalf("got %d cases, want the copy's %d (>= 20)", len(cases), len(own))
	}
	all, err := LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	extra, _ := Load(testdata("extra-cases.toml"))
	if len(all) != len(own)+len(extra) {
		t.Fatalf("LoadAll: %d cases, want %d + %d", len(all), len(own), len(extra))
	}
}

// A shared directory's new cases are picked up; a case it shares with the
// copy by name appears once, in the shared version.
func TestLoadSharedMergesByName(t *testing.T) {
	own, err := Load(testdata("race-cases.toml"))
	if err != nil {
		t.Fatal(err)
	}
	first := own[0].Name
	writeShared(t, `
[[case]]
name = "`+first+`"
threshold_ms = 7
primary = { latency_ms = 1, status = 200 }
expect = { terminal_state = "PrimaryWonPreThreshold", winner = "primary", attempts = 1, latency_ms = 1, status = 200 }

[[case]]
name = "a brand-new shared case"
threshold_ms = 200
primary = { latency_ms = 50, status = 200 }
expect = { terminal_state = "PrimaryWonPreThreshold", winner = "primary", attempts = 1, latency_ms = 50, status = 200 }
`)
	cases, err := LoadShared()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != len(own)+1 {
		t.Fatalf("got %d cases %q, want %d", len(cases), names(cases), len(own)+1)
	}
	if cases[0].Name != first || cases[0].ThresholdMs != 7 {
		t.Errorf("case %q: threshold %g, want the shared version's 7", cases[0].Name, cases[0].ThresholdMs)
	}
	if last := cases[len(cases)-1].Name; last != "a brand-new shared case" {
		t.Errorf("last case %q, want the new shared case", last)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Errorf("case %q twice", c.Name)
		}
		seen[c.Name] = true
	}
}

// A shared file that exists but is broken is an error, not silently skipped.
func TestLoadSharedBrokenSharedFile(t *testing.T) {
	writeShared(t, "[[case]]\nname = 1\n")
	if _, err := LoadShared(); err == nil {
		t.Fatal("want an error for a broken shared case file")
	}
}
