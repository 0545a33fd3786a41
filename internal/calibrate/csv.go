package calibrate

// This file reads a CSV of per-request records, one row per request a
// client sent to a region (what a service's request log or Cosmos DB's
// per-region diagnostics hold).

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"hedgelab/scenarios"
	"hedgelab/simnet"
)

// CSVColumns documents the CSV's columns (header row required, names
// case-insensitive, any order, other columns ignored):
//
//	time          required: when the request was sent, RFC 3339 or seconds (since 1970 or since the start)
//	region        required: the region the request went to
//	latency_ms    required: from sending it to its answer (or to its cancellation), ms in
//	              [0, 3.6e9] (simnet.MaxDelay, the longest delay the simulator represents)
//	status        required: "200", "503", "404/1002", ...; "abandoned" (or "cancelled"): cancelled
//	              before an answer (its latency is a lower bound); "transport_error": no response
//	ru            optional: the request charge (RU) of the answer, in [0, simnet.MaxRequestCharge]
//	leg           optional: "primary" or "alternate"; without it the region with the most
//	              requests is the primary and every other region's requests are alternates
//	operation_id  optional: requests of one operation share it (the primary and its hedge);
//	              without it each primary request is one operation
const CSVColumns = "time, region, latency_ms, status[, ru, leg, operation_id]"

// csvBinsPerOctave is the resolution CSV latencies are kept at: 2^(1/128)
// (0.54%) wide bins, four times finer than hedgingotel's histogram.
const csvBinsPerOctave = 128

type csvRow struct {
	line    int
	at      float64 // seconds
	region  string
	latency float64
	status  string
	ru      float64
	hasRU   bool
	leg     string
	op      string
}

// ReadCSV reads per-request records from data (the file named source, for
// messages; a leading UTF-8 byte order mark is skipped). Errors name
// source, the line and the column: a missing required column, a time,
// latency or RU that does not parse or is out of its range, records
// spanning more than scenarios.MaxSeconds, a region that is empty or holds
// a control character, an empty status or a sub-status above MaxInt32, or
// no rows.
func ReadCSV(source string, data []byte) (*Telemetry, error) {
	rows, err := readCSVRows(source, data)
	if err != nil {
		return nil, err
	}
	return csvTelemetry([]string{source}, rows)
}

func readCSVRows(source string, data []byte) ([]csvRow, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty CSV (want a header: %s)", source, CSVColumns)
	}
	if err != nil {
		return nil, csvErr(source, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	for _, req := range []string{"time", "region", "latency_ms", "status"} {
		if _, ok := col[req]; !ok {
			line, _ := r.FieldPos(0)
			return nil, fmt.Errorf("%s:%d: no %s column (want a header: %s)", source, line, req, CSVColumns)
		}
	}
	field := func(rec []string, name string) (string, bool) {
		i, ok := col[name]
		if !ok || i >= len(rec) {
			return "", false
		}
		return strings.TrimSpace(rec[i]), true
	}
	var rows []csvRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvErr(source, err)
		}
		line, _ := r.FieldPos(0)
		bad := func(name, want, got string) error {
			return fmt.Errorf("%s:%d: %s: want %s, got %q", source, line, name, want, got)
		}
		row := csvRow{line: line}
		s, _ := field(rec, "time")
		if row.at, err = parseTime(s); err != nil {
			return nil, bad("time", "an RFC 3339 time or seconds", s)
		}
		if row.region, _ = field(rec, "region"); row.region == "" {
			return nil, bad("region", "a region name", "")
		}
		if badRegion(row.region) {
			return nil, bad("region", "a region name without control characters", row.region)
		}
		s, _ = field(rec, "latency_ms")
		if row.latency, err = strconv.ParseFloat(s, 64); err != nil || !(row.latency >= 0 && row.latency <= maxLatencyMs) {
			return nil, bad("latency_ms", fmt.Sprintf("a latency in ms from 0 to %g (simnet.MaxDelay)", maxLatencyMs), s)
		}
		s, _ = field(rec, "status")
		if row.status, err = parseStatus(s); err != nil {
			return nil, bad("status", `a status ("200", "404/1002"), "abandoned" or "transport_error"`, s)
		}
		if s, ok := field(rec, "ru"); ok && s != "" {
			if row.ru, err = strconv.ParseFloat(s, 64); err != nil || !(row.ru >= 0 && row.ru <= simnet.MaxRequestCharge) {
				return nil, bad("ru", fmt.Sprintf("an RU charge from 0 to %g (simnet.MaxRequestCharge)", float64(simnet.MaxRequestCharge)), s)
			}
			row.hasRU = true
		}
		if s, ok := field(rec, "leg"); ok && s != "" {
			if s = strings.ToLower(s); s != "primary" && s != "alternate" {
				return nil, bad("leg", `"primary" or "alternate"`, s)
			}
			row.leg = s
		}
		row.op, _ = field(rec, "operation_id")
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no records after the header", source)
	}
	first, last := rows[0], rows[0]
	for _, row := range rows {
		if row.at < first.at {
			first = row
		}
		if row.at > last.at {
			last = row
		}
	}
	if span := last.at - first.at; span > scenarios.MaxSeconds {
		return nil, fmt.Errorf("%s:%d: time: the records span %g s (from line %d); at most %g s (a scenario's duration_s)",
			source, last.line, span, first.line, float64(scenarios.MaxSeconds))
	}
	return rows, nil
}

