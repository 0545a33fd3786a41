package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"hedgelab/simnet"
)

// readmeKey is one `key = number  # comment` line of the README's
// annotated example, with the range and default its comment states.
type readmeKey struct {
	line         int // 1-based, in the example
	key, comment string
	integer      bool    // written without a fraction or exponent
	lo, hi       float64 // the range; hi = +Inf when the comment gives none
	loIn, hiIn   bool    // whether lo and hi are in the range
	hasRange     bool
	def          string // the stated default ("" = none stated)
}

var (
	reKeyLine  = regexp.MustCompile(`^\s*([a-z_0-9]+)\s*=\s*(-?[0-9][0-9_.e+-]*)\s+#\s*(.*)$`)
	reNum      = `(-?[0-9][0-9.]*(?:e[+-]?[0-9]+)?)`
	reCmp      = regexp.MustCompile(`^(>=|>) ` + reNum + `(?: and (<|<=) ` + reNum + `)?$`)
	reDots     = regexp.MustCompile(`^` + reNum + `\.\.` + reNum + `\b`)
	reInterval = regexp.MustCompile(`^([\[(])` + reNum + `, ?` + reNum + `([\])])`)
	reDefault  = regexp.MustCompile(`^default ` + reNum + `$`)
	unitWords  = []string{"required, ", "ms, ", "s, ", "RU/s, ", "RU, ", "integer "}
)

// readmeKeys parses the annotated example's numeric key lines.
func readmeKeys(example string) []readmeKey {
	var out []readmeKey
	for i, line := range strings.Split(example, "\n") {
		m := reKeyLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		k := readmeKey{line: i + 1, key: m[1], comment: m[3], integer: !strings.ContainsAny(m[2], ".eE"), hi: math.Inf(1)}
		for _, clause := range strings.Split(m[3], ";") {
			clause = strings.TrimSpace(clause)
			for _, w := range unitWords {
				clause = strings.TrimPrefix(clause, w)
			}
			clause, _, _ = strings.Cut(clause, ":") // "default 10: tokens in ..."
			clause, _, _ = strings.Cut(clause, " (")
			num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
			switch {
			case reCmp.MatchString(clause) && !k.hasRange:
				c := reCmp.FindStringSubmatch(clause)
				k.lo, k.loIn, k.hasRange = num(c[2]), c[1] == ">=", true
				if c[3] != "" {
					k.hi, k.hiIn = num(c[4]), c[3] == "<="
				}
			case reDots.MatchString(clause) && !k.hasRange:
				c := reDots.FindStringSubmatch(clause)
				k.lo, k.hi, k.loIn, k.hiIn, k.hasRange = num(c[1]), num(c[2]), true, true, true
			case reInterval.MatchString(clause) && !k.hasRange:
				c := reInterval.FindStringSubmatch(clause)
				k.lo, k.hi, k.loIn, k.hiIn, k.hasRange = num(c[2]), num(c[3]), c[1] == "[", c[4] == "]", true
			}
			for _, part := range strings.Split(clause, ", ") { // "0..10, default 0 (dropped)"
				if d := reDefault.FindStringSubmatch(part); d != nil {
					k.def = d[1]
				}
			}
		}
		out = append(out, k)
	}
	return out
}

// setLine returns example with line n's value replaced by v (or the line
// removed when v is "").
func setLine(example string, n int, v string) string {
	lines := strings.Split(example, "\n")
	if v == "" {
		lines[n-1] = ""
	} else {
		m := reKeyLine.FindStringSubmatch(lines[n-1])
		lines[n-1] = m[1] + " = " + v
	}
	return strings.Join(lines, "\n")
}

// errorsOnLine returns the errors of parsing text that are on line n.
func errorsOnLine(text string, n int) []string {
	_, err := Parse("README.md example", []byte(text))
	var out []string
	for _, e := range unwrapJoined(err) {
		if e, ok := e.(*Error); ok && e.Line == n {
			out = append(out, e.Error())
		}
	}
	return out
}

// bigValue is the largest value the README's resource limits allow a key
// whose comment states no upper bound: 1000 h for ms, 1e9 s for seconds,
// and 1e6 for counts (servers, clients, partitions); 1e12 otherwise.
func bigValue(k readmeKey) float64 {
	switch {
	case strings.HasSuffix(k.key, "_ms") || strings.HasPrefix(k.comment, "ms"):
		return 3.6e9
	case strings.HasSuffix(k.key, "_s") && !strings.HasSuffix(k.key, "_per_s") || strings.HasPrefix(k.comment, "s,"):
		return 1e9
	case counts[k.key]:
		return 1e6
	}
	return 1e12
}

// counts are the keys the README's resource limits bound at 1e6.
var counts = map[string]bool{"servers": true, "clients": true, "partitions": true, "queue_limit": true}

// crossChecks are the README's rules between keys, by the key whose
// probe can break them, with the text of their error: a probe inside a
// key's own range may fail them.
var crossChecks = map[string]string{
	"ramp_up_s":        "ramp_up_s + ramp_down_s", // ramp_up_s + ramp_down_s <= end_s - start_s
	"rate_per_s":       "would simulate",          // the resource limits
	"exclude_fraction": "needs exclude_regions",   // exclude_regions is empty in the example
}

