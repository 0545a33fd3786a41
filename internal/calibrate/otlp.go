package calibrate

// This file reads OpenTelemetry metrics as OTLP JSON files: the
// collector's file exporter (one ExportMetricsServiceRequest per line,
// {"resourceMetrics": [...]}, protobuf JSON: camelCase keys, 64-bit
// integers as strings, temporality as a number or an enum name) and
// go.opentelemetry.io/otel's stdoutmetric exporter (one
// metricdata.ResourceMetrics per export as encoding/json writes it:
// {"Resource": [...], "ScopeMetrics": [...]}, PascalCase keys, RFC 3339
// times, indented or not). Keys are compared without case and
// underscores, so snake_case protobuf JSON reads too.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The hedgingotel metrics calibrate reads (hedgingotel's Metric*
// constants; this package does not import OpenTelemetry).
const (
	metricAttemptLatency = "cosmos.hedge.attempt_latency_ms"
	metricOperations     = "cosmos.hedge.operations_total"
	metricSpawned        = "cosmos.hedge.alternate_spawned_total"
	metricRUWinner       = "cosmos.hedge.ru_charge_winner"
	metricConsecutive    = "cosmos.hedge.consecutive_alternate_wins"
)

// rawPoint is one data point of a metric calibrate reads, as written.
type rawPoint struct {
	metric     string
	attrs      map[string]string
	key        string // metric, resource and attributes: the series
	start, end time.Time
	cumulative bool
	line       int
	value      float64 // sum
	count, sum float64 // histograms
	// explicit histogram
	bounds, counts []float64
	// exponential histogram
	exp      bool
	scale    int
	offset   int
	buckets  []float64
	zero     float64
	max      float64
	hasMax   bool
	negative bool // negative buckets held counts
}

// ReadOTLP reads the OTLP JSON metrics in data (from the file named
// source, for messages). Errors name source, the line of the export the
// problem is in and the metric; data that is not one of the two JSON
// shapes, a metric of the wrong type, bucket counts that do not match
// their bounds, or no cosmos.hedge.attempt_latency_ms at all are errors.
func ReadOTLP(source string, data []byte) (*Telemetry, error) {
	t := &Telemetry{Sources: []string{source}}
	parts := partitionSet{}
	pts, err := t.readOTLP(source, data, parts)
	if err != nil {
		return nil, err
	}
	parts.count(t)
	if err := t.addPoints(pts); err != nil {
		return nil, err
	}
	return t, nil
}

// readOTLP reads the data points of one file into t's warnings and client
// region, and the partitions its consecutive_alternate_wins gauge names
// into parts.
func (t *Telemetry) readOTLP(source string, data []byte, parts partitionSet) ([]rawPoint, error) {
	var pts []rawPoint
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	seen := map[string]bool{}
	for {
		off := int(dec.InputOffset())
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		line := lineAt(data, skipSpace(data, off))
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				line = lineAt(data, int(se.Offset))
			}
			return nil, fmt.Errorf("%s:%d: not JSON: %v", source, line, err)
		}
		r := &otlpReader{source: source, line: line, t: t, seen: seen, parts: parts}
		p, err := r.export(normalize(v))
		if err != nil {
			return nil, err
		}
		pts = append(pts, p...)
	}
	if len(pts) == 0 && len(seen) == 0 {
		return nil, fmt.Errorf("%s: no OpenTelemetry metrics in the file", source)
	}
	if !seen[metricAttemptLatency] {
		var names []string
		for n := range seen {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%s: no %s metric (found: %s): calibrate needs hedgingotel's per-attempt latency histogram, or a CSV of per-request records",
			source, metricAttemptLatency, strings.Join(names, ", "))
	}
	return pts, nil
}

// skipSpace returns the offset of the first non-space byte at or after off.
func skipSpace(data []byte, off int) int {
	for off < len(data) && (data[off] == ' ' || data[off] == '\n' || data[off] == '\r' || data[off] == '\t') {
		off++
	}
	return off
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// normalize returns v with every object key lower-cased and without
// underscores.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[strings.ReplaceAll(strings.ToLower(k), "_", "")] = normalize(e)
		}
		return m
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
		return x
	}
	return v
}

// otlpReader reads one export (one JSON value) of a file.
type otlpReader struct {
	source string
	line   int
	t      *Telemetry
	seen   map[string]bool
	parts  partitionSet
}

