package report

import (
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