// maxLatencyMs is the longest latency a record may have: simnet.MaxDelay,
// in ms.
const maxLatencyMs = float64(simnet.MaxDelay / time.Millisecond)

func csvErr(source string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", source, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %v", source, err)
}

// parseTime reads an RFC 3339 time or a number of seconds, as seconds.
func parseTime(s string) (float64, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && f >= 0 {
		return f, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return float64(t.UnixNano()) / 1e9, nil
}

// parseStatus normalises a status: "503", "404/1002", "abandoned",
// "transport_error", "local_throttle".
func parseStatus(s string) (string, error) {
	switch strings.ToLower(s) {
	case "abandoned", "cancelled", "canceled":
		return "abandoned", nil
	case "transport_error", "error":
		return "transport_error", nil
	case "local_throttle":
		return "local_throttle", nil
	}
	code, sub, _ := strings.Cut(s, "/")
	c, err := strconv.Atoi(code)
	if err != nil || c < 100 || c > 599 {
		return "", errors.New("bad status")
	}
	if sub == "" || sub == "0" {
		return strconv.Itoa(c), nil
	}
	n, err := strconv.Atoi(sub)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return "", errors.New("bad sub-status")
	}
	return fmt.Sprintf("%d/%d", c, n), nil
}

// csvBin returns the bin of latency x ms.
func csvBin(x float64) Bin {
	if x <= 0 {
		return Bin{0, 0, 1}
	}
	i := math.Floor(math.Log2(x) * csvBinsPerOctave)
	lo, hi := math.Exp2(i/csvBinsPerOctave), math.Exp2((i+1)/csvBinsPerOctave)
	if x <= lo { // x exactly on an edge belongs to the bin below, (lo, hi]
		lo, hi = math.Exp2((i-1)/csvBinsPerOctave), lo
	}
	return Bin{lo, hi, 1}
}

