package report

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// capacityRun is a run with replica figures: three policies, two replicas
// with servers (the alternate, westeurope, loaded by the aggressive
// policies) and one without, 5 s windows over 60 s and a slow-down from
// 20 to 40 s.
func capacityRun() *Run {
	r := timelineRun()
	r.Scenario, r.DurationS = "cap", 60
	r.Episodes = []Episode{{Label: "slow primary", StartS: 20, EndS: 40}}
	r.Policies = r.Policies[:3]
	for i := range r.Policies {
		p := &r.Policies[i]
		p.Timeline = nil
		var ne, we, bp []float64
		var bo []int64
		for s := 0.0; s < 60; s += 5 {
			bo, bp = append(bo, 400), append(bp, 4+s/10)
			if s == 55 {
				bo[len(bo)-1], bp[len(bp)-1] = 0, math.NaN() // no background in the last window
			}
			p.Timeline = append(p.Timeline, Window{StartS: s, EndS: s + 5, Ops: 100, P99Ms: 10})
			ne = append(ne, 0.6)
			u := 0.75
			if s >= 20 && s < 40 {
				u += 0.1 * float64(i)
			}
			we = append(we, u)
		}
		p.Replicas = []ReplicaFigures{
			{Replica: "northeurope", Servers: 64, Utilisation: 0.6, QueueP99: 0, AttemptsServed: 1000, BackgroundP99: math.NaN(), BackgroundP999: math.NaN(), WindowUtilisation: ne},
			{Replica: "westeurope", Servers: 8, QueueLimit: 100, Utilisation: 0.8, QueueP99: 12, RefusedClient: int64(i), BackgroundOps: 5000, BackgroundRetries: 3 * int64(i), BackgroundGaveUp: int64(i),
				BackgroundP99: 4 + float64(i), BackgroundP999: 9, WindowUtilisation: we, WindowBackgroundOps: bo, WindowBackgroundP99: bp},
			{Replica: "uksouth", Utilisation: math.NaN(), QueueP99: math.NaN(), BackgroundP99: math.NaN(), BackgroundP999: math.NaN()},
		}
	}
	return r
}

// The replicas chart shows every replica with servers for every policy,
// names the replicas by dash pattern in the legend, fits the data and
// 100%, and lines up with the time charts. The policies' lines coincide
// at northeurope (60% throughout) and at westeurope outside the
// slow-down: the legend says so.
func TestReplicasChart(t *testing.T) {
	r := capacityRun()
	ch := replicasChart(r)
	if got, want := legendTexts(ch), []string{"disabled", "driver-default ≈ disabled", "static-100ms ≈ disabled", "northeurope", "westeurope"}; !reflect.DeepEqual(got, want) {
		t.Errorf("legend %q, want %q", got, want)
	}
	if !strings.Contains(ch.p.Title.Text, "5 s windows") {
		t.Errorf("title %q does not state the window", ch.p.Title.Text)
	}
	if !(ch.p.Y.Min <= 60 && ch.p.Y.Min > 0 && ch.p.Y.Max >= 100) || ch.p.X.Min != 0 || ch.p.X.Max != 60 {
		t.Errorf("axes x [%v, %v] y [%v, %v], want x [0, 60], y from a round number below 60 to 100 or more", ch.p.X.Min, ch.p.X.Max, ch.p.Y.Min, ch.p.Y.Max)
	}
	if ch.noData {
		t.Error("chart marked no data")
	}
	c := draw.New(vgimg.New(ChartWidth, ChartHeight))
	c = draw.Crop(c, outerMargin, -outerMargin, outerMargin, -outerMargin)
	tl, d := layoutChart(c, timelineChart(r)).data, layoutChart(c, ch).data
	if math.Abs(float64(d.Min.X-tl.Min.X)) > 0.01 || math.Abs(float64(d.Max.X-tl.Max.X)) > 0.01 {
		t.Errorf("data area x [%v, %v], timeline's [%v, %v]", d.Min.X, d.Max.X, tl.Min.X, tl.Max.X)
	}

	// With one replica with servers the title names it and the legend
	// lists only the policies.
	for i := range r.Policies {
		r.Policies[i].Replicas = slices.Delete(r.Policies[i].Replicas, 0, 1)
	}
	ch = replicasChart(r)
	if got := legendTexts(ch); len(got) != 3 || !strings.HasPrefix(ch.p.Title.Text, "cap: westeurope utilisation (5 s windows)") {
		t.Errorf("one replica: legend %q, title %q", got, ch.p.Title.Text)
	}
	if ch.p.Y.Min != 70 {
		t.Errorf("y axis from %v, want 70 (below the lowest value, 75%%)", ch.p.Y.Min)
	}
}

