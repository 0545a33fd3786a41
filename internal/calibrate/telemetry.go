// Package calibrate turns the telemetry a service already exports into a
// scenario that `hedgesim run` accepts (issue 29): OpenTelemetry metrics
// of hedgingotel's instruments as OTLP JSON files ([ReadOTLP]), or a CSV
// of per-request records ([ReadCSV]), read into one [Telemetry]; [Fit]
// fits each region's service time, the request rate over time, slow
// episodes and fault rates per status from it, and [Model.Write] writes the
// scenario file, saying in comments what each number was fitted from and
// what the telemetry could not tell.
package calibrate

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bin counts N observations of attempt latency in (Lo, Hi] ms (Lo == Hi:
// N observations of exactly Lo).
type Bin struct{ Lo, Hi, N float64 }

// Series names one attempt-latency series: the attempt's region, its leg
// ("primary" or "alternate") and its status ("200", "503", "404/1002",
// "abandoned", "transport_error", "local_throttle"), the attributes of
// hedgingotel's cosmos.hedge.attempt_latency_ms.
type Series struct{ Region, Leg, Status string }

// Window is one interval of the telemetry: what was recorded in [Start,
// End), times from Telemetry.Epoch.
type Window struct {
	Start, End time.Duration
	// Attempts holds the attempt latencies of the window by series.
	Attempts map[Series][]Bin
	// Ops counts the operations that finished in the window
	// (cosmos.hedge.operations_total), HasOps whether the telemetry
	// reported it; Disabled those with result=disabled.
	Ops, Disabled float64
	HasOps        bool
	// LatencyHedges counts alternates sent on the threshold
	// (alternate_spawned_total, cause=threshold); FailoverHedges on a
	// failover cause.
	LatencyHedges, FailoverHedges float64
	// RUSum and RUCount are the sum and count of the winners' RU
	// (cosmos.hedge.ru_charge_winner).
	RUSum, RUCount float64
}

// Telemetry is what the readers produce and [Fit] consumes: consecutive
// windows of one client's telemetry.
type Telemetry struct {
	// Sources names the files read.
	Sources []string
	// Epoch is the start of the first window (wall time of the data).
	Epoch time.Time
	// ClientRegion is the resource attribute cloud.region, "" when absent.
	ClientRegion string
	Windows      []Window
	// Partitions counts the distinct partition attribute values of
	// hedgingotel's cosmos.hedge.consecutive_alternate_wins gauge (one
	// series per partition whose breaker streak, spec §9.5, the client
	// tracked); 0 when the telemetry has no such gauge (a CSV, or an export
	// without it). PartitionsOverflow reports that the SDK folded some
	// series into its otel.metric.overflow series, so Partitions is a
	// lower bound.
	Partitions         int
	PartitionsOverflow bool
	// Warnings are problems that did not stop the reading, each naming the
	// file and line or metric.
	Warnings []string
}

// Duration is the time the windows span.
func (t *Telemetry) Duration() time.Duration {
	if len(t.Windows) == 0 {
		return 0
	}
	return t.Windows[len(t.Windows)-1].End - t.Windows[0].Start
}

// warnf adds a warning.
func (t *Telemetry) warnf(format string, a ...any) {
	t.Warnings = append(t.Warnings, fmt.Sprintf(format, a...))
}

// sortBins sorts bins by upper edge, then lower edge, and merges bins with
// the same edges.
func sortBins(b []Bin) []Bin {
	sort.Slice(b, func(i, j int) bool {
		if b[i].Hi != b[j].Hi {
			return b[i].Hi < b[j].Hi
		}
		return b[i].Lo < b[j].Lo
	})
	out := b[:0]
	for _, x := range b {
		if x.N <= 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Lo == x.Lo && out[n-1].Hi == x.Hi {
			out[n-1].N += x.N
			continue
		}
		out = append(out, x)
	}
	return out
}

// count is the number of observations in bins.
func count(bins []Bin) float64 {
	var n float64
	for _, b := range bins {
		n += b.N
	}
	return n
}

// badRegion reports whether name cannot be a region name in a scenario:
// invalid UTF-8 or a control character, which no TOML string written
// with %q keeps.
func badRegion(name string) bool {
	return !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl)
}
