package scenarios_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
	"hedgelab/scenarios"
)

// policyOf builds the one policy of a tiny scenario with the given
// [[policies]] entry and returns its threshold policy.
func policyOf(t *testing.T, entry string) hedging.ThresholdPolicy {
	t.Helper()
	s, err := withPolicies(t, "[[policies]]\nname = \"x\"\n"+entry)
	if err != nil {
		t.Fatal(err)
	}
	_, pols, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	a, err := pols[0].New()
	if err != nil {
		t.Fatal(err)
	}
	hs, ok := a.HedgingStrategy()
	if !ok || hs.Policy() == nil {
		t.Fatalf("%q: not a policy strategy", entry)
	}
	return hs.Policy()
}

// The field's designs (issue 9) build the hedging values their keys
// describe.
func TestPolicyTypesBuild(t *testing.T) {
	t.Run("p99_dynamic defaults are every fix", func(t *testing.T) {
		c := policyOf(t, "type = \"p99_dynamic\"\n").(*threshold.P99Dynamic).Config()
		if c.Rounding != threshold.RoundUpperEdge || c.ThinWindow != threshold.ThinKeepLast || c.Warmup != threshold.WarmupMaxObserved ||
			c.Censoring != threshold.CensorLowerBound || c.Ceiling != threshold.CeilingMedian || c.CeilingFactor != threshold.DefaultCeilingFactor {
			t.Errorf("config %+v", c)
		}
	})
	t.Run("preset tps_literal, one option overridden", func(t *testing.T) {
		c := policyOf(t, "type = \"p99_dynamic\"\npreset = \"tps_literal\"\nceiling = \"median\"\nceiling_factor = 3\n").(*threshold.P99Dynamic).Config()
		lit := threshold.TPSLiteral()
		if c.Rounding != lit.Rounding || c.ThinWindow != lit.ThinWindow || c.Warmup != lit.Warmup || c.Censoring != lit.Censoring ||
			c.Ceiling != threshold.CeilingMedian || c.CeilingFactor != 3 || c.Initial != time.Second {
			t.Errorf("config %+v", c)
		}
	})
	t.Run("capped_quantile", func(t *testing.T) {
		c := policyOf(t, "type = \"capped_quantile\"\ncap_ms = 80\n").(*threshold.P99Dynamic).Config()
		if c.Max != 80*time.Millisecond || c.Ceiling != threshold.CeilingNone || c.Quantile != 0.99 {
			t.Errorf("config %+v", c)
		}
	})
	t.Run("backup_requests", func(t *testing.T) {
		b := policyOf(t, "type = \"backup_requests\"\nmax_extra_load = 0.02\nmin_backups_per_s = 3\n").(*threshold.Budget)
		bc := b.Config()
		if bc.Ratio != 0.02 || bc.PerSecond != 3 || bc.Burst != 100 || bc.ChargeFailover || b.Name() != "p98_dynamic+budget(0.02)" {
			t.Errorf("budget %+v name %q", bc, b.Name())
		}
	})
	t.Run("retry_throttle", func(t *testing.T) {
		b := policyOf(t, "type = \"retry_throttle\"\nthreshold_ms = 40\nmax_tokens = 20\ntoken_ratio = 0.2\n").(*threshold.Budget)
		bc := b.Config()
		if bc.Ratio != 0.2 || bc.Burst != 20 || bc.Reserve != 10 || !bc.ChargeFailover || bc.Debt || b.Name() != "static(40ms)+budget(0.2)" {
			t.Errorf("throttle %+v name %q", bc, b.Name())
		}
	})
	t.Run("hedge_budget accounting keys", func(t *testing.T) {
		b := policyOf(t, "type = \"static\"\nthreshold_ms = 5\nhedge_budget = 0.1\nhedge_budget_charge_failover = true\nhedge_budget_debt = true\n").(*threshold.Budget)
		if bc := b.Config(); !bc.ChargeFailover || !bc.Debt {
			t.Errorf("budget %+v", bc)
		}
	})
}

