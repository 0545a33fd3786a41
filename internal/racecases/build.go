package racecases

import (
	"fmt"
	"math"
	"time"

	"hedgelab/hedging"
)

// Ms converts milliseconds to a duration.
func Ms(ms float64) time.Duration { return time.Duration(math.Round(ms * float64(time.Millisecond))) }

// Build returns the client configuration and the operation a case
// describes. Retries are off (MaxAttempts 1): a case's leg status is
// already the result after its local retries.
func Build(c Case) (hedging.Config, hedging.Operation, error) {
	var cfg hedging.Config
	for _, r := range c.Regions {
		key := "replica-" + r
		if k, ok := c.EndpointKeys[r]; ok {
			key = k
		}
		cfg.Regions = append(cfg.Regions, hedging.Endpoint{Region: hedging.Region(r), Key: key})
	}
	th, ok := hedging.NewThreshold(Ms(c.ThresholdMs))
	if !ok {
		return cfg, hedging.Operation{}, fmt.Errorf("case %q: threshold_ms must be > 0", c.Name)
	}
	cfg.Strategy = hedging.Hedging(hedging.NewHedgingStrategy(th))
	cfg.Retry.MaxAttempts = 1
	kind, err := hedging.ParseOperationKind(c.Operation)
	if err != nil {
		return cfg, hedging.Operation{}, fmt.Errorf("case %q: %w", c.Name, err)
	}
	op := hedging.Operation{Kind: kind, Partition: "0", Timeout: Ms(c.DeadlineMs)}
	for _, r := range c.ExcludeRegions {
		op.ExcludeRegions = append(op.ExcludeRegions, hedging.Region(r))
	}
	switch c.OperationStrategy {
	case "":
	case "disabled":
		op.Strategy = hedging.Disabled
	default:
		return cfg, op, fmt.Errorf("case %q: unknown operation_strategy %q", c.Name, c.OperationStrategy)
	}
	return cfg, op, nil
}

// LegFor returns the scripted behaviour of the leg an attempt belongs to.
func (c Case) LegFor(l hedging.Leg) Leg {
	if l == hedging.Alternate {
		return c.Alternate
	}
	return c.Primary
}

// ResultFor returns the scripted result of leg l.
func (c Case) ResultFor(l hedging.Leg) hedging.Result {
	leg := c.LegFor(l)
	return hedging.Result{Status: hedging.Status{Code: leg.Status, SubStatus: leg.SubStatus}, RequestCharge: 1}
}

// Outcome is what a driver observed for one case.
type Outcome struct {
	TerminalState string
	Winner        string
	Attempts      int
	LatencyMs     float64
	Status        int
}

// OutcomeOf reads the outcome of a finished race that started at start.
func OutcomeOf(r *hedging.Race, start time.Duration) Outcome {
	o := Outcome{TerminalState: "none", Winner: "none", Attempts: 1}
	if r.AlternateSpawned() {
		o.Attempts = 2
	}
	if d, ok := r.Diagnostics(); ok {
		o.TerminalState = d.TerminalState().String()
	}
	if w, ok := r.Winner(); ok {
		o.Winner = w.String()
		res, _ := r.Result()
		o.Status = res.Status.Code
	}
	o.LatencyMs = float64(r.DoneAt()-start) / float64(time.Millisecond)
	return o
}

// Check compares an outcome with the case's expectation and returns a
// readable error for the first mismatch.
func (c Case) Check(o Outcome) error {
	e := c.Expect
	switch {
	case o.TerminalState != e.TerminalState:
		return fmt.Errorf("terminal state = %s, want %s", o.TerminalState, e.TerminalState)
	case o.Winner != e.Winner:
		return fmt.Errorf("winner = %s, want %s", o.Winner, e.Winner)
	case o.Attempts != e.Attempts:
		return fmt.Errorf("attempts = %d, want %d", o.Attempts, e.Attempts)
	case o.Status != e.Status:
		return fmt.Errorf("status = %d, want %d", o.Status, e.Status)
	}
	lo, hi := e.LatencyMs, e.LatencyMs
	if e.LatencyMaxMs > 0 {
		hi = e.LatencyMaxMs
	}
	if o.LatencyMs < lo-1e-6 || o.LatencyMs > hi+1e-6 {
		return fmt.Errorf("latency = %gms, want [%g, %g]ms", o.LatencyMs, lo, hi)
	}
	return nil
}
