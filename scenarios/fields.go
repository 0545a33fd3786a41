package scenarios

// This file holds the one declaration of every scalar key's range: the
// builder checks each value against it, and the scenario space
// (space.go) may only narrow it, so what the generator draws is what the
// validator accepts by construction (issue 24).

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"hedgelab/simnet"
)

// fieldKind is how a key's value is written and checked.
type fieldKind uint8

const (
	kInt     fieldKind = iota // an integer
	kFloat                    // a number
	kSeconds                  // a time in seconds: >= 0 (or > 0), at most maxSeconds
	kMillis                   // a time in milliseconds: >= 0 (or > 0), at most maxMillis
	kEnum                     // a string, one of values
	kBool                     // true or false
)

// rangeStyle selects the wording of a number's range error.
type rangeStyle uint8

const (
	sayBetween   rangeStyle = iota // "must be between lo and hi, got v"
	sayExclusive                   // "must be between lo and hi (exclusive), got v"
	sayInterval                    // "must be in [lo, hi], got v" (brackets by openness)
)

// field declares one scalar key of the schema: the range the validator
// accepts (and the generator may draw from), how its error is worded and,
// for an enum, its values.
type field struct {
	kind fieldKind
	// lo and hi bound the value; hi = +Inf: no upper bound. loOpen and
	// hiOpen exclude the bound itself.
	lo, hi         float64
	loOpen, hiOpen bool
	style          rangeStyle
	// zeroOK: 0 is accepted outside [lo, hi] (it means the default).
	zeroOK bool
	// prefix and note are added to a range error: "<prefix>must be > 0
	// <note>, got v".
	prefix, note string
	// unit follows the interval of a sayInterval error ("(0, 86400] s").
	unit string
	// values are an enum's accepted strings, in the order errors list them.
	values []string
}

// intField declares an integer key in [lo, hi].
func intField(lo, hi float64) field { return field{kind: kInt, lo: lo, hi: hi} }

// Declarations shared by many keys.
var (
	fCount    = intField(0, maxCount)                                                                 // servers, clients, partitions, queue_limit
	fInt32    = intField(0, math.MaxInt32)                                                            // substatuses, counts that take an int32
	fStatus   = field{kind: kInt, lo: simnet.MinErrorStatus, hi: simnet.MaxErrorStatus, zeroOK: true} // 0 = 503
	fUnit     = field{kind: kFloat, lo: 0, hi: 1}                                                     // a share or probability
	fOpenUnit = field{kind: kFloat, lo: 0, hi: 1, loOpen: true, hiOpen: true, style: sayExclusive}
	fNonNeg   = field{kind: kFloat, lo: 0, hi: math.Inf(1)}
	fPositive = field{kind: kFloat, lo: 0, hi: math.Inf(1), loOpen: true}
	fSecs     = field{kind: kSeconds, lo: 0, hi: maxSeconds}
	fPosSecs  = field{kind: kSeconds, lo: 0, hi: maxSeconds, loOpen: true}
	fMs       = field{kind: kMillis, lo: 0, hi: maxMillis}
	fPosMs    = field{kind: kMillis, lo: 0, hi: maxMillis, loOpen: true}
	fLeaves   = intField(0, simnet.MaxFeedLeaves)
	fBool     = field{kind: kBool}
	// fCharge is an RU charge: at most simnet.MaxRequestCharge, so no sum
	// of charges overflows.
	fCharge = field{kind: kFloat, lo: 0, hi: simnet.MaxRequestCharge, note: " RU (simnet.MaxRequestCharge)"}
)

