package simnet_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"hedgelab/simnet"
)

// A cancelled context stops Run with the context's error and no Stats.
func TestRunContextCancelled(t *testing.T) {
	cfg := cancelScenario(t, 20, 0, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, err := simnet.Run(cfg, staticPolicy(1), 0, simnet.RunOptions{Context: ctx})
	if !errors.Is(err, context.Canceled) || st != nil {
		t.Fatalf("Run with a cancelled context = %v, %v; want nil, context.Canceled", st, err)
	}
	// Cancelled during the run: a long run stops early.
	cfg.MaxOps = 0
	cfg.Duration = 1000 * time.Hour
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := simnet.Run(cfg, staticPolicy(1), 0, simnet.RunOptions{Context: ctx}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run cancelled midway: %v, want context.DeadlineExceeded", err)
	}
}
