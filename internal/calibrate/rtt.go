package calibrate

// This file holds the published round-trip-time matrix that RTTs default
// to: data/azure_rtt_p50_ms_2026-07.csv, a copy of the shared folder's
// data/azure_rtt_p50_ms_2026-07.csv (Microsoft's "Azure network
// round-trip latency statistics", monthly P50 in ms, 30 days to
// 2026-07-30; row = source, column = destination), embedded so that a
// clone without the shared folder calibrates the same.

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"strconv"
	"strings"
	"sync"
)

//go:embed data/azure_rtt_p50_ms_2026-07.csv
var rttCSV []byte

// rttSource names the matrix in the files calibrate writes.
const rttSource = "Azure monthly P50 inter-region RTTs, 2026-07 (azure_rtt_p50_ms_2026-07.csv)"

var rttOnce struct {
	sync.Once
	names map[string]string             // normalised name -> display name
	ms    map[string]map[string]float64 // display names
}

// regionKey normalises a region name for lookup: "West US 2", "westus2"
// and "west-us-2" are one region.
func regionKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r != ' ' && r != '-' && r != '_' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func loadRTT() {
	rttOnce.names = map[string]string{}
	rttOnce.ms = map[string]map[string]float64{}
	r := csv.NewReader(bytes.NewReader(rttCSV))
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil || len(recs) < 2 {
		panic("calibrate: the embedded RTT matrix does not parse: " + err.Error()) // a build defect, caught by TestRTTMatrix
	}
	cols := recs[0]
	for _, c := range cols[1:] {
		rttOnce.names[regionKey(c)] = c
	}
	for _, rec := range recs[1:] {
		from := rec[0]
		rttOnce.names[regionKey(from)] = from
		row := map[string]float64{}
		for j, v := range rec[1:] {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && j+1 < len(cols) {
				row[cols[j+1]] = f
			}
		}
		rttOnce.ms[from] = row
	}
}

// publishedRegion returns the matrix's name of region (compared without
// case, spaces, dashes and underscores) and whether it is in the matrix.
func publishedRegion(region string) (string, bool) {
	rttOnce.Do(loadRTT)
	n, ok := rttOnce.names[regionKey(region)]
	return n, ok
}

// publishedRTT returns the matrix's RTT from one region to another (their
// matrix names), falling back to the other direction.
func publishedRTT(from, to string) (float64, bool) {
	rttOnce.Do(loadRTT)
	if v, ok := rttOnce.ms[from][to]; ok {
		return v, true
	}
	v, ok := rttOnce.ms[to][from]
	return v, ok
}
