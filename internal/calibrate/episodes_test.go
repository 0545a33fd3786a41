package calibrate_test

import (
	"testing"
	"time"

	"hedgelab/internal/calibrate"
)

// A last window much shorter than the others (the export a client makes
// as it stops: the operations in flight then, the slow ones
// over-represented) is no slow episode; the same attempts in a window of
// the usual width are one.
func TestShortLastWindowNoEpisode(t *testing.T) {
	for _, c := range []struct {
		name    string
		width   time.Duration
		episode bool
	}{{"short", 40 * time.Millisecond, false}, {"full", 10 * time.Second, true}} {
		s := calibrate.Series{Region: "westus", Leg: "primary", Status: "200"}
		tel := &calibrate.Telemetry{Sources: []string{c.name}}
		for i := range 20 {
			tel.Windows = append(tel.Windows, calibrate.Window{
				Start: time.Duration(i) * 10 * time.Second, End: time.Duration(i+1) * 10 * time.Second,
				Attempts: map[calibrate.Series][]calibrate.Bin{s: {{Lo: 1, Hi: 2, N: 190}, {Lo: 2, Hi: 5, N: 10}}},
			})
		}
		tel.Windows = append(tel.Windows, calibrate.Window{
			Start: 200 * time.Second, End: 200*time.Second + c.width,
			Attempts: map[calibrate.Series][]calibrate.Bin{s: {{Lo: 1, Hi: 2, N: 40}, {Lo: 50, Hi: 100, N: 20}}},
		})
		m, err := calibrate.Fit(tel, calibrate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(m.Episodes) > 0; got != c.episode {
			t.Errorf("%s last window: episodes %+v, want one: %v", c.name, m.Episodes, c.episode)
		}
	}
}
