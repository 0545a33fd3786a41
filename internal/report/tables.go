package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Decimal places used when writing numbers to JSON and CSV.
const (
	precMs   = 3 // latencies in ms
	precRate = 6 // rates and RU multipliers
	precS    = 6 // virtual seconds, quantiles, sweep values
)

// ciKeys are the CI95 keys, in output order.
var ciKeys = []string{"p50_ms", "p90_ms", "p99_ms", "p999_ms", "p9999_ms", "max_ms", "mean_ms", "ru_multiplier"}

// fmtNum formats v with at most prec decimals, trailing zeros removed.
// Non-finite values give "".
func fmtNum(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.ContainsRune(s, '.') {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// fmtMs formats a latency v in ms for JSON and CSV: precMs decimals (µs,
// the latency histograms' resolution), or more below 1 ms so that v keeps
// 3 significant digits (0.0044, not 0.004); trailing zeros trimmed.
func fmtMs(v float64) string {
	return fmtNum(v, msPrec(v))
}

// msPrec is the number of decimals fmtMs writes for v.
func msPrec(v float64) int {
	prec := precMs
	if a := math.Abs(v); a > 0 && a < 1 {
		prec = max(prec, 2-int(math.Floor(math.Log10(a))))
	}
	return min(prec, 17)
}

// fmtQ formats a quantile q in [0, 1] for the quantile CSV: 6 decimals,
// or more when the tail 1-q is small, so the tail keeps 3 significant
// digits (0.9999991 and 0.99999991 stay apart; trailing zeros trimmed).
func fmtQ(q float64) string {
	prec := precS
	if tail := 1 - q; tail > 0 && tail < 1 {
		prec = max(prec, int(math.Ceil(-math.Log10(tail)-1e-9))+2)
	}
	return fmtNum(q, min(prec, 17))
}

// num is a float that marshals to JSON rounded to prec decimals, or null
// when it is NaN or ±Inf; prec precMs marks a latency in ms, written as
// fmtMs writes it (more decimals below 1 ms).
type num struct {
	v    float64
	prec int
}

func (n num) MarshalJSON() ([]byte, error) {
	prec := n.prec
	if prec == precMs {
		prec = msPrec(n.v)
	}
	s := fmtNum(n.v, prec)
	if s == "" {
		return []byte("null"), nil
	}
	return []byte(s), nil
}

// ciJSON is a [low, high] pair; null when the key is missing from CI95.
type ciJSON struct {
	ok     bool
	lo, hi num
}

func (c ciJSON) MarshalJSON() ([]byte, error) {
	if !c.ok {
		return []byte("null"), nil
	}
	return json.Marshal([2]num{c.lo, c.hi})
}

type policyJSON struct {
	Policy            string           `json:"policy"`
	Ops               int64            `json:"ops"`
	EmptyReplications int              `json:"empty_replications,omitempty"`
	P50               num              `json:"p50_ms"`
	P90               num              `json:"p90_ms"`
	P99               num              `json:"p99_ms"`
	P999              num              `json:"p999_ms"`
	P9999             num              `json:"p9999_ms"`
	Max               num              `json:"max_ms"`
	Mean              num              `json:"mean_ms"`
	HedgeRate         num              `json:"hedge_rate"`
	HedgeRateLatency  num              `json:"hedge_rate_latency"`
	HedgeRateFailover num              `json:"hedge_rate_failover"`
	AlternateWinRate  num              `json:"alternate_win_rate"`
	RUMultiplier      num              `json:"ru_multiplier"`
	ErrorRate         num              `json:"error_rate"`
	TerminalStates    map[string]int64 `json:"terminal_states"`
	Counters          map[string]int64 `json:"counters,omitempty"`
	P50CI             *ciJSON          `json:"p50_ms_ci95,omitempty"`
	P90CI             *ciJSON          `json:"p90_ms_ci95,omitempty"`
	P99CI             *ciJSON          `json:"p99_ms_ci95,omitempty"`
	P999CI            *ciJSON          `json:"p999_ms_ci95,omitempty"`
	P9999CI           *ciJSON          `json:"p9999_ms_ci95,omitempty"`
	MaxCI             *ciJSON          `json:"max_ms_ci95,omitempty"`
	MeanCI            *ciJSON          `json:"mean_ms_ci95,omitempty"`
	RUMultiplierCI    *ciJSON          `json:"ru_multiplier_ci95,omitempty"`
	Replicas          []replicaJSON    `json:"replicas,omitempty"`
	Feed              *feedJSON        `json:"feed,omitempty"`
}

func ciPrec(key string) int {
	if key == "ru_multiplier" {
		return precRate
	}
	return precMs
}

func newPolicyJSON(f *Figures) policyJSON {
	ts := make(map[string]int64, len(f.TerminalStates))
	for k, v := range f.TerminalStates {
		ts[k] = v
	}
	p := policyJSON{
		Policy:            f.Policy,
		Ops:               f.Ops,
		EmptyReplications: f.EmptyReplications,
		P50:               num{f.P50, precMs},
		P90:               num{f.P90, precMs},
		P99:               num{f.P99, precMs},
		P999:              num{f.P999, precMs},
		P9999:             num{f.P9999, precMs},
		Max:               num{f.Max, precMs},
		Mean:              num{f.Mean, precMs},
		HedgeRate:         num{f.HedgeRate, precRate},
		HedgeRateLatency:  num{f.HedgeRateLatency, precRate},
		HedgeRateFailover: num{f.HedgeRateFailover, precRate},
		AlternateWinRate:  num{f.AlternateWinRate, precRate},
		RUMultiplier:      num{f.RUMultiplier, precRate},
		ErrorRate:         num{f.ErrorRate, precRate},
		TerminalStates:    ts,
		Counters:          f.Counters,
		Replicas:          replicasJSON(f.Replicas),
		Feed:              newFeedJSON(f.Feed),
	}
	if f.CI95 != nil {
		ci := func(key string) *ciJSON {
			v, ok := f.CI95[key]
			prec := ciPrec(key)
			return &ciJSON{ok: ok, lo: num{v[0], prec}, hi: num{v[1], prec}}
		}
		p.P50CI, p.P90CI, p.P99CI, p.P999CI = ci("p50_ms"), ci("p90_ms"), ci("p99_ms"), ci("p999_ms")
		p.P9999CI, p.MaxCI, p.MeanCI, p.RUMultiplierCI = ci("p9999_ms"), ci("max_ms"), ci("mean_ms"), ci("ru_multiplier")
	}
	return p
}

func policiesJSON(ps []PolicyResult) []policyJSON {
	out := make([]policyJSON, 0, len(ps))
	for i := range ps {
		out = append(out, newPolicyJSON(&ps[i].Figures))
	}
	return out
}

func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil { // Encode appends the trailing newline
		return nil, err
	}
	return buf.Bytes(), nil
}

// summaryJSON renders summary.json. A key of CI95 that is missing while
// CI95 != nil is written as null.
func summaryJSON(r *Run) ([]byte, error) {
	return marshalIndent(struct {
		Scenario     string       `json:"scenario"`
		Seed         uint64       `json:"seed"`
		Replications int          `json:"replications"`
		Instances    int          `json:"instances,omitempty"`
		DurationS    num          `json:"duration_s"`
		Policies     []policyJSON `json:"policies"`
	}{r.Scenario, r.Seed, r.Replications, fleetInstances(r.Instances), num{r.DurationS, precS}, policiesJSON(r.Policies)})
}

// fleetInstances is summary.json's "instances": the fleet size when it is
// more than one client instance, else 0 (the key is left out).
func fleetInstances(n int) int {
	if n > 1 {
		return n
	}
	return 0
}

// sweepPolicyJSON is a policy object of sweep.json: summary.json's keys
// and "label", the policy as labelled at this point (see sweepLabel).
type sweepPolicyJSON struct {
	policyJSON
	Label string `json:"label"`
}

func sweepJSON(s *Sweep) ([]byte, error) {
	type pointJSON struct {
		Value    num               `json:"value"`
		Policies []sweepPolicyJSON `json:"policies"`
	}
	pts := make([]pointJSON, 0, len(s.Points))
	for _, p := range s.Points {
		ps := make([]sweepPolicyJSON, 0, len(p.Policies))
		for i := range p.Policies {
			ps = append(ps, sweepPolicyJSON{newPolicyJSON(&p.Policies[i].Figures), sweepLabel(s, &p, &p.Policies[i])})
		}
		pts = append(pts, pointJSON{num{p.Value, precS}, ps})
	}
	return marshalIndent(struct {
		Scenario     string      `json:"scenario"`
		Param        string      `json:"param"`
		Seed         uint64      `json:"seed"`
		Replications int         `json:"replications"`
		Points       []pointJSON `json:"points"`
	}{s.Scenario, s.Param, s.Seed, s.Replications, pts})
}

// figureHeader is the CSV header of the per-policy figures.
var figureHeader = []string{
	"policy", "ops", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "p9999_ms", "max_ms", "mean_ms",
	"hedge_rate", "alternate_win_rate", "ru_multiplier", "error_rate", "terminal_states",
}

func ciHeader() []string {
	var h []string
	for _, k := range ciKeys {
		h = append(h, k+"_ci95_low", k+"_ci95_high")
	}
	return h
}

// terminalStatesCell formats terminal states as "name=count;..." sorted by name.
func terminalStatesCell(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatInt(m[k], 10)
	}
	return strings.Join(parts, ";")
}

