package scenarios_test

import (
	"os"
	"strings"
	"testing"

	"hedgelab/scenarios"
)

// withPolicies replaces the tiny scenario's policies.
func withPolicies(t *testing.T, policies string) (*scenarios.Scenario, error) {
	t.Helper()
	raw, err := os.ReadFile("tiny.toml")
	if err != nil {
		t.Fatal(err)
	}
	data := string(raw)
	i := strings.Index(data, "[[policies]]")
	return scenarios.Parse("budget.toml", []byte(data[:i]+policies))
}

func TestHedgeBudget(t *testing.T) {
	b, name := budgetOf(t, "type = \"static\"\nthreshold_ms = 20\nhedge_budget = 0.05\nhedge_budget_burst = 10\n")
	if name != "hedging(static(20ms)+budget(0.05))" || b.Config().Burst != 10 {
		t.Fatalf("strategy %s, budget %+v", name, b.Config())
	}
	for _, c := range []struct{ policies, want string }{
		{"[[policies]]\nname = \"d\"\ntype = \"disabled\"\nhedge_budget = 0.1\n", `policies.d.hedge_budget: applies only to types "static", "driver_default", "p99_dynamic", "capped_quantile", "recommended", not "disabled"`},
		{"[[policies]]\nname = \"s\"\ntype = \"static\"\nthreshold_ms = 5\nhedge_budget = 0\n", `policies.s.hedge_budget: must be in (0, 1], got 0`},
		{"[[policies]]\nname = \"s\"\ntype = \"static\"\nthreshold_ms = 5\nhedge_budget_burst = 5\n", `policies.s.hedge_budget_burst: needs hedge_budget`},
		{"[[policies]]\nname = \"s\"\ntype = \"driver_default\"\nhedge_budget = 0.1\nhedge_budget_burst = 0\n", `policies.s.hedge_budget_burst: must be in [1, 1e9], got 0`},
		{"[[policies]]\nname = \"s\"\ntype = \"driver_default\"\nhedge_budget = 0.1\nhedge_budget_burst = 2\nhedge_budget_burst_s = 2\n", `policies.s.hedge_budget_burst_s: excludes hedge_budget_burst (a bucket in seconds of the instance's budget, or in tokens)`},
		{"[[policies]]\nname = \"s\"\ntype = \"recommended\"\nhedge_budget_burst_s = 2\n", `policies.s.hedge_budget_burst_s: needs hedge_budget`},
	} {
		_, err := withPolicies(t, c.policies)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want ...%s", err, c.want)
		}
	}
}
