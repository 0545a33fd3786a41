package hedgingotel_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"hedgelab/hedging/hedgingotel"
)

// collect reads every metric of the hedgingotel scope from reader, by name.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != hedgingotel.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			got[m.Name] = m
		}
	}
	return got
}

// counterOf returns a monotonic int64 counter's values by encoded
// attribute set.
func counterOf(t *testing.T, got map[string]metricdata.Metrics, name string) map[string]int64 {
	t.Helper()
	s, ok := got[name].Data.(metricdata.Sum[int64])
	if !ok || !s.IsMonotonic {
		t.Fatalf("%s: %T, want a monotonic int64 counter", name, got[name].Data)
	}
	out := map[string]int64{}
	for _, dp := range s.DataPoints {
		out[dp.Attributes.Encoded(attribute.DefaultEncoder())] += dp.Value
	}
	return out
}

// histOf returns a float64 histogram's {count, sum} by encoded attribute
// set.
func histOf(t *testing.T, got map[string]metricdata.Metrics, name string) map[string][2]float64 {
	t.Helper()
	h, ok := got[name].Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s: %T, want a float64 histogram", name, got[name].Data)
	}
	out := map[string][2]float64{}
	for _, dp := range h.DataPoints {
		out[dp.Attributes.Encoded(attribute.DefaultEncoder())] = [2]float64{float64(dp.Count), dp.Sum}
	}
	return out
}

// eqSorted reports a difference between two maps rendered with sorted keys.
func eqSorted(t *testing.T, name string, got, want any) {
	t.Helper()
	if g, w := fmtSorted(got), fmtSorted(want); g != w {
		t.Errorf("%s = %s, want %s", name, g, w)
	}
}

// fmtSorted renders a map with sorted keys.
func fmtSorted(v any) string {
	switch m := v.(type) {
	case map[string]int64:
		var parts []string
		for k, x := range m {
			parts = append(parts, fmt.Sprintf("%s:%d", k, x))
		}
		sort.Strings(parts)
		return strings.Join(parts, " ")
	case map[string][2]float64:
		var parts []string
		for k, x := range m {
			parts = append(parts, fmt.Sprintf("%s:%g/%g", k, x[0], x[1]))
		}
		sort.Strings(parts)
		return strings.Join(parts, " ")
	}
	return fmt.Sprint(v)
}