func figureRow(f *Figures, withCI bool) []string {
	row := []string{
		f.Policy, strconv.FormatInt(f.Ops, 10),
		fmtMs(f.P50), fmtMs(f.P90), fmtMs(f.P99), fmtMs(f.P999),
		fmtMs(f.P9999), fmtMs(f.Max), fmtMs(f.Mean),
		fmtNum(f.HedgeRate, precRate), fmtNum(f.AlternateWinRate, precRate),
		fmtNum(f.RUMultiplier, precRate), fmtNum(f.ErrorRate, precRate),
		terminalStatesCell(f.TerminalStates),
	}
	if withCI {
		for _, k := range ciKeys {
			v, ok := f.CI95[k]
			if !ok {
				row = append(row, "", "")
				continue
			}
			if ciPrec(k) == precMs {
				row = append(row, fmtMs(v[0]), fmtMs(v[1]))
				continue
			}
			row = append(row, fmtNum(v[0], ciPrec(k)), fmtNum(v[1], ciPrec(k)))
		}
	}
	return row
}

func writeCSV(rows [][]string) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// summaryCSV renders summary.csv: one row per policy; terminal states as a
// single "name=count;..." cell; CI columns only when replications > 1
// (empty cells when a policy has no CI for a key); the feed_* columns
// only when a policy has feed figures.
func summaryCSV(r *Run) ([]byte, error) {
	withCI, feed := r.Replications > 1, hasFeed(r.Policies)
	header := append([]string(nil), figureHeader...)
	if withCI {
		header = append(header, ciHeader()...)
	}
	if feed {
		header = append(header, feedHeader()...)
	}
	rows := [][]string{header}
	for i := range r.Policies {
		row := figureRow(&r.Policies[i].Figures, withCI)
		if feed {
			row = append(row, feedRow(r.Policies[i].Feed)...)
		}
		rows = append(rows, row)
	}
	return writeCSV(rows)
}