// Only runs with replica figures get the replicas block, replicas.csv and
// the chart; other runs' files are exactly as before.
func TestReplicasOutput(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteRun(dir, fakeRun(2, 1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.Contains(filepath.Base(p), "replicas") {
			t.Errorf("a run without replica figures wrote %s", p)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "summary.json")); strings.Contains(string(data), `"replicas"`) {
		t.Error("summary.json of a run without replica figures has a replicas key")
	}

	dir = t.TempDir()
	r := capacityRun()
	paths, err = WriteRun(dir, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"replicas.csv", "replicas.svg"} {
		if !slices.Contains(paths, filepath.Join(dir, f)) {
			t.Errorf("%s not written", f)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Policies []struct {
			Policy   string           `json:"policy"`
			Replicas []map[string]any `json:"replicas"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	reps := sum.Policies[2].Replicas
	if len(reps) != 3 {
		t.Fatalf("replicas %v", reps)
	}
	we, uk := reps[1], reps[2]
	if we["replica"] != "westeurope" || we["utilisation"] != 0.8 || we["queue_p99"] != 12.0 || we["refused_client"] != 2.0 ||
		we["background_p99_ms"] != 6.0 || we["queue_limit"] != 100.0 || we["background_ops"] != 5000.0 {
		t.Errorf("westeurope %v", we)
	}
	if we["background_retries"] != 6.0 || we["background_gave_up"] != 2.0 {
		t.Errorf("westeurope retries %v, gave up %v; want 6, 2", we["background_retries"], we["background_gave_up"])
	}
	if _, ok := sum.Policies[0].Replicas[1]["background_retries"]; ok {
		t.Errorf("background_retries written when 0: %v", sum.Policies[0].Replicas[1])
	}
	if uk["utilisation"] != nil || uk["queue_p99"] != nil || uk["background_p99_ms"] != nil {
		t.Errorf("uksouth (no servers, no background) %v: want nulls", uk)
	}
	rows := readCSV(t, filepath.Join(dir, "replicas.csv"))
	if !reflect.DeepEqual(rows[0], []string{"policy", "replica", "start_s", "end_s", "utilisation", "background_ops", "background_p99_ms"}) || len(rows) != 1+3*2*12 {
		t.Fatalf("replicas.csv header %v, %d rows (want 72: 3 policies × 2 replicas with servers × 12 windows)", rows[0], len(rows)-1)
	}
	for _, c := range []struct {
		row  int
		want []string
	}{
		{1 + 2*24 + 12 + 4, []string{"static-100ms", "westeurope", "20", "25", "0.95", "400", "6"}},
		{1 + 2*24 + 12 + 11, []string{"static-100ms", "westeurope", "55", "60", "0.75", "0", ""}}, // no background in the window
		{1 + 2*24 + 4, []string{"static-100ms", "northeurope", "20", "25", "0.6", "", ""}},        // no background source
	} {
		if got := rows[c.row]; !reflect.DeepEqual(got, c.want) {
			t.Errorf("row %d %v, want %v", c.row, got, c.want)
		}
	}
}