// partitionSet holds the partition attribute values seen on
// cosmos.hedge.consecutive_alternate_wins ("" is a partition: the one a
// RoundTripper without a partition key uses); overflowKey stands for the
// SDK's overflow series.
type partitionSet map[string]bool

// overflowKey is the key partitionSet keeps for a point carrying the
// OpenTelemetry SDK's otel.metric.overflow attribute (not a partition).
const overflowKey = "\x00overflow"

// count sets t.Partitions and t.PartitionsOverflow from s.
func (s partitionSet) count(t *Telemetry) {
	t.Partitions, t.PartitionsOverflow = len(s), s[overflowKey]
	if t.PartitionsOverflow {
		t.Partitions--
		t.warnf("%s: some series carry otel.metric.overflow (the SDK's cardinality limit): %d partitions counted, there are more", metricConsecutive, t.Partitions)
	}
}

func (r *otlpReader) errorf(path, format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", r.source, r.line, path, fmt.Sprintf(format, a...))
}

// export reads one exported value: a request with resourceMetrics, or one
// stdoutmetric ResourceMetrics.
func (r *otlpReader) export(v any) ([]rawPoint, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r.errorf("export", "want a JSON object, got %s", kind(v))
	}
	if rms, ok := m["resourcemetrics"]; ok {
		list, ok := rms.([]any)
		if !ok {
			return nil, r.errorf("resourceMetrics", "want an array, got %s", kind(rms))
		}
		var out []rawPoint
		for i, rm := range list {
			p, err := r.resourceMetrics(fmt.Sprintf("resourceMetrics[%d]", i), rm)
			if err != nil {
				return nil, err
			}
			out = append(out, p...)
		}
		return out, nil
	}
	if _, ok := m["scopemetrics"]; ok {
		return r.resourceMetrics("ResourceMetrics", m)
	}
	return nil, r.errorf("export", "neither an OTLP ExportMetricsServiceRequest (resourceMetrics) nor a stdoutmetric ResourceMetrics (ScopeMetrics)")
}

func (r *otlpReader) resourceMetrics(path string, v any) ([]rawPoint, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r.errorf(path, "want an object, got %s", kind(v))
	}
	// The resource: {"attributes": [...]} (OTLP) or [...] (stdoutmetric).
	var resAttrs map[string]string
	var err error
	switch res := m["resource"].(type) {
	case map[string]any:
		resAttrs, err = r.attributes(path+".resource.attributes", res["attributes"])
	case []any, nil:
		resAttrs, err = r.attributes(path+".Resource", res)
	default:
		err = r.errorf(path+".resource", "want an object or an array, got %s", kind(res))
	}
	if err != nil {
		return nil, err
	}
	if reg := resAttrs["cloud.region"]; reg != "" {
		if badRegion(reg) {
			return nil, fmt.Errorf("%s:%d: resource cloud.region: want a region name without control characters, got %q", r.source, r.line, reg)
		}
		if r.t.ClientRegion != "" && r.t.ClientRegion != reg {
			r.t.warnf("%s:%d: resource cloud.region %q differs from %q seen before: keeping the first", r.source, r.line, reg, r.t.ClientRegion)
		} else {
			r.t.ClientRegion = reg
		}
	}
	resKey := attrKey(resAttrs)
	sms, ok := m["scopemetrics"].([]any)
	if !ok && m["scopemetrics"] != nil {
		return nil, r.errorf(path+".scopeMetrics", "want an array, got %s", kind(m["scopemetrics"]))
	}
	var out []rawPoint
	for i, sm := range sms {
		sp := fmt.Sprintf("%s.scopeMetrics[%d]", path, i)
		smm, ok := sm.(map[string]any)
		if !ok {
			return nil, r.errorf(sp, "want an object, got %s", kind(sm))
		}
		ms, ok := smm["metrics"].([]any)
		if !ok && smm["metrics"] != nil {
			return nil, r.errorf(sp+".metrics", "want an array, got %s", kind(smm["metrics"]))
		}
		for j, mv := range ms {
			p, err := r.metric(fmt.Sprintf("%s.metrics[%d]", sp, j), resKey, mv)
			if err != nil {
				return nil, err
			}
			out = append(out, p...)
		}
	}
	return out, nil
}