// sweepCSV renders sweep.csv: value, the summary.csv columns, then
// "label", the policy as labelled at this point (see sweepLabel; after
// the figures, so the earlier columns keep their positions), then the
// feed_* columns when a policy has feed figures.
func sweepCSV(s *Sweep) ([]byte, error) {
	withCI, feed := s.Replications > 1, false
	for _, p := range s.Points {
		feed = feed || hasFeed(p.Policies)
	}
	header := append([]string{"value"}, figureHeader...)
	if withCI {
		header = append(header, ciHeader()...)
	}
	header = append(header, "label")
	if feed {
		header = append(header, feedHeader()...)
	}
	rows := [][]string{header}
	for _, p := range s.Points {
		for i := range p.Policies {
			row := append([]string{fmtNum(p.Value, precS)}, figureRow(&p.Policies[i].Figures, withCI)...)
			row = append(row, sweepLabel(s, &p, &p.Policies[i]))
			if feed {
				row = append(row, feedRow(p.Policies[i].Feed)...)
			}
			rows = append(rows, row)
		}
	}
	return writeCSV(rows)
}

func quantilesCSV(p *PolicyResult) ([]byte, error) {
	rows := [][]string{{"q", "latency_ms"}}
	for _, q := range p.Quantiles {
		rows = append(rows, []string{fmtQ(q.Q), fmtMs(q.Ms)})
	}
	return writeCSV(rows)
}