// fields is the one table of scalar keys, by schema path: the dotted key
// as errors name it, with array elements and map keys left out
// ("replicas.servers", "network.rtt_ms", "ru"). A key whose range depends
// on its policy type is qualified by the type
// ("policies.backup_requests.hedge_budget_burst"). Ranges that depend on
// other keys (fan_out <= partitions, end_s > start_s) are the builder's
// cross-checks; the generator keeps them by construction.
var fields = map[string]field{
	"seed":              {kind: kInt, lo: 0, hi: math.Inf(1)},
	"duration_s":        fSecs, // > 0 unless max_ops ends the run
	"max_ops":           {kind: kInt, lo: 0, hi: math.Inf(1)},
	"replications":      {kind: kInt, lo: 1, hi: math.Inf(1)},
	"timeline_window_s": fPosSecs,

	"client.request_timeout_ms":              fMs,
	"client.operation_timeout_ms":            fMs,
	"client.consecutive_hedge_win_threshold": fInt32,
	"client.probe_interval_s":                fSecs,
	"client.hedge_win_min_span_ms":           fMs, // negative = count only
	"client.unavailable_for_s":               fSecs,
	"client.unavailable_after":               intField(0, 1000),
	"client.phase":                           {kind: kInt, lo: 1, hi: 3, zeroOK: true},
	"client.retry_max_attempts":              intField(0, 100),
	"client.retry_throttle_backoff_ms":       fMs,

	"account.multi_master":       fBool,
	"account.consistency":        {kind: kEnum, values: consistencyValues()},
	"account.staleness_bound_ms": fPosMs,

	"replicas.servers":         fCount,
	"replicas.queue_limit":     fCount,
	"replicas.overflow_status": {kind: kEnum, values: []string{"503", "429/3200", "408"}},
	"replicas.cancel":          {kind: kEnum, values: []string{"queued", "in_service", "none", "on_start"}},

	"network.same_region_rtt_ms": fMs,
	"network.rtt_ms":             fMs,
	"network.replication_lag_ms": fMs,

	"episodes.start_s":        fSecs,
	"episodes.end_s":          fSecs,
	"episodes.ramp_up_s":      fSecs,
	"episodes.ramp_down_s":    fSecs,
	"episodes.factor":         fNonNeg,
	"episodes.add_ms":         fMs,
	"episodes.fraction":       fUnit,
	"episodes.fail_rate":      fUnit,
	"episodes.fail_status":    fStatus,
	"episodes.fail_substatus": fInt32,

	"faults.status":             fStatus,
	"faults.substatus":          fInt32,
	"faults.probability":        fUnit,
	"faults.start_s":            fSecs,
	"faults.end_s":              fSecs,
	"faults.latency_ms":         fMs,
	"faults.first_attempt_only": fBool,

	"background.rate_per_s":       {kind: kFloat, lo: 0, hi: math.Inf(1), loOpen: true, note: " (requests per second at each targeted replica)"},
	"background.start_s":          fSecs,
	"background.end_s":            fSecs,
	"background.retries":          intField(0, simnet.MaxBackgroundRetries),
	"background.retry_backoff_ms": fPosMs,

	"workload.rate_per_s":              fNonNeg,
	"workload.clients":                 fCount,
	"workload.mix":                     {kind: kFloat, lo: 0, hi: math.Inf(1), loOpen: true, prefix: "weight "},
	"workload.partitions":              fCount,
	"workload.zipf_s":                  {kind: kFloat, lo: 1, hi: math.Inf(1), loOpen: true, zeroOK: true},
	"workload.exclude_fraction":        fUnit,
	"workload.disabled_fraction":       fUnit,
	"workload.rate_changes.at_s":       fSecs,
	"workload.rate_changes.ramp_s":     fSecs,
	"workload.rate_changes.rate_per_s": fNonNeg,

	"ru":                                          fCharge,
	"ru_budget.ru_per_s":                          fPositive,
	"ru_budget.burst":                             fNonNeg,
	"throughput_control.ru_per_s":                 fPositive,
	"throughput_control.burst":                    fNonNeg,
	"fleet.instances":                             intField(1, simnet.MaxInstances),
	"fleet.assignment":                            {kind: kEnum, values: []string{"uniform", "partition"}},
	"policies.type":                               {kind: kEnum}, // values: policyTypes (PolicyTypes)
	"policies.threshold_ms":                       fPosMs,
	"policies.quantile":                           fOpenUnit,
	"policies.window_s":                           fPosSecs,
	"policies.buckets":                            intField(1, 1000),
	"policies.min_ms":                             fPosMs,
	"policies.max_ms":                             fPosMs,
	"policies.initial_ms":                         fPosMs,
	"policies.min_samples":                        intField(1, math.MaxInt32),
	"policies.refresh_s":                          fPosSecs,
	"policies.relative_accuracy":                  fOpenUnit,
	"policies.preset":                             {kind: kEnum, values: []string{presetTPSValue}},
	"policies.rounding":                           {kind: kEnum, values: sortedKeys(roundingOpts)},
	"policies.thin_window":                        {kind: kEnum, values: sortedKeys(thinOpts)},
	"policies.warmup":                             {kind: kEnum, values: sortedKeys(warmupOpts)},
	"policies.censored":                           {kind: kEnum, values: sortedKeys(censorOpts)},
	"policies.ceiling":                            {kind: kEnum, values: sortedKeys(ceilingOpts)},
	"policies.ceiling_factor":                     {kind: kFloat, lo: 1, hi: 1e6, style: sayInterval},
	"policies.cap_ms":                             fPosMs,
	"policies.max_extra_load":                     fOpenUnit,
	"policies.min_backups_per_s":                  {kind: kFloat, lo: 0, hi: 1e6, style: sayInterval},
	"policies.max_tokens":                         {kind: kFloat, lo: 2, hi: 1000, style: sayInterval},
	"policies.token_ratio":                        {kind: kFloat, lo: 0, hi: 1, loOpen: true, style: sayInterval},
	"policies.hedge_budget":                       {kind: kFloat, lo: 0, hi: 1, loOpen: true, style: sayInterval},
	"policies.hedge_budget_burst":                 {kind: kFloat, lo: 1, hi: 1e9, style: sayInterval}, // a hedge needs a whole token (found by hedgesim fuzz: 0.5 failed every run)
	"policies.hedge_budget_burst_s":               {kind: kFloat, lo: 0, hi: 86400, loOpen: true, style: sayInterval, unit: " s"},
	"policies.backup_requests.hedge_budget_burst": {kind: kFloat, lo: 1, hi: 1e9, style: sayInterval},
	"policies.hedge_budget_charge_failover":       fBool,
	"policies.hedge_budget_debt":                  fBool,

	"feed.pages":              intField(1, simnet.MaxFeedPages), // and <= max_pages
	"feed.max_pages":          intField(0, simnet.MaxFeedPages),
	"feed.items_per_page":     intField(0, simnet.MaxFeedItemsPerPage),
	"feed.ru_cover":           fCharge,
	"feed.ru_per_item":        fCharge,
	"feed.fan_out":            fLeaves, // and <= min(partitions, max_fan_out)
	"feed.max_concurrency":    fLeaves,
	"feed.max_fan_out":        fLeaves,
	"feed.read_many_items":    intField(0, simnet.MaxFeedItems),
	"feed.query_continuation": {kind: kEnum, values: []string{"portable", "region_affine"}},
	"feed.gate_capacity":      fLeaves,
	"feed.hedge_unit":         {kind: kEnum, values: []string{"page", "operation"}},
	"feed.affinity":           {kind: kEnum, values: []string{"none", "pin_after_hedge_win", "pin_always", "breaker_driven"}},

	"feed.change_feed.pollers":          intField(0, simnet.MaxPollers),
	"feed.change_feed.poll_interval_ms": fMs, // >= 1 with pollers
	"feed.change_feed.scope":            {kind: kEnum, values: []string{"global", "region_local"}},
	"feed.change_feed.region_offset":    {kind: kInt, lo: 0, hi: simnet.MaxRegionOffset, note: " (simnet.MaxRegionOffset: any offset beyond the commit log acts alike)"},
	"feed.change_feed.on_304":           {kind: kEnum, values: []string{"request", "server_current"}},
	"feed.change_feed.continuation":     {kind: kEnum, values: []string{"portable", "region_affine"}},

	"feed.setup.collection":        fBool,
	"feed.setup.pk_ranges":         fBool,
	"feed.setup.query_plan":        fBool,
	"feed.setup.metadata_budget":   fLeaves,
	"feed.setup.metadata_lag_ms":   fMs,
	"feed.setup.metadata_choice":   {kind: kEnum, values: []string{"fastest", "latest"}},
	"feed.setup.metadata_grace_ms": fMs,
	"feed.setup.events.at_s":       fSecs,
	"feed.setup.events.kind":       {kind: kEnum, values: []string{"split", "recreate"}},

	"lag.sigma":               {kind: kFloat, lo: 0, hi: simnet.MaxLagSigma},
	"lag.episodes.start_s":    fSecs,
	"lag.episodes.end_s":      fSecs,
	"lag.episodes.lag_ms":     fMs,
	"lag.episodes.partitions": intField(0, maxCount), // and < workload.partitions
}

