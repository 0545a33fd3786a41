package scenarios_test

import (
	"testing"

	"hedgelab/scenarios"
)

// TestCheckValue: the exported range check words its error as the
// validator does, from the one fields table, and refuses keys it has no
// numeric declaration for.
func TestCheckValue(t *testing.T) {
	cases := []struct {
		key  string
		v    float64
		want string // "" = accepted
	}{
		{"workload.partitions", 1_000_000, ""},
		{"workload.partitions", 0, ""},
		{"workload.partitions", 1_000_001, "workload.partitions: must be between 0 and 1000000, got 1000001"},
		{"workload.partitions", 2.5, "workload.partitions: must be between 0 and 1000000, got 2.5"},
		{"workload.partitions", -1, "workload.partitions: must be between 0 and 1000000, got -1"},
		{"policies.quantile", 1, "policies.quantile: must be between 0 and 1 (exclusive), got 1"},
		{"no.such.key", 1, `scenarios: "no.such.key" is not a numeric key of the schema`},
		{"account.consistency", 1, `scenarios: "account.consistency" is not a numeric key of the schema`},
	}
	for _, c := range cases {
		err := scenarios.CheckValue(c.key, c.v)
		if got := errString(err); got != c.want {
			t.Errorf("CheckValue(%q, %g) = %q, want %q", c.key, c.v, got, c.want)
		}
	}
	if err := scenarios.CheckName("my-service"); err != nil {
		t.Errorf("CheckName(my-service) = %v", err)
	}
	if got := errString(scenarios.CheckName("")); got != "required" {
		t.Errorf(`CheckName("") = %q, want "required"`, got)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
