package hedging_test

import (
	"context"
	"runtime"
	"testing"
	"time"
	"weak"

	"hedgelab/hedging"
)

// A pooled engine keeps nothing of an operation once Do returned: the
// caller's op.ExcludeRegions, which the race's actions and legs carry,
// becomes garbage at the next collection (while the engine itself is still
// in sync.Pool, which keeps it through one collection), in both shapes.
func TestDoEngineKeepsNoExcludeRegions(t *testing.T) {
	if dtRaceEnabled() {
		t.Skip("sync.Pool drops items at random under -race")
	}
	for _, inline := range []bool{false, true} {
		var tr hedging.Transport = dtSendFunc(func(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
			return dtOK(200)
		})
		if inline {
			tr = dtPrompt{tr}
		}
		cfg := dtHedgingCfg(time.Minute, "A", "B", "C")
		cfg.Transport = tr
		c, err := hedging.NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w := func() weak.Pointer[hedging.Region] {
			excl := []hedging.Region{"C"}
			op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0", ExcludeRegions: excl}
			resp, err := c.Do(context.Background(), op)
			if err != nil || resp.Region != "A" {
				t.Fatalf("inline %v: %v %v", inline, resp, err)
			}
			return weak.Make(&excl[0])
		}()
		runtime.GC()
		if w.Value() != nil {
			t.Errorf("inline %v: op.ExcludeRegions is still reachable after Do returned and one collection", inline)
		}
	}
}
