// Package report writes the output files of a hedgesim run (or parameter
// sweep) into an output directory: JSON and CSV summaries, per-policy
// quantile tables, a windowed timeline and SVG charts (PNG on request).
//
// The package only formats results that were computed elsewhere; it does not
// import any other hedgelab package.
//
// # Determinism
//
// The same input always produces byte-identical files: no timestamps are
// written, maps are emitted in sorted key order, floats are rounded to a
// fixed number of decimals (latencies in ms to 3 decimals, rates and RU
// multipliers to 6) and chart colours/dash patterns come from a fixed
// palette indexed by the policy's position in the input.
//
// # Non-finite values
//
// NaN and ±Inf never reach an output file as such: they are written as JSON
// null, as an empty CSV cell, as "-" in [FormatTable], and are left out of
// charts.
//
// # Empty inputs
//
// Nothing panics on empty inputs. A [Run] with zero policies, policies with
// an empty CCDF/timeline or all-zero figures still produces the full file
// set: the summaries contain only a header (CSV) or an empty "policies"
// array (JSON), and every chart is rendered as a valid image with fixed
// default axes and a centred "no data" note. This keeps the list of files a
// run produces independent of the data, with one exception: replicas.csv
// and the replicas chart exist only for runs that model replica capacity
// (Figures.Replicas set), so the output of every other run is unchanged.
//
// # Atomicity
//
// Every file goes through [WriteFileAtomic]: an interrupted run never leaves a
// truncated file behind (a file is either the old complete version or the new
// complete version). The set of files as a whole is not replaced atomically.
// Files from an earlier run in the same directory that the current run does
// not produce (e.g. quantiles of a policy that was removed) are left alone.
package report

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Figures are one policy's headline numbers. Latencies are in virtual
// milliseconds; rates are fractions in [0, 1].
type Figures struct {
	// Policy is the hedging threshold policy name, e.g. "p99_dynamic".
	Policy string
	// Ops is the number of operations (requests) issued by callers.
	Ops int64
	// EmptyReplications counts the replications in which no operation
	// arrived; they are left out of the means and confidence intervals
	// (summary.json "empty_replications", left out when 0).
	EmptyReplications int
	// P50 .. P9999 are latency percentiles in ms; Max and Mean are the
	// maximum and mean latency in ms.
	P50, P90, P99, P999, P9999, Max, Mean float64
	// HedgeRate is the fraction of ops whose alternate was spawned:
	// HedgeRateLatency (sent on the threshold) plus HedgeRateFailover (sent
	// on a region-changing result of the primary: 503, 404/1002, 429/3092,
	// transport error; the spawn cause of spec §6.5 #9).
	HedgeRate, HedgeRateLatency, HedgeRateFailover float64
	// AlternateWinRate is the fraction of ops with terminal state AlternateWon.
	AlternateWinRate float64
	// RUMultiplier is RU charged across all attempts divided by the RU of
	// responses returned to callers (dimensionless, ≥ 1 in practice).
	RUMultiplier float64
	// ErrorRate is the fraction of ops that failed: returned an error (no
	// final response) or a final response with status >= 400 (a 429/3200
	// throttle, a 404/0, a 409). Counters["errors"] and
	// Counters["final_error_responses"] (and "@<status>" per status) split
	// it by class.
	ErrorRate float64
	// TerminalStates maps a terminal state name to its count of ops
	// ("none" for ops with no hedging strategy active).
	TerminalStates map[string]int64
	// CI95 holds 95% confidence intervals [low, high] when replications > 1,
	// keyed by the JSON figure name without the suffix: "p50_ms", "p90_ms",
	// "p99_ms", "p999_ms", "p9999_ms", "max_ms", "mean_ms" (all in ms) and
	// "ru_multiplier" (dimensionless). Nil otherwise. A latency's low
	// end is clamped at 0 by internal/study; the interval is mean ±
	// (high − mean), so a low end of 0 means it reached 0 or below (see
	// LatencyCIUnbounded, FormatLatencyCI).
	CI95 map[string][2]float64
	// Counters are extra event counts written to summary.json under
	// "counters" (omitted when nil): attempts, breaker_trips,
	// hub_header_attempts, local_throttles, removed_from_queue, and per
	// replica attempts@<replica> and answers@<replica> (the regions used).
	Counters map[string]int64
	// Replicas holds the per-replica capacity figures, one per replica in
	// configuration order, when the run models replica capacity (servers,
	// queue limits, cancel modes or background load); nil otherwise, and
	// then summary.json has no "replicas" key and no replicas.csv or
	// replicas chart is written.
	Replicas []ReplicaFigures
	// Feed holds the Phase 2 figures of a run with feeds (queries,
	// ReadMany calls or change-feed pollers); nil otherwise, and then
	// summary.json has no "feed" key and summary.csv no feed_* columns.
	Feed *FeedFigures
}