func timelineCSV(r *Run) ([]byte, error) {
	rows := [][]string{{"policy", "start_s", "end_s", "ops", "p50_ms", "p99_ms", "hedge_rate", "error_rate", "mean_threshold_ms"}}
	for _, p := range r.Policies {
		for _, w := range p.Timeline {
			rows = append(rows, []string{
				p.Policy, fmtNum(w.StartS, precS), fmtNum(w.EndS, precS), strconv.FormatInt(w.Ops, 10),
				fmtMs(w.P50Ms), fmtMs(w.P99Ms), fmtNum(w.HedgeRate, precRate),
				fmtNum(w.ErrorRate, precRate), fmtMs(w.MeanThresholdMs),
			})
		}
	}
	return writeCSV(rows)
}

// fmtMsShort formats a latency in ms for humans: 3 significant-ish digits
// (3 significant digits below 1 ms: 0.00440, not 0.00).
func fmtMsShort(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case v != 0 && math.Abs(v) < 1:
		return strconv.FormatFloat(v, 'f', min(2-int(math.Floor(math.Log10(math.Abs(v)))), 17), 64)
	case math.Abs(v) < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case math.Abs(v) < 1000:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
}

func fmtPct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(100*v, 'f', 2, 64)
}

// FormatTable writes a short aligned text table (text/tabwriter) for
// stdout, one row per entry of figs: policy, ops, p50/p99/p99.9/max latency
// in ms, hedge rate and alternate-win rate in %, RU multiplier (×) and
// error rate in %, and partition-breaker trips (Counters["breaker_trips"],
// "-" when absent). Numbers are right-aligned; non-finite values print as "-".
func FormatTable(w io.Writer, figs []Figures) error {
	width := utf8.RuneCountInString("policy")
	for i := range figs {
		width = max(width, utf8.RuneCountInString(figs[i].Policy))
	}
	// Padding the policy column to a fixed width makes it effectively
	// left-aligned under tabwriter.AlignRight; the column gap is written
	// as a prefix of each numeric cell so the first column has no indent.
	pad := func(s string) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t  ops\t  p50 ms\t  p99 ms\t  p99.9 ms\t  max ms\t  hedge %%\t  altwin %%\t  RU ×\t  err %%\t  trips\t\n", pad("policy"))
	for i := range figs {
		f := &figs[i]
		ru := "-"
		if !math.IsNaN(f.RUMultiplier) && !math.IsInf(f.RUMultiplier, 0) {
			ru = strconv.FormatFloat(f.RUMultiplier, 'f', 3, 64)
		}
		trips := "-"
		if n, ok := f.Counters["breaker_trips"]; ok {
			trips = strconv.FormatInt(n, 10)
		}
		fmt.Fprintf(tw, "%s\t  %d\t  %s\t  %s\t  %s\t  %s\t  %s\t  %s\t  %s\t  %s\t  %s\t\n",
			pad(f.Policy), f.Ops, fmtMsShort(f.P50), fmtMsShort(f.P99), fmtMsShort(f.P999), fmtMsShort(f.Max),
			fmtPct(f.HedgeRate), fmtPct(f.AlternateWinRate), ru, fmtPct(f.ErrorRate), trips)
	}
	return tw.Flush()
}

