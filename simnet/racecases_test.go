package simnet_test

import (
	"testing"

	"hedgelab/hedging"
	"hedgelab/internal/racecases"
	"hedgelab/simnet"
	"hedgelab/simnet/dist"
)

func constant(t *testing.T, ms float64) dist.Sampler {
	t.Helper()
	s, err := dist.Spec{Family: "constant", ValueMs: &ms}.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// caseConfig turns one race case into a one-operation scenario: each region
// is a replica with a constant service time equal to the leg's latency, no
// network delay, and a fault rule that scripts the leg's status.
func caseConfig(t *testing.T, c racecases.Case) (*simnet.Config, simnet.Policy) {
	t.Helper()
	cfg := &simnet.Config{
		Seed:             1,
		MaxOps:           1,
		ClientRegion:     "client",
		RTTMs:            map[string]map[string]float64{},
		Workload:         simnet.Workload{RatePerSec: 1},
		OperationTimeout: racecases.Ms(c.DeadlineMs),
		Client:           hedging.Config{Retry: hedging.RetryOptions{MaxAttempts: 1}},
	}
	for i, r := range c.Regions {
		leg := c.Primary
		if i > 0 {
			leg = c.Alternate
		}
		replica := "replica-" + r
		if k, ok := c.EndpointKeys[r]; ok {
			replica = k
		}
		cfg.Endpoints = append(cfg.Endpoints, simnet.Endpoint{Region: r, Replica: replica})
		exists := false
		for _, rep := range cfg.Replicas {
			exists = exists || rep.Name == replica
		}
		if !exists {
			cfg.Replicas = append(cfg.Replicas, simnet.Replica{Name: replica, Region: "phys-" + replica, Default: constant(t, leg.LatencyMs)})
			if leg.Status != 200 {
				cfg.Faults = append(cfg.Faults, simnet.Fault{
					Status: hedging.Status{Code: leg.Status, SubStatus: leg.SubStatus}, Probability: 1,
					Targets: []string{replica}, LatencyMs: leg.LatencyMs,
				})
			}
		}
	}
	// With user exclusions the alternate is the next applicable region: give
	// it the alternate's script.
	if len(c.ExcludeRegions) > 0 {
		cfg.Workload.ExcludeFraction = 1
		cfg.Workload.Exclude = c.ExcludeRegions
		applicable := 0
		for _, e := range cfg.Endpoints {
			excluded := false
			for _, x := range c.ExcludeRegions {
				excluded = excluded || x == e.Region
			}
			if !excluded {
				if applicable == 1 {
					for i := range cfg.Replicas {
						if cfg.Replicas[i].Name == e.Replica {
							cfg.Replicas[i].Default = constant(t, c.Alternate.LatencyMs)
						}
					}
				}
				applicable++
			}
		}
	}
	kind, err := hedging.ParseOperationKind(c.Operation)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workload.Mix = []simnet.MixEntry{{Kind: kind, Weight: 1}}
	if kind.IsWrite() {
		// Writes succeed with 201 in the simulator.
		for i := range cfg.Faults {
			if cfg.Faults[i].Status.Code == 201 {
				cfg.Faults = append(cfg.Faults[:i], cfg.Faults[i+1:]...)
				break
			}
		}
	}
	if c.OperationStrategy == "disabled" {
		cfg.Workload.DisabledFraction = 1
	}
	th := hedging.MustThreshold(racecases.Ms(c.ThresholdMs))
	return cfg, simnet.Policy{Name: "static", New: func() (hedging.AvailabilityStrategy, error) {
		return hedging.Hedging(hedging.NewHedgingStrategy(th)), nil
	}}
}

// TestRaceCasesSimnet runs the shared race cases through the simulator: the
// same terminal state, winner, attempts, answer time and status as the core
// driven by hand and the real-time driver.
func TestRaceCasesSimnet(t *testing.T) {
	cases, err := racecases.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			cfg, pol := caseConfig(t, c)
			var o racecases.Outcome
			st, err := simnet.Run(cfg, pol, 0, simnet.RunOptions{OnComplete: func(r *hedging.Race, _ *hedging.Operation) {
				o = racecases.OutcomeOf(r, r.Start())
			}})
			if err != nil {
				t.Fatal(err)
			}
			if st.Ops != 1 {
				t.Fatalf("ops = %d, want 1", st.Ops)
			}
			if err := c.Check(o); err != nil {
				t.Error(err)
			}
		})
	}
}
