package hedging_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
)

// hubObserver records HubRegionProcessingOnly of each OperationEvent's
// Operation, read inside ObserveOperation (the event's Operation is not
// to be kept).
type hubObserver struct {
	mu  sync.Mutex
	hub []bool
}

func (o *hubObserver) ObserveAttempt(context.Context, hedging.AttemptEvent) {}
func (o *hubObserver) ObserveOperation(_ context.Context, ev hedging.OperationEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hub = append(o.hub, ev.Operation.HubRegionProcessingOnly)
}

// With a Cancellable transport the primary's first attempt reads the race's
// own copy of op, which the race marks HubRegionProcessingOnly when both legs
// end transient after a 1002 (§9.6.7). The caller's op gets the mark; the
// OperationEvent still reports the operation as Do received it (the copy
// the alternate's attempt read), and an operation that arrived marked is
// reported marked.
func TestDoInlineOperationEventKeepsReceivedHubFlag(t *testing.T) {
	for _, in := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			tr := &dtTransport{start: time.Now(), script: dtLegs(
				300*time.Millisecond, hedging.Result{Status: hedging.Status{Code: 404, SubStatus: 1002}},
				400*time.Millisecond, hedging.Result{Status: hedging.Status{Code: 503}})}
			obs := &hubObserver{}
			cfg := dtHedgingCfg(100*time.Millisecond, "A", "B")
			cfg.Observer = obs
			c := dtClient(t, cfg, dtPrompt{tr})
			op := hedging.Operation{Kind: hedging.PointRead, Partition: "p", HubRegionProcessingOnly: in}
			_, err := c.Do(context.Background(), &op)
			var he *hedging.Error
			if !errors.As(err, &he) || he.Diagnostics == nil || he.Diagnostics.TerminalState() != hedging.BothTransient {
				t.Fatalf("in=%v: Do error %v, want a BothTransient *hedging.Error", in, err)
			}
			if he.Body != nil {
				_ = he.Body.Close()
			}
			if !op.HubRegionProcessingOnly {
				t.Errorf("in=%v: op.HubRegionProcessingOnly = false after Do, want true", in)
			}
			if len(obs.hub) != 1 || obs.hub[0] != in {
				t.Errorf("in=%v: OperationEvent.Operation.HubRegionProcessingOnly = %v, want [%v]", in, obs.hub, in)
			}
		})
	}
}
