// Command scorecard scores the recommended threshold policy against every
// other policy type on scenario files, by dominance (issue 17): a policy
// loses a scenario when another dominates it — a p99 at least 10% lower
// with 95% intervals apart for no more RU, or at least 2 RU points cheaper
// at a p99 no worse (intervals overlap or lower) — or when its error rate
// is more than 1 point above the best.
//
// Usage:
//
//	go run ./cmd/scorecard [-reps N] [-max-duration S] file.toml|dir ...
//
// Each file's own policies are kept; a roster of one policy per type
// (disabled, driver_default, static 50 ms, p99_dynamic and its
// tps_literal preset, capped_quantile 100 ms, backup_requests,
// retry_throttle 50 ms, recommended) is added under names the file does not
// use. It prints one line per scenario: p99 and RU of p99_dynamic (before)
// and recommended (after), recommended's losses with the dominating policy
// named, and how many policies dominate p99_dynamic.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

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

// row is one policy's figures on one scenario.
type row struct {
	name          string
	p99, ru, errs float64
	p99CI         [2]float64
}

// dominates reports whether a dominates b, and why.
func dominates(a, b row) (string, bool) {
	apart := a.p99CI[1] < b.p99CI[0]
	// No worse: lower, or the intervals overlap.
	noWorse := a.p99 <= b.p99 || a.p99CI[0] <= b.p99CI[1]
	switch {
	case a.p99 <= 0.9*b.p99 && apart && a.ru <= b.ru:
		return fmt.Sprintf("p99 %.1f vs %.1f ms at RU %.3f vs %.3f", a.p99, b.p99, a.ru, b.ru), true
	case a.ru <= b.ru-0.02 && noWorse:
		return fmt.Sprintf("RU %.3f vs %.3f at p99 %.1f vs %.1f ms", a.ru, b.ru, a.p99, b.p99), true
	}
	return "", false
}

var reName = regexp.MustCompile(`(?m)^name\s*=\s*"([^"]*)"`)

func main() {
	reps := flag.Int("reps", 0, "replications per scenario (0 = the file's)")
	maxDur := flag.Float64("max-duration", 0, "skip scenarios longer than this many seconds (0 = none)")
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
	rows := make([]row, 0, len(res.Policies))
	for _, p := range res.Policies {
		var p99s []float64
		for _, v := range p.PerRep {
			p99s = append(p99s, v[2])
		}
		st := p.Merged
		rows = append(rows, row{name: p.Name, p99: st.QuantileMs(0.99), ru: st.RUMultiplier(),
			errs: float64(st.Errors) / float64(max(st.Ops, 1)), p99CI: study.CI95(p99s)})
	}
	bestErr := slices.MinFunc(rows, func(a, b row) int { return cmpF(a.errs, b.errs) }).errs
	i := slices.IndexFunc(rows, func(r row) bool { return r.name == "recommended" })
	j := slices.IndexFunc(rows, func(r row) bool { return r.name == "sc-p99-dynamic" })
	rec, before := rows[i], rows[j]
	losses := func(p row) []string {
		var why []string
		if p.errs > bestErr+0.01 {
			why = append(why, fmt.Sprintf("errors %.2f%% vs best %.2f%%", 100*p.errs, 100*bestErr))
		}
		for _, o := range rows {
			if o.name == p.name {
				continue
			}
			if w, ok := dominates(o, p); ok {
				why = append(why, o.name+": "+w)
			}
		}
		return why
	}
	why := losses(rec)
	verdict := "no loss"
	if len(why) > 0 {
		verdict = "LOSES to " + strings.Join(why, "; ")
	}
	if n := len(losses(before)); n > 0 {
		verdict += fmt.Sprintf(" (p99_dynamic loses: %d dominating policies or an error excess)", n)
	}
	return fmt.Sprintf("%-32s p99_dynamic %7.1f ms RU %.3f → recommended %7.1f ms RU %.3f err %.2f%%  %s",
		s.Name, before.p99, before.ru, rec.p99, rec.ru, 100*rec.errs, verdict), min(len(why), 1), nil
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