// columnLegend says what each column of a FormatTable table counts.
const columnLegend = "ops: operations that arrived (and finished), over all replications; " +
	"p50, p99, p99.9, max ms: end-to-end latency of every operation, failed ones included (a fast refusal counts low, a timeout high); " +
	"hedge: alternate sent; altwin: alternate's answer returned; RU ×: RU charged / RU returned, over the same operations as hedge " +
	"(\"-\" when they returned no RU, every charge being 0: no cost to multiply); " +
	"err: failed operations, an error (no final response: transient statuses, deadline) or a final response with status >= 400 " +
	"(429/3200, 404/0, 409; by class in summary.json counters); trips: partition-breaker trips"

// TableLegend is the legend printed under a [FormatTable] table of figs:
// what each column counts (errors: failed operations, an error or a final
// response with status >= 400; latencies: every operation, failed ones
// included), then [ReplicationNote] for reps replications (ciFile names
// the file with the intervals) and, when some replications had no
// operation, how many were left out of the means. One line, no trailing
// newline.
func TableLegend(figs []Figures, reps int, ciFile string) string {
	out := columnLegend + ReplicationNote(reps, ciFile)
	empty := 0
	for i := range figs {
		empty = max(empty, figs[i].EmptyReplications)
	}
	if empty > 0 {
		out += fmt.Sprintf("; %d of %s had no operation and are left out of the means (not averaged in as zeros)", empty, Replications(reps))
	}
	return out
}

// Replications returns "1 replication" or "N replications".
func Replications(n int) string {
	if n == 1 {
		return "1 replication"
	}
	return strconv.Itoa(n) + " replications"
}

// ReplicationNote is the footnote clause of a results table (hedgesim's
// run and sweep tables) on how its figures combine reps replications,
// with "; " in front; "" for one replication. ciFile names the file that
// holds the 95% confidence intervals (e.g. "summary.json"). The
// percentiles and the RU multiplier are means over the replications; max
// is the largest latency of any replication, not a mean (see
// internal/study.Figures).
func ReplicationNote(reps int, ciFile string) string {
	if reps <= 1 {
		return ""
	}
	return fmt.Sprintf("; p50, p99, p99.9 and RU × are means over %s (95%% CIs in %s); max is the largest latency of any replication", Replications(reps), ciFile)
}

// UnboundedCIMark marks a latency shown as mean ± half-width because its
// 95% confidence interval reaches down to zero or below (see
// LatencyCIUnbounded); UnboundedCINote explains the mark under a table.
const (
	UnboundedCIMark = "†"
	UnboundedCINote = "† mean ± half-width of the 95% CI: the interval reaches 0 ms or below (replications too few or too far apart to bound the latency from below), so it is not written as [0, high]."
)

// LatencyCIUnbounded reports whether the 95% confidence interval ci of a
// latency with mean v reaches zero or below: mean − half-width ≤ 0, the
// half-width being ci[1] − v (Student-t intervals are symmetric; the
// lower bound in ci may already be clamped at 0 by internal/study).
// Such an interval bounds the latency from above only; [0, high] would
// read as a measured lower bound of 0 ms.
func LatencyCIUnbounded(v float64, ci [2]float64) bool {
	return finite(v) && finite(ci[1]) && ci[1] > v && v-(ci[1]-v) <= 0
}

// FormatLatencyCI formats latency v (ms) with its 95% interval ci using
// format for each number: "v [low, high]", or, when the interval reaches
// zero or below (LatencyCIUnbounded), "v ± half-width†" (UnboundedCIMark;
// put UnboundedCINote under the table), e.g. "764 ± 1092†" rather than
// "764 [0.00, 1856]".
func FormatLatencyCI(v float64, ci [2]float64, format func(float64) string) string {
	if LatencyCIUnbounded(v, ci) {
		return format(v) + " ± " + format(ci[1]-v) + UnboundedCIMark
	}
	return format(v) + " [" + format(ci[0]) + ", " + format(ci[1]) + "]"
}
