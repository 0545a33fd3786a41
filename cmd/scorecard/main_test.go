package main

import "testing"

// The dominance rule of issue 17, one row per clause and its edges.
func TestDominates(t *testing.T) {
	r := func(p99, lo, hi, ru float64) row { return row{p99: p99, ru: ru, p99CI: [2]float64{lo, hi}} }
	for _, c := range []struct {
		name string
		a, b row
		want bool
	}{
		{"10% lower p99, intervals apart, same RU", r(80, 78, 82, 1.1), r(100, 95, 105, 1.1), true},
		{"10% lower p99 but intervals overlap", r(80, 70, 96, 1.1), r(100, 95, 105, 1.1), false},
		{"10% lower p99 for more RU", r(80, 78, 82, 1.2), r(100, 95, 105, 1.1), false},
		{"9% lower p99", r(91, 90, 92, 1.0), r(100, 99, 101, 1.0), false},
		{"2 RU points cheaper, p99 overlapping", r(101, 95, 107, 1.08), r(100, 95, 105, 1.1), true},
		{"1.9 RU points cheaper", r(100, 95, 105, 1.081), r(100, 95, 105, 1.1), false},
		{"2 RU points cheaper, p99 worse and apart", r(120, 118, 122, 1.0), r(100, 95, 105, 1.1), false},
	} {
		if _, got := dominates(c.a, c.b); got != c.want {
			t.Errorf("%s: dominates = %v, want %v", c.name, got, c.want)
		}
	}
}