func fmtNum(v float64, integer bool) string {
	if integer {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// TestReadmeRangesMatchValidator: every numeric key of the README's
// annotated example whose comment states a range is accepted at the
// range's edges inside it and refused just outside (issue 19: the README
// gave ceiling_factor, min_backups_per_s and hedge_budget_burst no upper
// bound, hedge_budget no range); a key with no stated upper bound is
// accepted up to the resource limits' largest value.
func TestReadmeRangesMatchValidator(t *testing.T) {
	example := readmeExample(t)
	keys := readmeKeys(example)
	if len(keys) < 60 {
		t.Fatalf("found %d numeric keys in the README's example; the parser is broken", len(keys))
	}
	ranged := 0
	for _, k := range keys {
		if !k.hasRange {
			continue
		}
		ranged++
		step := 1.0
		if !k.integer {
			step = 1e-6 * math.Max(1, math.Abs(k.lo))
		}
		type probe struct {
			v  float64
			in bool
		}
		probes := []probe{{k.lo - step, false}}
		if k.loIn {
			probes = append(probes, probe{k.lo, true})
		} else {
			probes = append(probes, probe{k.lo, false}, probe{k.lo + step, true})
		}
		if math.IsInf(k.hi, 1) {
			probes = append(probes, probe{bigValue(k), true})
		} else {
			hstep := 1.0
			if !k.integer {
				hstep = 1e-6 * math.Max(1, math.Abs(k.hi))
			}
			if k.hiIn {
				probes = append(probes, probe{k.hi, true}, probe{k.hi + hstep, false})
			} else {
				probes = append(probes, probe{k.hi - hstep, true}, probe{k.hi, false})
			}
		}
		for _, p := range probes {
			if k.integer && p.v != math.Round(p.v) {
				continue
			}
			errs := errorsOnLine(setLine(example, k.line, fmtNum(p.v, k.integer)), k.line)
			if x := crossChecks[k.key]; x != "" && p.in {
				errs = slices.DeleteFunc(errs, func(e string) bool { return strings.Contains(e, x) })
			}
			switch {
			case p.in && len(errs) > 0:
				t.Errorf("line %d %s = %s (README: %q) is refused: %s", k.line, k.key, fmtNum(p.v, k.integer), k.comment, strings.Join(errs, "; "))
			case !p.in && len(errs) == 0:
				t.Errorf("line %d %s = %s (README: %q) is accepted", k.line, k.key, fmtNum(p.v, k.integer), k.comment)
			}
		}
	}
	if ranged < 40 {
		t.Errorf("only %d keys with a range", ranged)
	}
}

// TestReadmeDefaultsMatchValidator: a numeric key whose README comment
// states "default N" builds the same scenario when removed as when set to
// N (issue 19: background.retry_backoff_ms had no default in the README).
func TestReadmeDefaultsMatchValidator(t *testing.T) {
	example := readmeExample(t)
	type built struct {
		reps       int
		cfg        any
		strategies []any
	}
	build := func(text string) (built, error) {
		s, err := Parse("README.md example", []byte(text))
		if err != nil {
			return built{}, err
		}
		cfg, pols, err := s.Config()
		if err != nil {
			return built{}, err
		}
		b := built{reps: s.Replications, cfg: cfg}
		for _, p := range pols {
			st, err := p.New()
			if err != nil {
				return built{}, err
			}
			b.strategies = append(b.strategies, st)
		}
		return b, nil
	}
	n := 0
	for _, k := range readmeKeys(example) {
		if k.def == "" {
			continue
		}
		n++
		absent, errAbsent := build(setLine(example, k.line, ""))
		v, _ := strconv.ParseFloat(k.def, 64)
		set, errSet := build(setLine(example, k.line, fmtNum(v, k.integer)))
		if errAbsent != nil || errSet != nil {
			// The same refusal (another key needs this one) is agreement.
			if fmt.Sprint(errAbsent) != fmt.Sprint(errSet) {
				t.Errorf("line %d %s: removed: %v; set to its README default %s: %v", k.line, k.key, errAbsent, k.def, errSet)
			}
			continue
		}
		// Defaults simnet applies to a zero field: 0 instances is one
		// instance, a zero retry backoff DefaultBackgroundRetryBackoff.
		if cfg := absent.cfg.(*simnet.Config); k.key == "instances" {
			cfg.Fleet.Instances = 1
		} else if k.key == "retry_backoff_ms" {
			for i := range cfg.Background {
				cfg.Background[i].RetryBackoff = cmp0(cfg.Background[i].RetryBackoff, simnet.DefaultBackgroundRetryBackoff)
			}
		}
		if !reflect.DeepEqual(absent, set) {
			t.Errorf("line %d %s: README says default %s, but removing it builds a different scenario than setting it", k.line, k.key, k.def)
		}
	}
	if n < 20 {
		t.Errorf("only %d keys with a default", n)
	}
}

func readmeExample(t *testing.T) string {
	t.Helper()
	_, rest, ok := strings.Cut(readFile(t, "README.md"), "## Annotated example\n\n```toml\n")
	if !ok {
		t.Fatal("README.md has no annotated example")
	}
	example, _, _ := strings.Cut(rest, "```")
	return example
}

// TestTopLevelReadmeScenario parses every TOML block of the repository's
// README.md ("Writing a scenario"): the scenario a new user copies first
// must be valid, warnings included.
func TestTopLevelReadmeScenario(t *testing.T) {
	rest := readFile(t, "../README.md")
	n := 0
	for {
		var block string
		var ok bool
		if _, rest, ok = strings.Cut(rest, "```toml\n"); !ok {
			break
		}
		if block, rest, ok = strings.Cut(rest, "```"); !ok {
			t.Fatal("README.md: unterminated ```toml block")
		}
		n++
		s, err := Parse(fmt.Sprintf("README.md toml block %d", n), []byte(block))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if w := s.Warnings(); len(w) > 0 {
			t.Errorf("README.md toml block %d warns: %v", n, w)
		}
	}
	if n == 0 {
		t.Fatal("README.md has no ```toml block")
	}
}