// consistencyValues lists the consistency levels by their scenario names.
func consistencyValues() []string {
	var out []string
	for c := simnet.Consistency(0); ; c++ {
		n := c.String()
		if strings.HasPrefix(n, "Consistency(") {
			return out
		}
		out = append(out, n)
	}
}

// fieldOf returns the declaration of key; a key missing from the table is
// a programming error.
func fieldOf(key string) field {
	f, ok := fields[key]
	if !ok {
		panic("scenarios: no field declaration for " + key)
	}
	return f
}

// fmtBound writes a range bound as the README does: 1e6, not 1e+06
// (integers in full).
func (f field) fmtBound(v float64) string {
	if f.kind == kInt {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if v >= 1e5 && v == math.Round(v) {
		if e := math.Log10(v); e == math.Round(e) {
			return "1e" + strconv.Itoa(int(e))
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// in reports whether v is in f's range.
func (f field) in(v float64) bool {
	if f.zeroOK && v == 0 {
		return true
	}
	if v < f.lo || f.loOpen && v == f.lo || v > f.hi || f.hiOpen && v == f.hi {
		return false
	}
	return !math.IsNaN(v)
}

// rangeMsg words f's range error for the value v (written as got).
func (f field) rangeMsg(got string) string {
	var r string
	switch {
	case math.IsInf(f.hi, 1) && f.loOpen:
		r = "must be > " + f.fmtBound(f.lo)
	case math.IsInf(f.hi, 1):
		r = "must be >= " + f.fmtBound(f.lo)
	case f.style == sayInterval:
		open, shut := "[", "]"
		if f.loOpen {
			open = "("
		}
		if f.hiOpen {
			shut = ")"
		}
		r = "must be in " + open + f.fmtBound(f.lo) + ", " + f.fmtBound(f.hi) + shut + f.unit
	case f.style == sayExclusive:
		r = "must be between " + f.fmtBound(f.lo) + " and " + f.fmtBound(f.hi) + " (exclusive)"
	default:
		r = "must be between " + f.fmtBound(f.lo) + " and " + f.fmtBound(f.hi)
	}
	return f.prefix + r + f.note + ", got " + got
}

// CheckValue reports whether v is in the range the validator accepts for
// the scalar key (a schema path as errors name it, such as
// "workload.partitions" or "replicas.queue_limit"; see the fields table
// in fields.go): nil when it is, else an error "key: must be ..., got v"
// worded as the validator words it. An unknown key is an error. Tools
// that write a scenario (calibrate's flags) check their input with it, so
// a range is declared once.
func CheckValue(key string, v float64) error {
	f, ok := fields[key]
	if !ok || f.kind == kEnum || f.kind == kBool {
		return fmt.Errorf("scenarios: %q is not a numeric key of the schema", key)
	}
	if f.in(v) && (f.kind != kInt || v == math.Trunc(v)) {
		return nil
	}
	got := strconv.FormatFloat(v, 'g', -1, 64)
	if f.kind == kInt && v == math.Trunc(v) {
		got = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Errorf("%s: %s", key, f.rangeMsg(got))
}

// num checks the number v of key at p against its declaration and reports
// whether it is in range.
func (b *builder) num(p fpath, key string, v float64) bool {
	f := fieldOf(key)
	if f.in(v) {
		return true
	}
	b.fail(p, "%s", f.rangeMsg(strconv.FormatFloat(v, 'g', -1, 64)))
	return false
}

// integer checks the integer v of key at p against its declaration and
// reports whether it is in range.
func (b *builder) integer(p fpath, key string, v int64) bool {
	f := fieldOf(key)
	if f.in(float64(v)) {
		return true
	}
	b.fail(p, "%s", f.rangeMsg(strconv.FormatInt(v, 10)))
	return false
}

// time checks the time value v of key at p (kSeconds or kMillis) and
// returns it as a Duration (0 after an error). A positive value below 1 ns
// is an error: truncated, it would read as 0 (unset, for a timeout).
func (b *builder) time(p fpath, key string, v float64) time.Duration {
	f := fieldOf(key)
	unit := time.Second
	if f.kind == kMillis {
		unit = time.Millisecond
	}
	if f.loOpen {
		return b.posDur(p, v, unit)
	}
	m := b.n
	d := b.dur(p, v, unit)
	if d == 0 && v > 0 && b.n == m {
		// Truncated to 0, a positive time would read as 0, which for
		// timeouts means unset: the opposite of what was written.
		b.fail(p, "must be 0 or at least 1 ns, got %g", v)
	}
	return d
}

// enum checks the string v of key at p against its values and reports
// whether it is one. The error is "must be A, B or C, got "v"" (quoted
// names when quote is set), or, with noun, "unknown <noun> "v" (want ...)".
func (b *builder) enum(p fpath, key, v, noun string, quote bool) bool {
	f := fieldOf(key)
	if slices.Contains(f.values, v) {
		return true
	}
	names := slices.Clone(f.values)
	if quote {
		for i, n := range names {
			names[i] = strconv.Quote(n)
		}
	}
	list := names[0]
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	if noun != "" {
		b.fail(p, "unknown %s %q (want %s)", noun, v, list)
	} else {
		b.fail(p, "must be %s, got %q", list, v)
	}
	return false
}

// checkFieldTable reports an inconsistent declaration in the table (a test
// runs it): a range with lo > hi, an enum without values, a key no schema
// path has.
func checkFieldTable() error {
	for _, k := range sortedKeys(fields) {
		f := fields[k]
		switch {
		case f.kind == kEnum && len(f.values) == 0 && k != "policies.type":
			return fmt.Errorf("%s: an enum without values", k)
		case f.kind != kEnum && f.kind != kBool && !(f.lo <= f.hi):
			return fmt.Errorf("%s: lo %g > hi %g", k, f.lo, f.hi)
		}
	}
	return nil
}