// Point is one point of a curve; units depend on the curve (for a CCDF,
// X is latency in ms and Y is the probability P(T > X)).
type Point struct{ X, Y float64 }

// QuantileRow is one row of a quantile table: quantile Q in [0, 1] and the
// latency Ms at that quantile, in milliseconds.
type QuantileRow struct{ Q, Ms float64 }

// Window is one bucket of the timeline (virtual time).
type Window struct {
	// StartS and EndS bound the window, in seconds of virtual time.
	StartS, EndS float64
	// Ops is the number of ops that completed in the window.
	Ops int64
	// P50Ms and P99Ms are the windowed latency percentiles in ms.
	P50Ms, P99Ms float64
	// HedgeRate is the fraction of the window's ops whose alternate was spawned.
	HedgeRate float64
	// ErrorRate is the fraction of the window's ops that failed (as
	// Figures.ErrorRate).
	ErrorRate float64
	// MeanThresholdMs is the mean hedging threshold (ms) the policy chose for
	// ops in this window (0 if no hedging).
	MeanThresholdMs float64
}

// PolicyResult is everything reported for one policy of a run.
type PolicyResult struct {
	Figures
	// CCDF is the latency complementary CDF: X = latency in ms,
	// Y = P(T > X). Already downsampled (≤ ~400 points); its last point
	// is the maximum latency (Figures.Max) at Y = 1/Ops, the CCDF's value
	// just below the maximum. Points with X ≤ 0 or Y ≤ 0 are dropped from
	// the (log-log) chart.
	CCDF []Point
	// Quantiles is the quantile table, e.g. q = 0.5, 0.9, 0.99, 0.999,
	// 0.9999 and a fine grid, ending with q = 1 at the maximum
	// (Figures.Max); latencies in ms.
	Quantiles []QuantileRow
	// Timeline is the windowed view over virtual time.
	Timeline []Window
}

// Episode is a labelled span of virtual time (e.g. a region outage) that is
// shaded on the timeline chart. StartS and EndS are in seconds.
type Episode struct {
	Label        string
	StartS, EndS float64
}

// Run is the complete result of one scenario run.
type Run struct {
	// Scenario is the scenario name (used in chart titles).
	Scenario string
	// Description is a free-text description of the scenario. It is not
	// written to any file (summary.json has a fixed key set).
	Description string
	// Seed is the base random seed of the run.
	Seed uint64
	// Replications is the number of independent replications (≥ 1).
	Replications int
	// Instances is the number of client instances of the run's fleet
	// (simnet.Fleet); 0 or 1 is one client. summary.json has an
	// "instances" key only when it is more than 1.
	Instances int
	// DurationS is the run's actual length in seconds of virtual time
	// (how long operations arrived; less than the scenario's duration_s
	// when max_ops ended the run first). It is summary.json's duration_s
	// and the end of the time charts' X axis.
	DurationS float64
	// Policies holds one result per policy, in scenario order.
	Policies []PolicyResult
	// Episodes are shaded on the timeline chart.
	Episodes []Episode
	// HedgeUnits are the points of the hedge-unit chart (spec §17 Q9) of a
	// run with feed operations; nil otherwise, and then neither
	// hedge_units.csv nor the chart is written. HedgeUnitConfigured is the
	// scenario's own unit ("page" or "operation", the one its other
	// figures have); the legend marks it.
	HedgeUnits          []HedgeUnit
	HedgeUnitConfigured string
}

