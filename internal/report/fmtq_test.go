package report

import (
	"strconv"
	"strings"
	"testing"
)

// Issue 12: past 10^6 operations the quantile CSV must tell p99.9999 from
// p99.99999 (6 decimals printed both as 0.999999 / 1).
func TestFmtQ(t *testing.T) {
	for _, c := range []struct {
		q    float64
		want string
	}{
		{0.5, "0.5"}, {0.9, "0.9"}, {0.99, "0.99"}, {0.999, "0.999"}, {0.9999, "0.9999"},
		{1 - 0.0008912509381337459, "0.999109"}, // 6 decimals when they suffice
		{0.99999, "0.99999"}, {0.999999, "0.999999"},
		{0.9999999, "0.9999999"}, {0.99999999, "0.99999999"},
		{1 - 1.1220184543019636e-07, "0.999999888"},
		{1 - 1e-9, "0.999999999"}, {0, "0"}, {1, "1"},
	} {
		if got := fmtQ(c.q); got != c.want {
			t.Errorf("fmtQ(%v) = %q, want %q", c.q, got, c.want)
		}
	}
	p := &PolicyResult{Quantiles: []QuantileRow{{Q: 0.999999, Ms: 1}, {Q: 0.9999999, Ms: 2}, {Q: 0.99999999, Ms: 3}}}
	data, err := quantilesCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := "q,latency_ms\n0.999999,1\n0.9999999,2\n0.99999999,3\n"; strings.ReplaceAll(string(data), "\r", "") != want {
		t.Errorf("quantiles CSV\n%s\nwant\n%s", data, want)
	}
}

// fixA item 2: "1 replications"; the footnote called max a mean.
func TestReplicationWording(t *testing.T) {
	if got := Replications(1); got != "1 replication" {
		t.Errorf("Replications(1) = %q", got)
	}
	if got := Replications(3); got != "3 replications" {
		t.Errorf("Replications(3) = %q", got)
	}
	if got := ReplicationNote(1, "summary.json"); got != "" {
		t.Errorf("one replication: note %q", got)
	}
	note := ReplicationNote(5, "summary.json")
	for _, want := range []string{"means over 5 replications", "summary.json", "max is the largest latency of any replication"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if strings.Contains(note, "latencies and RU") {
		t.Errorf("note %q calls every latency a mean", note)
	}
}

// fixA item 5: the notebook printed p99.9 as "764 [0.00, 1856]", a CI
// clamped at 0 read as a measured lower bound.
func TestFormatLatencyCI(t *testing.T) {
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	for _, c := range []struct {
		v    float64
		ci   [2]float64
		want string
	}{
		{764, [2]float64{0, 1856}, "764 ± 1092†"},     // clamped by internal/study
		{764, [2]float64{-328, 1856}, "764 ± 1092†"},  // as computed
		{100, [2]float64{0, 200}, "100 ± 100†"},       // reaches exactly 0
		{67.7, [2]float64{67.6, 67.8}, "68 [68, 68]"}, // ordinary
		{500, [2]float64{10, 990}, "500 [10, 990]"},   // wide, still above 0
		{500, [2]float64{500, 500}, "500 [500, 500]"}, // zero width
	} {
		if got := FormatLatencyCI(c.v, c.ci, ms); got != c.want {
			t.Errorf("FormatLatencyCI(%v, %v) = %q, want %q", c.v, c.ci, got, c.want)
		}
	}
	if !strings.HasPrefix(UnboundedCINote, UnboundedCIMark) {
		t.Errorf("note %q does not explain the mark %q", UnboundedCINote, UnboundedCIMark)
	}
}