// csvTelemetry groups rows into windows of max(1 s, duration/120), whole
// seconds.
func csvTelemetry(sources []string, rows []csvRow) (*Telemetry, error) {
	t := &Telemetry{Sources: sources}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].at < rows[j].at })
	t0, t1 := rows[0].at, rows[len(rows)-1].at
	span := t1 - t0
	width := math.Max(1, math.Round(span/120))
	n := int(math.Floor(span/width)) + 1
	if n > 1_000_000 {
		return nil, fmt.Errorf("%s: the records span %.0f s: too long", sources[0], span)
	}
	t.Epoch = time.Unix(0, int64(t0*1e9)).UTC()
	for i := 0; i < n; i++ {
		t.Windows = append(t.Windows, Window{Start: time.Duration(float64(i) * width * 1e9), End: time.Duration(float64(i+1) * width * 1e9),
			Attempts: map[Series][]Bin{}, HasOps: true})
	}
	// The primary: the leg column, else the region with the most requests.
	perRegion := map[string]int{}
	hasLeg := false
	for _, r := range rows {
		perRegion[r.region]++
		hasLeg = hasLeg || r.leg != ""
	}
	primary := ""
	for reg, c := range perRegion {
		if c > perRegion[primary] || c == perRegion[primary] && reg < primary {
			primary = reg
		}
	}
	type opInfo struct {
		win      int
		hedged   bool
		winnerAt float64
		ru       float64
		hasRU    bool
	}
	ops := map[string]*opInfo{}
	var opOrder []string
	noRU, withRU := 0, 0
	for _, r := range rows {
		leg := r.leg
		if leg == "" {
			leg = "primary"
			if !hasLeg && r.region != primary {
				leg = "alternate"
			}
		}
		wi := min(int((r.at-t0)/width), n-1)
		w := &t.Windows[wi]
		s := Series{Region: r.region, Leg: leg, Status: r.status}
		b := csvBin(r.latency)
		w.Attempts[s] = append(w.Attempts[s], b)
		ok := isAnswer(r.status) && statusCode(r.status) < 400
		if r.op == "" {
			if leg == "primary" {
				w.Ops++
			} else {
				w.LatencyHedges++
			}
			if ok && r.hasRU {
				w.RUSum += r.ru
				w.RUCount++
				withRU++
			} else if ok {
				noRU++
			}
			continue
		}
		o := ops[r.op]
		if o == nil {
			o = &opInfo{win: wi, winnerAt: math.Inf(1)}
			ops[r.op] = o
			opOrder = append(opOrder, r.op)
		}
		if leg == "alternate" {
			o.hedged = true
		}
		if end := r.at + r.latency/1000; ok && end < o.winnerAt {
			o.winnerAt, o.ru, o.hasRU = end, r.ru, r.hasRU
		}
	}
	for _, id := range opOrder {
		o := ops[id]
		w := &t.Windows[o.win]
		w.Ops++
		if o.hedged { // the CSV does not say why: counted as latency hedges
			w.LatencyHedges++
		}
		if o.hasRU {
			w.RUSum += o.ru
			w.RUCount++
			withRU++
		} else if !math.IsInf(o.winnerAt, 1) {
			noRU++
		}
	}
	for i := range t.Windows {
		for s, b := range t.Windows[i].Attempts {
			t.Windows[i].Attempts[s] = sortBins(b)
		}
	}
	switch {
	case noRU > 0 && withRU == 0:
		t.warnf("%s: no successful request has an ru: the RU per read is unknown (1 RU assumed)", sources[0])
	case noRU > 0:
		t.warnf("%s: %d successful requests have no ru: the RU per read is the mean of the other %d", sources[0], noRU, withRU)
	}
	if !hasLeg && len(perRegion) > 1 {
		t.warnf("%s: no leg column: %s (most requests) taken as the primary, every other region's requests as alternates", sources[0], primary)
	}
	return t, nil
}

// isAnswer reports whether a status is a response of the region (not an
// abandoned attempt, a transport error or a local throttle).
func isAnswer(status string) bool {
	return status != "abandoned" && status != "transport_error" && status != "local_throttle"
}

// statusCode is the HTTP code of an answer's status ("404/1002" -> 404).
func statusCode(status string) int {
	code, _, _ := strings.Cut(status, "/")
	c, _ := strconv.Atoi(code)
	return c
}
