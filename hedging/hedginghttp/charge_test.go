package hedginghttp

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// chargeByParseFloat is the request-charge rule read with strconv.ParseFloat
// alone (requestCharge's doc): the reference requestCharge's integer fast
// path must agree with.
func chargeByParseFloat(v string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0
	}
	return f
}

// x-ms-request-charge values: whole charges (the fast path), decimals,
// signs, exponents and malformed values.
func TestRequestCharge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"", 0}, {"1", 1}, {" 1 ", 1}, {"0", 0}, {"007", 7}, {"2.86", 2.86}, {"1e3", 1000},
		{"+1", 1}, {"-1", 0}, {"-0", 0}, {"1_000", 1000}, {"0x10", 0}, {"0x10p0", 16}, {"NaN", 0}, {"Inf", 0}, {"x", 0},
		{"999999999999999", 999999999999999}, {"9999999999999999", 9999999999999999},
		{"99999999999999999999", 1e20},
	} {
		if got := requestCharge(tc.in); got != tc.want {
			t.Errorf("requestCharge(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzRequestCharge checks requestCharge against the ParseFloat rule for
// any header value.
func FuzzRequestCharge(f *testing.F) {
	for _, s := range []string{"1", "2.86", "+1", "-1", "007", "1e3", "123456789012345", "1234567890123456", " 5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := requestCharge(s), chargeByParseFloat(s)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("requestCharge(%q) = %v, ParseFloat's rule %v", s, got, want)
		}
	})
}
