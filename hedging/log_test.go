package hedging_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"hedgelab/hedging"
)

// The race emits the reserved cosmos.hedge.* events of spec §10.4 with their
// fields and levels.
func TestReservedLogEvents(t *testing.T) {
	var buf bytes.Buffer
	cfg := dtHedgingCfg(100*time.Millisecond, "A", "B")
	cfg.Retry.MaxAttempts = 1
	cfg.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := hedging.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Race 1: the alternate wins. Race 2: both legs transient.
	for _, alt := range []int{200, 503} {
		var r hedging.Race
		op := hedging.Operation{Kind: hedging.PointRead, Partition: "p7"}
		p, _ := rvSend(htBegin(c, &r, 0, &op), hedging.Primary)
		a, _ := rvSend(htTimerFired(&r, 100*time.Millisecond, hedging.TimerThreshold), hedging.Alternate)
		if alt == 503 {
			htResponded(&r, 110*time.Millisecond, p, hedging.Result{Status: hedging.Status{Code: 503}})
		}
		htResponded(&r, 130*time.Millisecond, a, hedging.Result{Status: hedging.Status{Code: alt}})
		if !r.Done() {
			t.Fatal("race not done")
		}
	}
	type rec map[string]any
	var got []rec
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var m rec
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got = append(got, m)
	}
	find := func(msg string) rec {
		for _, m := range got {
			if m["msg"] == msg {
				return m
			}
		}
		t.Fatalf("no %s event in:\n%s", msg, buf.String())
		return nil
	}
	checks := []struct {
		msg, level string
		fields     map[string]any
	}{
		{"cosmos.hedge.enabled_for_operation", "DEBUG", map[string]any{"threshold_ms": 100.0, "region_count": 2.0}},
		{"cosmos.hedge.alternate_spawned", "DEBUG", map[string]any{"target_region": "B", "elapsed_ms": 100.0}},
		{"cosmos.hedge.canceled", "DEBUG", map[string]any{"which": "primary", "target_region": "A", "reason": "winner_found"}},
		{"cosmos.hedge.winner_selected", "DEBUG", map[string]any{"winner_region": "B", "elapsed_ms": 130.0, "was_hedge": true}},
		{"cosmos.hedge.recorded_alternate_win", "DEBUG", map[string]any{"primary_region": "A", "partition": "p7"}},
		{"cosmos.hedge.both_transient", "WARN", map[string]any{"last_status_code": 503.0}},
	}
	for _, c := range checks {
		m := find(c.msg)
		if m["level"] != c.level {
			t.Errorf("%s at level %v, want %s", c.msg, m["level"], c.level)
		}
		for k, v := range c.fields {
			if m[k] != v {
				t.Errorf("%s: %s = %v, want %v", c.msg, k, m[k], v)
			}
		}
	}
}