// SweepPoint is one value of the swept parameter together with the full set
// of policy results obtained at that value. Value is in the parameter's own
// unit (see [Sweep.Param]).
type SweepPoint struct {
	Value    float64
	Policies []PolicyResult
}

// Sweep is a parameter sweep: one parameter (Param, whose name should carry
// its unit, e.g. "rtt_ms") is varied and each point is a full set of policy
// results at that value.
type Sweep struct {
	// Scenario is the scenario name (used in chart titles).
	Scenario string
	// Param is the swept parameter's key path (e.g.
	// "policies.static-100ms.threshold_ms"). Chart titles show it as is;
	// the X axis title of sweep_p99 is its last element with the unit
	// suffix written as a unit ("threshold (ms)").
	Param string
	// Seed is the base random seed.
	Seed uint64
	// Replications is the number of replications per point (CI columns in
	// sweep.csv appear when > 1).
	Replications int
	// Points are the parameter values; charts sort them by Value, the CSV
	// and JSON keep the given order.
	Points []SweepPoint
}

// Options chooses the optional outputs of [WriteRun] and [WriteSweep].
// The zero value writes every chart as SVG only: the vector format that
// code hosts render and that stays small under version control.
type Options struct {
	// PNG also writes each chart as a PNG (ChartWidth x ChartHeight at
	// PNGDPI, 1200x750 px) beside its SVG, e.g. for slides. PNGs are ~4x
	// larger than the SVGs and differ wholly between two versions of a
	// chart, so they are not meant to be committed.
	PNG bool
}

// formats returns the chart formats o asks for, SVG first.
func (o Options) formats() []string {
	if o.PNG {
		return []string{"svg", "png"}
	}
	return []string{"svg"}
}

// output is one rendered file, not yet written.
type output struct {
	name string
	data []byte
}

