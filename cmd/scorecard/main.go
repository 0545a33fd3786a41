// Command scorecard scores the recommended threshold policy against every
// other policy type on scenario files, by dominance (issue 17;
// study.Dominates and study.Losses, the one definition notebook 01 uses): a
// policy loses a scenario when another dominates it — a p99 at least 10%
// lower with 95% intervals apart for no more RU, or at least 2 RU points
// cheaper at a p99 no worse (intervals overlap or lower) — or when its error
// rate is more than 1 point above the best.
//
// Usage:
//
//	go run ./cmd/scorecard [-reps N] [-max-duration S] [-v] file.toml|dir ...
//
// Figures are study.Figures', as in the notebooks: latencies are means over
// the replications with 95% intervals. Each file's own policies are kept; a
// roster of one policy per type (disabled, driver_default, static 50 ms,
// p99_dynamic and its tps_literal preset, capped_quantile 100 ms,
// backup_requests, retry_throttle 50 ms, recommended) is added under names
// the file does not use. It prints one line per scenario: p99 and RU of
// p99_dynamic (before) and recommended (after), recommended's losses with
// the dominating policy named, and how many policies dominate p99_dynamic.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"hedgelab/internal/report"
	"hedgelab/internal/study"
	"hedgelab/scenarios"
)

// roster is one policy per type, appended to every scenario.
var roster = []struct{ name, toml string }{
	{"sc-disabled", `type = "disabled"`},
	{"sc-driver-default", `type = "driver_default"`},
	{"sc-static-50ms", "type = \"static\"\nthreshold_ms = 50"},
	{"sc-p99-dynamic", `type = "p99_dynamic"`},
	{"sc-p99-tps", "type = \"p99_dynamic\"\npreset = \"tps_literal\""},
	{"sc-capped-100", "type = \"capped_quantile\"\ncap_ms = 100"},
	{"sc-backup-requests", `type = "backup_requests"`},
	{"sc-retry-throttle", "type = \"retry_throttle\"\nthreshold_ms = 50"},
	{"recommended", `type = "recommended"`},
}

// verbose is the -v flag.
var verbose bool

var reName = regexp.MustCompile(`(?m)^name\s*=\s*"([^"]*)"`)

func main() {
	reps := flag.Int("reps", 0, "replications per scenario (0 = the file's)")
	maxDur := flag.Float64("max-duration", 0, "skip scenarios longer than this many seconds (0 = none)")
	flag.BoolVar(&verbose, "v", false, "also print every policy's p99, RU multiplier, error and hedge rates")
	flag.Parse()
	var files []string
	for _, a := range flag.Args() {
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			m, _ := filepath.Glob(filepath.Join(a, "*.toml"))
			files = append(files, m...)
		} else {
			files = append(files, a)
		}
	}
	losses := 0
	for _, f := range files {
		line, lost, err := score(f, *reps, *maxDur)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			continue
		}
		if line != "" {
			fmt.Println(line)
		}
		losses += lost
	}
	fmt.Printf("recommended: %d losses\n", losses)
}

func score(path string, reps int, maxDur float64) (string, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	used := map[string]bool{}
	for _, m := range reName.FindAllStringSubmatch(string(data), -1) {
		used[m[1]] = true
	}
	var b strings.Builder
	b.Write(data)
	for _, r := range roster {
		if !used[r.name] {
			fmt.Fprintf(&b, "\n[[policies]]\nname = %q\n%s\n", r.name, r.toml)
		}
	}
	s, err := scenarios.Parse(path, []byte(b.String()))
	if err != nil {
		return "", 0, err
	}
	cfg, pols, err := s.Config()
	if err != nil {
		return "", 0, err
	}
	if maxDur > 0 && cfg.Duration.Seconds() > maxDur {
		return fmt.Sprintf("%-32s skipped: %.0f s > %.0f s", s.Name, cfg.Duration.Seconds(), maxDur), 0, nil
	}
	n := s.Replications
	if reps > 0 {
		n = reps
	}
	res, err := study.Simulate(cfg, pols, n, study.Options{})
	if err != nil {
		return "", 0, err
	}
	var figs []report.Figures
	for _, p := range res.Policies {
		figs = append(figs, study.Figures(p))
	}
	losses := func(policy string) ([]string, error) {
		ls, err := study.Losses(figs, policy)
		var why []string
		for _, l := range ls {
			if l.By == "" {
				why = append(why, l.Why)
			} else {
				why = append(why, l.By+": "+l.Why)
			}
		}
		return why, err
	}
	i := slices.IndexFunc(figs, func(f report.Figures) bool { return f.Policy == "recommended" })
	j := slices.IndexFunc(figs, func(f report.Figures) bool { return f.Policy == "sc-p99-dynamic" })
	if i < 0 || j < 0 {
		return "", 0, fmt.Errorf("policies recommended and sc-p99-dynamic are names the file itself uses")
	}
	rec, before := figs[i], figs[j]
	if verbose {
		for _, f := range figs {
			ci := "" // one replication: no interval
			if c, ok := f.CI95["p99_ms"]; ok {
				ci = fmt.Sprintf(" [%.1f, %.1f]", c[0], c[1])
			}
			fmt.Printf("    %-24s p99 %8.1f ms%s RU %.3f err %.2f%% hedged %.2f%%\n",
				f.Policy, f.P99, ci, f.RUMultiplier, 100*f.ErrorRate, 100*f.HedgeRate)
		}
	}
	why, err := losses(rec.Policy)
	if err != nil {
		return "", 0, err
	}
	verdict := "no loss"
	if len(why) > 0 {
		verdict = "LOSES to " + strings.Join(why, "; ")
	}
	if lb, err := losses(before.Policy); err != nil {
		return "", 0, err
	} else if n := len(lb); n > 0 {
		verdict += fmt.Sprintf(" (p99_dynamic loses: %d dominating policies or an error excess)", n)
	}
	return fmt.Sprintf("%-32s p99_dynamic %7.1f ms RU %.3f → recommended %7.1f ms RU %.3f err %.2f%%  %s",
		s.Name, before.P99, before.RUMultiplier, rec.P99, rec.RUMultiplier, 100*rec.ErrorRate, verdict), min(len(why), 1), nil
}