func TestPolicyTypesErrors(t *testing.T) {
	for _, c := range []struct{ entry, want string }{
		{"type = \"capped_quantile\"\n", `policies.x.type: type "capped_quantile" needs cap_ms (ms, > 0)`},
		{"type = \"capped_quantile\"\ncap_ms = 20\n", `policies.x.cap_ms: must be >= min_ms (50), got 20`},
		{"type = \"capped_quantile\"\ncap_ms = 80\nmax_ms = 90\n", `policies.x.max_ms: applies only to types "p99_dynamic", "backup_requests", not "capped_quantile"`},
		{"type = \"p99_dynamic\"\nrounding = \"down\"\n", `policies.x.rounding: unknown value "down" (want upper_edge or value)`},
		{"type = \"p99_dynamic\"\npreset = \"java\"\n", `policies.x.preset: unknown preset "java"`},
		{"type = \"p99_dynamic\"\nceiling_factor = 0.5\n", `policies.x.ceiling_factor: must be in [1, 1e6], got 0.5`},
		{"type = \"p99_dynamic\"\nhedge_budget_debt = true\n", `policies.x.hedge_budget_debt: needs hedge_budget`},
		{"type = \"backup_requests\"\nmax_extra_load = 1\n", `policies.x.max_extra_load: must be between 0 and 1 (exclusive), got 1`},
		{"type = \"backup_requests\"\nquantile = 0.9\n", `policies.x.quantile: applies only to types "p99_dynamic", "capped_quantile", "recommended", not "backup_requests"`},
		{"type = \"backup_requests\"\nhedge_budget = 0.1\n", `policies.x.hedge_budget: applies only to types`},
		{"type = \"retry_throttle\"\n", `policies.x.threshold_ms: required for type "retry_throttle" (ms, > 0)`},
		{"type = \"retry_throttle\"\nthreshold_ms = 50\nmax_tokens = 1\n", `policies.x.max_tokens: must be in [2, 1000], got 1`},
		{"type = \"retry_throttle\"\nthreshold_ms = 50\ntoken_ratio = 0\n", `policies.x.token_ratio: must be in (0, 1], got 0`},
		{"type = \"static\"\nthreshold_ms = 50\ncensored = \"ignore\"\n", `policies.x.censored: applies only to types "p99_dynamic", "capped_quantile", "backup_requests", not "static"`},
	} {
		_, err := withPolicies(t, "[[policies]]\nname = \"x\"\n"+c.entry)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want ...%s", c.entry, err, c.want)
		}
	}
}

// Every policy type and key is documented in scenarios/README.md.
func TestPolicyTypesDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range scenarios.PolicyTypes() {
		if !strings.Contains(string(readme), "`"+name+"`") {
			t.Errorf("policy type %q is not in scenarios/README.md", name)
		}
	}
	for _, key := range []string{"preset", "rounding", "thin_window", "warmup", "censored", "ceiling", "ceiling_factor", "cap_ms",
		"max_extra_load", "min_backups_per_s", "max_tokens", "token_ratio", "hedge_budget_charge_failover", "hedge_budget_debt"} {
		if !strings.Contains(string(readme), key+" ") {
			t.Errorf("key %q is not in scenarios/README.md", key)
		}
	}
}

func TestBuildPolicies(t *testing.T) {
	pols, err := scenarios.BuildPolicies("p.toml", []byte("[[policies]]\nname = \"a\"\ntype = \"static\"\nthreshold_ms = 20\n[[policies]]\nname = \"b\"\ntype = \"p99_dynamic\"\n"), time.Second)
	if err != nil || len(pols) != 2 || pols[0].Name != "a" || pols[1].Name != "b" {
		t.Fatalf("BuildPolicies = %v, %v", pols, err)
	}
	for _, c := range []struct{ text, want string }{
		{"[[policies]]\nname = \"a\"\ntype = \"static\"\n", "p.toml:1: policies.a.threshold_ms: required"},
		{"[[policies]]\nname = \"a\"\ntype = \"static\"\nthreshold = 5\n", "policies.threshold: unknown field"},
		{"", "p.toml:1: policies: at least one"},
	} {
		if _, err := scenarios.BuildPolicies("p.toml", []byte(c.text), time.Second); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want ...%s", c.text, err, c.want)
		}
	}
}