// WriteRun writes every output file of r into dir (created with MkdirAll)
// and returns the paths written, sorted. Files:
//
//	summary.json, summary.csv, timeline.csv, quantiles_<slug>.csv (one per
//	policy, see [Slug]), and ccdf, percentiles, cost, timeline, threshold
//	and hedge_rate charts as .svg (576x360 pt) and, with opt.PNG, as
//	.png (8x5 in at 150 DPI = 1200x750 px); and,
//	only when a policy has replica figures (Figures.Replicas, a run that
//	models replica capacity), replicas.csv and the replicas chart; and,
//	only when Run.HedgeUnits is set (a run with feed operations),
//	hedge_units.csv and the hedge_units chart.
//
// Format details:
//   - summary.json: {"scenario","seed","replications","duration_s","policies"},
//     with "instances" after "replications" for a fleet of more than one;
//     each policy has exactly the keys policy, ops, empty_replications
//     (only when > 0), p50_ms … mean_ms (ms, 3 decimals, more below 1 ms
//     so that 3 significant digits remain), hedge_rate,
//     alternate_win_rate, ru_multiplier, error_rate (failed operations;
//     6 decimals), terminal_states (object, keys sorted; {} when nil) and,
//     only when Figures.CI95 != nil, all eight <key>_ci95 pairs [low, high]
//     (null for a key missing from CI95), and "replicas" only when
//     Figures.Replicas != nil: one object per replica with replica,
//     servers, queue_limit, utilisation (6 decimals), queue_p99,
//     refused_client, refused_background, attempts_served,
//     aborted_in_service, background_ops, background_p99_ms and
//     background_p999_ms (ms, 3 decimals). Non-finite numbers are null.
//   - replicas.csv: policy, replica, start_s, end_s, utilisation per
//     timeline window of each replica with servers.
//   - replicas chart: utilisation (%) per window of the replicas with
//     servers, colour per policy, dash pattern per replica, episodes
//     shaded, laid out like the time charts.
//   - summary.csv: the same figures, terminal_states as one
//     "name=count;…" cell (sorted), then <key>_ci95_low/_high columns only
//     when Replications > 1 (empty cells where a policy has no CI).
//   - quantiles_<slug>.csv: q, latency_ms. timeline.csv: policy, start_s,
//     end_s, ops, p50_ms, p99_ms, hedge_rate, error_rate, mean_threshold_ms.
//   - charts: ccdf (log-log, points with X ≤ 0 or Y ≤ 0 dropped; the
//     probability axis ends at 1 and spans at least a decade),
//     percentiles (dots p50/p99/p99.9 per policy, log Y when the values
//     span more than one decade, else linear from 0, as on every latency
//     axis), cost (p99 ● and p99.9 △ vs RU multiplier at their true
//     values, labelled by policy, 95% CI whiskers when known; policies on
//     the same spot drawn concentrically, the first largest, with one
//     label block and a legend note "= FIRST", or "≈ FIRST" when only
//     close), threshold (mean threshold per
//     window, log Y; policies that never chose one are left out),
//     hedge_rate (percent per window), timeline (windowed p99, log Y;
//     windows with no ops or p99 ≤ 0 break the line; episodes shaded,
//     their boundaries marked). The three time charts state the window
//     width in the title, span the run's length (Run.DurationS) and share
//     the data-area width so they line up; every line is drawn at its
//     values, and lines that coincide (e.g. several policies at one
//     threshold clamp) are told apart by dash pattern, staggered markers
//     and a legend note ("= FIRST", "≈ FIRST" when they coincide in only
//     some windows). Axes fit the data; log axes
//     use one number format. Legends are drawn in a strip right of the
//     plot so they never cover data.
//
// All content is rendered in memory first, so a rendering error writes
// nothing; the files are then written into a temporary directory beside
// dir, which replaces dir only when every file is written: dir holds
// either its previous content or exactly this run's files (an earlier
// run's files that this run does not produce are removed with it). An
// existing dir must hold only files hedgesim writes ([CheckOutputDir]), so
// a user's other files are never deleted. Errors name the offending file
// or directory once; on error nothing is written.
func WriteRun(dir string, r *Run, opt Options) ([]string, error) {
	if r == nil {
		return nil, errors.New("report: WriteRun: nil *Run")
	}
	outs, err := renderRun(r, opt)
	if err != nil {
		return nil, err
	}
	return writeAll(dir, outs)
}

// WriteSweep writes the output files of a parameter sweep into dir (created
// with MkdirAll) and returns the paths written, sorted: sweep.csv (value,
// then the summary.csv columns, then label), sweep.json ({"scenario",
// "param","seed","replications","points":[{"value","policies":[…]}]},
// policy objects as in summary.json plus "label") and the charts
// sweep_p99 (p99 solid/● and p99.9 dashed/△ vs the parameter value, one
// colour per policy) and sweep_cost (p99 vs RU multiplier, one curve per
// policy, points labelled with the parameter value, 95% CI whiskers when
// known, the RU axis at least 0.02 wide) as .svg (and .png with opt.PNG,
// see [Options]); a linear latency axis starts at 0, and series on one
// spot are drawn concentrically with a legend note. Policies are
// matched across points by name. When Param is a policy's parameter
// ("policies.NAME.KEY", or "policies.INDEX.KEY" with one policy per
// point) that policy is labelled "KEY=VALUE" (e.g. "threshold_ms=50")
// in label and, as "KEY=FIRST…LAST", in the legends, since its name
// states the value it was defined with; other policies by their name.
// Error handling and atomicity are as for [WriteRun].
func WriteSweep(dir string, s *Sweep, opt Options) ([]string, error) {
	if s == nil {
		return nil, errors.New("report: WriteSweep: nil *Sweep")
	}
	outs, err := renderSweep(s, opt)
	if err != nil {
		return nil, err
	}
	return writeAll(dir, outs)
}

