package simnet_test

import (
	"testing"
	"time"

	"hedgelab/simnet"
)

// ArrivalsEnd is the run's actual length and the timeline covers it: a run
// ended by MaxOps long before its Duration had one window per
// Duration/120 with every operation in the first.
func TestArrivalsEndAndTimelineFollowMaxOps(t *testing.T) {
	for _, c := range []struct {
		name          string
		duration      time.Duration
		maxOps        int64
		window        time.Duration
		end           [2]time.Duration // accepted ArrivalsEnd range
		minDataWins   int
		maxTimelineLn int
	}{
		// 2000 ops at 400/s: ~5 s of a nominal 1e6 s run.
		{"max_ops first", 1e6 * time.Second, 2000, time.Second, [2]time.Duration{4 * time.Second, 6 * time.Second}, 4, 7},
		// No Duration: the timeline grows with the run.
		{"max_ops only", 0, 4000, time.Second, [2]time.Duration{8 * time.Second, 12 * time.Second}, 8, 13},
		// Duration first: exactly Duration, ceil(Duration/window) windows.
		{"duration first", 3 * time.Second, 1_000_000, time.Second, [2]time.Duration{3 * time.Second, 3 * time.Second}, 3, 3},
		{"duration only", 3 * time.Second, 0, 500 * time.Millisecond, [2]time.Duration{3 * time.Second, 3 * time.Second}, 6, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := threeRegions(t, 400, c.duration)
			cfg.MaxOps = c.maxOps
			cfg.TimelineWindow = c.window
			st, err := simnet.Run(cfg, disabledPolicy(), 0, simnet.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.ArrivalsEnd < c.end[0] || st.ArrivalsEnd > c.end[1] {
				t.Errorf("ArrivalsEnd %v, want within %v", st.ArrivalsEnd, c.end)
			}
			data := 0
			for _, w := range st.Timeline {
				if w.Ops > 0 {
					data++
				}
			}
			if data < c.minDataWins || len(st.Timeline) > c.maxTimelineLn {
				t.Errorf("%d of %d windows hold operations, want >= %d of <= %d", data, len(st.Timeline), c.minDataWins, c.maxTimelineLn)
			}
		})
	}
}
