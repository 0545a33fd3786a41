package calibrate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ReadFiles reads telemetry files: all OTLP JSON (a file whose first
// non-space byte is '{'), whose data points are windowed together (several
// clients' exports add up), or all CSV of per-request records. Errors:
// an unreadable file, a mix of the two kinds, and those of [ReadOTLP] and
// [ReadCSV]; a file named *.json that is not OTLP JSON is refused as such,
// not read as CSV.
func ReadFiles(paths []string) (*Telemetry, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("calibrate: no telemetry file")
	}
	t := &Telemetry{Sources: paths}
	var pts []rawPoint
	var rows []csvRow
	parts := partitionSet{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		isJSON := bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
		if !isJSON && strings.EqualFold(filepath.Ext(p), ".json") {
			// Read as CSV, it would be refused for a missing column.
			return nil, fmt.Errorf("%s: not OTLP JSON: an export starts with '{' (one JSON object per line, as the collector's file exporter or stdoutmetric writes it)", p)
		}
		if isJSON && len(rows) > 0 || !isJSON && len(pts) > 0 {
			return nil, fmt.Errorf("%s: mixes OTLP JSON and CSV telemetry: calibrate one kind at a time", p)
		}
		if isJSON {
			one := &Telemetry{Sources: []string{p}}
			ps, err := one.readOTLP(p, data, parts)
			if err != nil {
				return nil, err
			}
			if one.ClientRegion != "" && t.ClientRegion != "" && one.ClientRegion != t.ClientRegion {
				t.warnf("%s: resource cloud.region %q differs from %q: keeping the first", p, one.ClientRegion, t.ClientRegion)
			} else if t.ClientRegion == "" {
				t.ClientRegion = one.ClientRegion
			}
			t.Warnings = append(t.Warnings, one.Warnings...)
			pts = append(pts, ps...)
			continue
		}
		rs, err := readCSVRows(p, data)
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	if len(rows) > 0 {
		return csvTelemetry(paths, rows)
	}
	parts.count(t)
	if err := t.addPoints(pts); err != nil {
		return nil, err
	}
	return t, nil
}