// renderer accumulates rendered files; the first error sticks. Charts
// are rendered in the formats of opt.
type renderer struct {
	opt  Options
	outs []output
	err  error
}

func (r *renderer) add(name string, data []byte, err error) {
	if r.err != nil {
		return
	}
	if err != nil {
		r.err = fmt.Errorf("report: render %s: %w", name, err)
		return
	}
	r.outs = append(r.outs, output{name, data})
}

// charts renders each chart built by build in the formats r.opt asks for.
func (r *renderer) charts(bases []string, build func(base string) *chart) {
	for _, base := range bases {
		for _, format := range r.opt.formats() {
			data, err := renderChart(func() *chart { return build(base) }, format)
			r.add(base+"."+format, data, err)
		}
	}
}

func (r *renderer) result() ([]output, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.outs, nil
}

// runCharts are the charts of a run, by file base name.
var runCharts = map[string]func(*Run) *chart{
	"ccdf": ccdfChart, "percentiles": percentilesChart, "cost": costChart,
	"timeline": timelineChart, "threshold": thresholdChart, "hedge_rate": hedgeRateChart,
}

func renderRun(run *Run, opt Options) ([]output, error) {
	r := renderer{opt: opt}
	data, err := summaryJSON(run)
	r.add("summary.json", data, err)
	data, err = summaryCSV(run)
	r.add("summary.csv", data, err)
	data, err = timelineCSV(run)
	r.add("timeline.csv", data, err)
	slugs := uniqueSlugs(run.Policies)
	for i := range run.Policies {
		data, err := quantilesCSV(&run.Policies[i])
		r.add("quantiles_"+slugs[i]+".csv", data, err)
	}
	r.charts([]string{"ccdf", "percentiles", "cost", "timeline", "threshold", "hedge_rate"},
		func(base string) *chart { return runCharts[base](run) })
	if hasReplicas(run) {
		data, err := replicasCSV(run)
		r.add("replicas.csv", data, err)
		r.charts([]string{"replicas"}, func(string) *chart { return replicasChart(run) })
	}
	if len(run.HedgeUnits) > 0 {
		data, err := hedgeUnitsCSV(run)
		r.add("hedge_units.csv", data, err)
		r.charts([]string{"hedge_units"}, func(string) *chart { return hedgeUnitsChart(run) })
	}
	return r.result()
}

// sweepCharts are the charts of a sweep, by file base name.
var sweepCharts = map[string]func(*Sweep) *chart{"sweep_p99": sweepP99Chart, "sweep_cost": sweepCostChart}

func renderSweep(s *Sweep, opt Options) ([]output, error) {
	r := renderer{opt: opt}
	data, err := sweepJSON(s)
	r.add("sweep.json", data, err)
	data, err = sweepCSV(s)
	r.add("sweep.csv", data, err)
	r.charts([]string{"sweep_p99", "sweep_cost"}, func(base string) *chart { return sweepCharts[base](s) })
	return r.result()
}

func writeAll(dir string, outs []output) ([]string, error) {
	paths, err := writeDir(dir, outs)
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	return paths, nil
}

// Slug returns the file-name form of a policy name as used in
// quantiles_<slug>.csv: the name lower-cased with every character other
// than ASCII a-z and 0-9 replaced by '-'. An empty name gives "policy".
// For example "p99_dynamic" → "p99-dynamic", "static-200ms" → "static-200ms".
// [WriteRun] appends "-2", "-3", ... (in input order) when two policies of
// the same run map to the same slug.
func Slug(policy string) string {
	if policy == "" {
		return "policy"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(policy) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// uniqueSlugs returns the slug of each policy, disambiguated in input order.
func uniqueSlugs(ps []PolicyResult) []string {
	used := make(map[string]bool, len(ps))
	out := make([]string, len(ps))
	for i := range ps {
		base := Slug(ps[i].Policy)
		s := base
		for n := 2; used[s]; n++ {
			s = fmt.Sprintf("%s-%d", base, n)
		}
		used[s] = true
		out[i] = s
	}
	return out
}
