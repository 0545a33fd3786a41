package main

import (
	"errors"
	"hedgelab/internal/scorecard"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The template source convention: wrapped lines are one paragraph, a
// blank line (or several) ends it, and each line's blanks are dropped.
func TestJoinProseLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"one\ntwo\n  three  \n", "one two three"},
		{"a\n\n\n b\nc", "a\n\nb c"},
		{"\n\n{{define \"x\" -}}\nwrapped\nline\n{{- end}}\n", "{{define \"x\" -}} wrapped line {{- end}}"},
	} {
		if got := joinProseLines(c.in); got != c.want {
			t.Errorf("joinProseLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A paragraph renders as one line followed by a blank line, exactly as
// the format strings it replaces did.
func TestSayWritesOneParagraph(t *testing.T) {
	d := &doc{}
	d.say("q7/sharded", 100)
	want := "With `[fleet] assignment = \"partition\"` each partition's reads all go to one instance (partition p to instance p mod 100), so each breaker sees every read of its partitions, as one client does.\n\n"
	if got := d.b.String(); got != want || d.err != nil {
		t.Errorf("say wrote %q (err %v), want %q", got, d.err, want)
	}
}

// A view without a field the template cites fails the notebook, naming the
// template; nothing is written.
func TestSayMissingFieldFailsTheNotebook(t *testing.T) {
	dir := t.TempDir()
	d := newDoc(dir, "nb", "Title", 1)
	d.say("setup", struct{ Setup string }{"x"})
	_, err := d.write()
	if err == nil || !strings.Contains(err.Error(), "template setup") || !strings.Contains(err.Error(), "Summary") {
		t.Fatalf("write() = %v, want an error naming template setup and the field Summary", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "nb.md")); !os.IsNotExist(err) {
		t.Errorf("notebook written despite the error (stat: %v)", err)
	}
}

// A claim the data no longer supports fails the notebook with its name and
// the figure that broke it; later claims are not run.
func TestCheckFailsTheNotebook(t *testing.T) {
	dir := t.TempDir()
	d := newDoc(dir, "nb", "Title", 1)
	ran := false
	d.check(claim{"holds", func() error { return nil }},
		claim{"the budget refuses nothing", func() error { return errors.New("budget-5pct had 3 refused") }},
		claim{"later", func() error { ran = true; return nil }})
	_, err := d.write()
	want := `claim "the budget refuses nothing" no longer holds: budget-5pct had 3 refused`
	if err == nil || err.Error() != want {
		t.Fatalf("write() = %v, want %q", err, want)
	}
	if ran {
		t.Error("a claim after the failing one ran")
	}
	if _, err := os.Stat(filepath.Join(dir, "nb.md")); !os.IsNotExist(err) {
		t.Errorf("notebook written despite the failed claim (stat: %v)", err)
	}
}

// Notebook 02's probe interval: the paragraph names the interval the sweep
// favours by RU against the spec's 30 s, and decides by the incident
// length at which the wait the longer interval saves during an incident
// equals the wait its longer failback costs after it.
func TestProbeParagraph(t *testing.T) {
	probes := []q7Probe{
		{Probe: 10, RU: 1.046, P99: 209, TripsH: 21159, EpWaitS: 1400, FailbackS: 9.8, ExtraMs: 7},
		{Probe: 30, RU: 1.019, P99: 209, TripsH: 7497, EpWaitS: 900, FailbackS: 15.2, ExtraMs: 7},
		{Probe: 60, RU: 1.012, P99: 209, TripsH: 3751, EpWaitS: 750, FailbackS: 27.1, ExtraMs: 7},
	}
	v := probeView(probes, 200, 300)
	// Saves (900 - 750) / 300 = 0.5 read-s per s; costs (60 - 30) / 2 ×
	// 200 × 7 ms = 21 read-s: break-even at 42 s.
	if v.SaveRate != 0.5 || math.Abs(v.FailCost-21) > 1e-9 || math.Abs(v.BreakEvenS-42) > 1e-9 {
		t.Errorf("save %v, cost %v, break-even %v; want 0.5, 21, 42", v.SaveRate, v.FailCost, v.BreakEvenS)
	}
	d := &doc{}
	d.say("q7/probe", v)
	got := d.b.String()
	for _, want := range []string{
		"By RU the sweep favours 60 s over the spec's 30 s: at N = 5 for one client it costs 1.012× RU and 3751 trips/h against 1.019× and 7497.",
		"The p99 was 209 ms at every interval.",
		"(10 s: 1.046× RU, 21159 trips/h)",
		"60 s saves 0.50 read-seconds of waiting per second against 30 s",
		"costs 21.0 read-seconds more per incident",
		"They break even at an incident of 42 s: **use 60 s where incidents usually last longer than that (this 300 s one does), the spec's 30 s where they are shorter.**",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("probe paragraph lacks %q:\n%s", want, got)
		}
	}
	probes[2].RU, probes[2].EpWaitS = 1.030, 895 // 30 s now the cheapest; break-even 126 s
	d = &doc{}
	d.say("q7/probe", probeView(probes, 200, 30))
	got = d.b.String()
	if !strings.Contains(got, "By RU the sweep favours the spec's 30 s (1.019× RU, 7497 trips/h at N = 5, one client).") || !strings.Contains(got, "(this 30 s one does not)") {
		t.Errorf("30 s cheapest, short incident:\n%s", got)
	}
}

// The policy paragraph of notebook 01 names settings of the scorecard's
// roster: the claim that checks them holds for the study's policies.
func TestQ11PolicySettingsClaim(t *testing.T) {
	for _, want := range q11PolicySettings {
		if !strings.Contains(scorecard.RosterTOML, want) {
			t.Errorf("scorecard.RosterTOML lacks %q", want)
		}
	}
}

// Every template a notebook says exists, and every template defined is
// said somewhere: a misspelt name would otherwise surface only after a
// notebook's simulations have run.
func TestSaidTemplatesExist(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	said := map[string]bool{}
	re := regexp.MustCompile(`\.say\("([^"]+)"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			said[m[1]] = true
			if prose.Lookup(m[1]) == nil {
				t.Errorf("%s says %q, which no template defines", f, m[1])
			}
		}
	}
	for _, tmpl := range prose.Templates() {
		name := tmpl.Name()
		if strings.HasPrefix(name, "templates/") || name == "" {
			continue // a file, not a define
		}
		if !said[name] {
			t.Errorf("template %q is never said", name)
		}
	}
}