// metric reads one metric's data points if it is one calibrate uses.
func (r *otlpReader) metric(path, resKey string, v any) ([]rawPoint, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r.errorf(path, "want an object, got %s", kind(v))
	}
	name, _ := m["name"].(string)
	if !strings.HasPrefix(name, "cosmos.hedge.") {
		return nil, nil
	}
	r.seen[name] = true
	want := map[string]string{metricAttemptLatency: "histogram", metricRUWinner: "histogram", metricOperations: "sum", metricSpawned: "sum", metricConsecutive: "gauge"}[name]
	if want == "" {
		return nil, nil
	}
	path = fmt.Sprintf("metric %s (%s)", name, path)
	if want == "gauge" {
		return nil, r.partitions(path, m)
	}
	// The data: under sum/gauge/histogram/exponentialHistogram (OTLP) or
	// Data (stdoutmetric, told apart by its fields).
	var data map[string]any
	typ := ""
	for _, k := range []string{"sum", "gauge", "histogram", "exponentialhistogram"} {
		if d, ok := m[k].(map[string]any); ok {
			data, typ = d, k
		}
	}
	if data == nil {
		d, ok := m["data"].(map[string]any)
		if !ok {
			return nil, r.errorf(path, "no sum, gauge, histogram or exponentialHistogram data")
		}
		data = d
		dps, _ := d["datapoints"].([]any)
		typ = "gauge"
		if _, ok := d["ismonotonic"]; ok {
			typ = "sum"
		}
		if len(dps) > 0 {
			if dp, ok := dps[0].(map[string]any); ok {
				if _, ok := dp["scale"]; ok {
					typ = "exponentialhistogram"
				} else if _, ok := dp["bucketcounts"]; ok {
					typ = "histogram"
				}
			}
		}
	}
	if want == "histogram" && typ != "histogram" && typ != "exponentialhistogram" || want == "sum" && typ != "sum" {
		return nil, r.errorf(path, "is a %s, want a %s (as hedgingotel records it)", typ, want)
	}
	cumulative, err := r.temporality(path, data)
	if err != nil {
		return nil, err
	}
	dps, ok := data["datapoints"].([]any)
	if !ok && data["datapoints"] != nil {
		return nil, r.errorf(path+".dataPoints", "want an array, got %s", kind(data["datapoints"]))
	}
	var out []rawPoint
	for i, dv := range dps {
		dpath := fmt.Sprintf("%s.dataPoints[%d]", path, i)
		dp, ok := dv.(map[string]any)
		if !ok {
			return nil, r.errorf(dpath, "want an object, got %s", kind(dv))
		}
		p := rawPoint{metric: name, cumulative: cumulative, line: r.line}
		if p.attrs, err = r.attributes(dpath+".attributes", dp["attributes"]); err != nil {
			return nil, err
		}
		p.key = name + "|" + resKey + "|" + attrKey(p.attrs)
		if p.start, err = r.time(dpath, dp, "starttimeunixnano", "starttime"); err != nil {
			return nil, err
		}
		if p.end, err = r.time(dpath, dp, "timeunixnano", "time"); err != nil {
			return nil, err
		}
		if p.end.Before(p.start) {
			return nil, r.errorf(dpath, "time %s is before the start time %s", p.end.Format(time.RFC3339Nano), p.start.Format(time.RFC3339Nano))
		}
		switch typ {
		case "sum":
			v, ok := dp["asint"]
			if !ok {
				v, ok = dp["asdouble"]
			}
			if !ok {
				v, ok = dp["value"]
			}
			if !ok {
				return nil, r.errorf(dpath, "no asInt, asDouble or Value")
			}
			if p.value, err = r.number(dpath+".value", v, true); err != nil {
				return nil, err
			}
		case "histogram":
			err = r.histogram(dpath, dp, &p)
		case "exponentialhistogram":
			err = r.expHistogram(dpath, dp, &p)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// partitions adds the partition attribute values of the gauge m's data
// points (OTLP's gauge.dataPoints, stdoutmetric's Data.DataPoints) to
// r.parts; a point without the attribute is the partition "".
func (r *otlpReader) partitions(path string, m map[string]any) error {
	data, ok := m["gauge"].(map[string]any)
	if !ok {
		if data, ok = m["data"].(map[string]any); !ok {
			return r.errorf(path, "no gauge data")
		}
	}
	dps, ok := data["datapoints"].([]any)
	if !ok && data["datapoints"] != nil {
		return r.errorf(path+".dataPoints", "want an array, got %s", kind(data["datapoints"]))
	}
	for i, dv := range dps {
		dpath := fmt.Sprintf("%s.dataPoints[%d]", path, i)
		dp, ok := dv.(map[string]any)
		if !ok {
			return r.errorf(dpath, "want an object, got %s", kind(dv))
		}
		attrs, err := r.attributes(dpath+".attributes", dp["attributes"])
		if err != nil {
			return err
		}
		if _, ok := attrs["otel.metric.overflow"]; ok {
			r.parts[overflowKey] = true
			continue
		}
		r.parts[attrs["partition"]] = true
	}
	return nil
}

// temporality reads aggregationTemporality (OTLP: 1 delta, 2 cumulative,
// or the enum's name) or Temporality (stdoutmetric: "DeltaTemporality",
// "CumulativeTemporality"); it reports whether the points are cumulative.
func (r *otlpReader) temporality(path string, data map[string]any) (bool, error) {
	v, ok := data["aggregationtemporality"]
	if !ok {
		v, ok = data["temporality"]
	}
	if !ok {
		return false, r.errorf(path, "no aggregationTemporality")
	}
	switch x := v.(type) {
	case json.Number:
		switch x.String() {
		case "1":
			return false, nil
		case "2":
			return true, nil
		}
	case string:
		switch strings.ToLower(x) {
		case "aggregation_temporality_delta", "deltatemporality", "delta":
			return false, nil
		case "aggregation_temporality_cumulative", "cumulativetemporality", "cumulative":
			return true, nil
		}
	}
	return false, r.errorf(path+".aggregationTemporality", "want delta (1) or cumulative (2), got %v", v)
}

func (r *otlpReader) histogram(path string, dp map[string]any, p *rawPoint) error {
	var err error
	if p.count, err = r.number(path+".count", dp["count"], true); err != nil {
		return err
	}
	if s, ok := dp["sum"]; ok && s != nil {
		if p.sum, err = r.number(path+".sum", s, false); err != nil {
			return err
		}
	}
	b := dp["explicitbounds"]
	if b == nil {
		b = dp["bounds"]
	}
	if p.bounds, err = r.numbers(path+".explicitBounds", b, false); err != nil {
		return err
	}
	if p.counts, err = r.numbers(path+".bucketCounts", dp["bucketcounts"], true); err != nil {
		return err
	}
	if len(p.counts) != 0 && len(p.counts) != len(p.bounds)+1 {
		return r.errorf(path, "%d bucketCounts for %d explicitBounds, want %d", len(p.counts), len(p.bounds), len(p.bounds)+1)
	}
	for i := 1; i < len(p.bounds); i++ {
		if !(p.bounds[i] > p.bounds[i-1]) {
			return r.errorf(path+".explicitBounds", "bounds[%d] = %g is not above bounds[%d] = %g", i, p.bounds[i], i-1, p.bounds[i-1])
		}
	}
	var total float64
	for _, c := range p.counts {
		total += c
	}
	if len(p.counts) > 0 && total != p.count {
		return r.errorf(path, "bucketCounts add up to %g, count is %g", total, p.count)
	}
	r.extrema(dp, p)
	return nil
}

func (r *otlpReader) expHistogram(path string, dp map[string]any, p *rawPoint) error {
	p.exp = true
	var err error
	if p.count, err = r.number(path+".count", dp["count"], true); err != nil {
		return err
	}
	if s, ok := dp["sum"]; ok && s != nil {
		if p.sum, err = r.number(path+".sum", s, false); err != nil {
			return err
		}
	}
	sc, err := r.number(path+".scale", dp["scale"], false)
	if err != nil {
		return err
	}
	if sc != math.Trunc(sc) || sc < -10 || sc > 20 {
		return r.errorf(path+".scale", "want an integer from -10 to 20, got %g", sc)
	}
	p.scale = int(sc)
	if z, ok := dp["zerocount"]; ok {
		if p.zero, err = r.number(path+".zeroCount", z, true); err != nil {
			return err
		}
	}
	pos := dp["positive"]
	if pos == nil {
		pos = dp["positivebucket"]
	}
	if pm, ok := pos.(map[string]any); ok {
		if o, ok := pm["offset"]; ok {
			off, err := r.number(path+".positive.offset", o, false)
			if err != nil {
				return err
			}
			if off != math.Trunc(off) || math.Abs(off) > 1<<30 {
				return r.errorf(path+".positive.offset", "want an integer, got %g", off)
			}
			p.offset = int(off)
		}
		c := pm["bucketcounts"]
		if c == nil {
			c = pm["counts"]
		}
		if p.buckets, err = r.numbers(path+".positive.bucketCounts", c, true); err != nil {
			return err
		}
	} else if pos != nil {
		return r.errorf(path+".positive", "want an object, got %s", kind(pos))
	}
	neg := dp["negative"]
	if neg == nil {
		neg = dp["negativebucket"]
	}
	if nm, ok := neg.(map[string]any); ok {
		c := nm["bucketcounts"]
		if c == nil {
			c = nm["counts"]
		}
		nc, err := r.numbers(path+".negative.bucketCounts", c, true)
		if err != nil {
			return err
		}
		for _, x := range nc {
			p.negative = p.negative || x > 0
		}
	}
	if p.negative {
		return r.errorf(path, "negative latencies (negative buckets hold counts)")
	}
	total := p.zero
	for _, c := range p.buckets {
		total += c
	}
	if total != p.count {
		return r.errorf(path, "zeroCount and bucket counts add up to %g, count is %g", total, p.count)
	}
	r.extrema(dp, p)
	return nil
}

// extrema reads a point's max, when it has one.
func (r *otlpReader) extrema(dp map[string]any, p *rawPoint) {
	if v, ok := dp["max"]; ok && v != nil {
		if x, err := r.number("max", v, false); err == nil {
			p.max, p.hasMax = x, true
		}
	}
}

// number reads a JSON number, or a number in a string (protobuf JSON's
// 64-bit integers); count requires a finite value >= 0.
func (r *otlpReader) number(path string, v any, count bool) (float64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	case nil:
		return 0, r.errorf(path, "missing")
	default:
		return 0, r.errorf(path, "want a number, got %s", kind(v))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, r.errorf(path, "want a finite number, got %q", s)
	}
	if count && (f < 0 || f != math.Trunc(f)) {
		return 0, r.errorf(path, "want a count (an integer >= 0), got %s", s)
	}
	return f, nil
}

func (r *otlpReader) numbers(path string, v any, count bool) ([]float64, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, r.errorf(path, "want an array, got %s", kind(v))
	}
	out := make([]float64, len(list))
	for i, e := range list {
		f, err := r.number(fmt.Sprintf("%s[%d]", path, i), e, count)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

// time reads a point's time: nanoseconds since the Unix epoch under
// nanoKey (OTLP), or RFC 3339 under rfcKey (stdoutmetric).
func (r *otlpReader) time(path string, dp map[string]any, nanoKey, rfcKey string) (time.Time, error) {
	if v, ok := dp[nanoKey]; ok {
		var s string
		switch x := v.(type) {
		case json.Number:
			s = x.String()
		case string:
			s = x
		default:
			return time.Time{}, r.errorf(path+"."+nanoKey, "want nanoseconds, got %s", kind(v))
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return time.Time{}, r.errorf(path+"."+nanoKey, "want nanoseconds since 1970, got %q", s)
		}
		return time.Unix(0, n).UTC(), nil
	}
	if v, ok := dp[rfcKey].(string); ok {
		tm, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, r.errorf(path+"."+rfcKey, "want an RFC 3339 time, got %q", v)
		}
		return tm.UTC(), nil
	}
	return time.Time{}, r.errorf(path, "no %s or %s", nanoKey, rfcKey)
}

// attributes reads a list of key-value attributes (OTLP's {"key", "value":
// {"stringValue": ...}} or stdoutmetric's {"Key", "Value": {"Type",
// "Value"}}) as strings.
func (r *otlpReader) attributes(path string, v any) (map[string]string, error) {
	out := map[string]string{}
	if v == nil {
		return out, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, r.errorf(path, "want an array, got %s", kind(v))
	}
	for i, e := range list {
		kv, ok := e.(map[string]any)
		if !ok {
			return nil, r.errorf(fmt.Sprintf("%s[%d]", path, i), "want an object, got %s", kind(e))
		}
		k, _ := kv["key"].(string)
		val, ok := kv["value"].(map[string]any)
		if k == "" || !ok {
			return nil, r.errorf(fmt.Sprintf("%s[%d]", path, i), "want a key and a value")
		}
		var x any
		if _, typed := val["type"]; typed {
			x = val["value"]
		} else {
			for _, f := range []string{"stringvalue", "boolvalue", "intvalue", "doublevalue"} {
				if y, ok := val[f]; ok {
					x = y
				}
			}
		}
		switch y := x.(type) {
		case string:
			out[k] = y
		case bool:
			out[k] = strconv.FormatBool(y)
		case json.Number:
			out[k] = y.String()
		}
	}
	return out, nil
}

// attrKey renders attributes in key order.
func attrKey(a map[string]string) string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q,", k, a[k])
	}
	return b.String()
}

// kind names a decoded JSON value's type for messages.
func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
