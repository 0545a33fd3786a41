package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fakeFeed returns feed figures: 1000 pages, 50 hedged, 12 stale of 990
// returned, 3 monotonic, 40 duplicates of 10000 changes.
func fakeFeed() *FeedFigures {
	nan := [2]float64{math.NaN(), math.NaN()}
	return &FeedFigures{
		Pages:            1000,
		LegsPerPage:      Share{N: 50, Of: 1000, Rate: 1.05, CI: [2]float64{1.037, 1.065}},
		Gated:            Share{N: 0, Of: 1000, Rate: 0, CI: [2]float64{0, 0.0037}},
		Stale:            Share{N: 12, Of: 990, Rate: 12.0 / 990, CI: [2]float64{0.006, 0.021}},
		Monotonic:        Share{N: 3, Of: 990, Rate: 3.0 / 990, CI: [2]float64{0.0006, 0.0088}},
		SetupShare:       Estimate{Value: math.NaN(), CI: nan},
		MetadataHedges:   Share{Of: 0, Rate: math.NaN(), CI: nan},
		Changes:          10000,
		Duplicates:       Share{N: 40, Of: 10000, Rate: 4000, CI: [2]float64{2858, 5446}},
		Skip:             Share{N: 0, Of: 10000, Rate: 0, CI: [2]float64{0, 368.8}},
		PollRUMultiplier: Estimate{Value: 1.05, CI: nan},
	}
}

// TestFeedFiguresOutput: a run with feed figures writes them under "feed"
// in summary.json (every key of feedColumns, in order; non-finite as
// null) and as feed_* columns of summary.csv; a run without writes
// neither, so a point-read scenario's files are unchanged.
func TestFeedFiguresOutput(t *testing.T) {
	for _, withFeed := range []bool{false, true} {
		r := fakeRun(2, 1)
		if withFeed {
			r.Policies[1].Feed = fakeFeed()
		}
		dir := t.TempDir()
		if _, err := WriteRun(dir, r, Options{}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sum struct {
			Policies []map[string]json.RawMessage `json:"policies"`
		}
		if err := json.Unmarshal(data, &sum); err != nil {
			t.Fatal(err)
		}
		_, has0 := sum.Policies[0]["feed"]
		raw, has1 := sum.Policies[1]["feed"]
		rows := readCSV(t, filepath.Join(dir, "summary.csv"))
		if !withFeed {
			if has0 || has1 || !reflect.DeepEqual(rows[0], figureHeader) {
				t.Errorf("a run without feeds: feed key %v/%v, header %v", has0, has1, rows[0])
			}
			continue
		}
		if has0 || !has1 {
			t.Fatalf("feed key on policy 0: %v, on policy 1: %v; want only on 1", has0, has1)
		}
		var keys []string
		dec := json.NewDecoder(bytes.NewReader(raw))
		_, _ = dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			_ = dec.Decode(&skip)
		}
		var want []string
		for _, c := range feedColumns {
			want = append(want, c.key)
			if c.ci != nil {
				want = append(want, c.key+"_ci95")
			}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("feed keys\n got %v\nwant %v", keys, want)
		}
		var feed map[string]any
		_ = json.Unmarshal(raw, &feed)
		if feed["duplicates"] != 40.0 || feed["duplicates_per_million"] != 4000.0 || feed["setup_share"] != nil ||
			!reflect.DeepEqual(feed["skips_per_million_ci95"], []any{0.0, 368.8}) || feed["pages_returned"] != 990.0 {
			t.Errorf("feed object %s", raw)
		}
		if got := rows[0][len(figureHeader):]; !slices.Equal(got, feedHeader()) {
			t.Errorf("csv feed header %v", got)
		}
		cell := func(row int, col string) string {
			return rows[row][slices.Index(rows[0], col)]
		}
		if cell(1, "feed_pages") != "" || cell(2, "feed_pages") != "1000" || cell(2, "feed_duplicates_per_million_ci95_high") != "5446" ||
			cell(2, "feed_setup_share") != "" || cell(2, "feed_legs_per_page") != "1.05" {
			t.Errorf("csv rows %v", rows[1:])
		}
	}
}

func TestFormatFeedTable(t *testing.T) {
	r := fakeRun(3, 1)
	var figs []Figures
	for _, p := range r.Policies {
		figs = append(figs, p.Figures)
	}
	var buf bytes.Buffer
	if err := FormatFeedTable(&buf, figs); err != nil || buf.Len() != 0 {
		t.Fatalf("no feed figures: %q, %v; want nothing", buf.String(), err)
	}
	figs[0].Feed, figs[2].Feed = fakeFeed(), fakeFeed()
	figs[2].Feed.Changes, figs[2].Feed.Duplicates.Rate, figs[2].Feed.Skip.Rate = 0, math.NaN(), math.NaN()
	if err := FormatFeedTable(&buf, figs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and the 2 policies with feed figures:\n%s", len(lines), buf.String())
	}
	for _, l := range lines[1:] {
		if len([]rune(l)) != len([]rune(lines[0])) {
			t.Errorf("misaligned:\n%s", buf.String())
		}
	}
	if !strings.Contains(lines[1], "4000 [2858, 5446]") || !strings.Contains(lines[1], "1.050") || !strings.Contains(lines[1], "1.21") {
		t.Errorf("row 1: %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], "driver_default") || strings.Count(lines[2], " -") != 4 {
		t.Errorf("row 2, want dup, skips, setup and meta hedged as -: %q", lines[2])
	}
}

// TestHedgeUnitsOutput: with HedgeUnits a run writes hedge_units.csv and
// the chart, every unit's marker at its values; without, neither.
func TestHedgeUnitsOutput(t *testing.T) {
	r := fakeRun(3, 3)
	nan := [2]float64{math.NaN(), math.NaN()}
	r.HedgeUnits = []HedgeUnit{
		{Policy: "disabled", Unit: "none", P99: 3100, RU: 1, P99CI: [2]float64{3080, 3120}, RUCI: [2]float64{1, 1}, Ops: 600},
		{Policy: "static-200ms", Unit: "page", P99: 1100, RU: 2, P99CI: [2]float64{1000, 1200}, RUCI: nan, Ops: 600},
		{Policy: "static-200ms", Unit: "operation", P99: 860, RU: 1.3, P99CI: [2]float64{850, 870}, RUCI: [2]float64{1.28, 1.32}, Ops: 600},
		{Policy: "driver_default", Unit: "page", P99: 3100, RU: 1, P99CI: [2]float64{3080, 3120}, RUCI: [2]float64{1, 1}, Ops: 600},
	}
	r.HedgeUnitConfigured = "page"
	dir := t.TempDir()
	paths, err := WriteRun(dir, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"hedge_units.csv", "hedge_units.svg"} {
		if !slices.Contains(paths, filepath.Join(dir, f)) {
			t.Errorf("%s not written", f)
		}
	}
	rows := readCSV(t, filepath.Join(dir, "hedge_units.csv"))
	if len(rows) != 5 || !slices.Equal(rows[3], []string{"static-200ms", "operation", "600", "860", "850", "870", "1.3", "1.28", "1.32"}) ||
		rows[2][7] != "" {
		t.Errorf("hedge_units.csv %v", rows)
	}
	ch := hedgeUnitsChart(r)
	if ch.noData || ch.p.Y.Max < 3120 || ch.p.Y.Min > 850 || ch.p.X.Min > 1 || ch.p.X.Max < 2 {
		t.Errorf("axes X [%g, %g] Y [%g, %g] do not hold every point and interval", ch.p.X.Min, ch.p.X.Max, ch.p.Y.Min, ch.p.Y.Max)
	}
	r.HedgeUnits = nil
	dir = t.TempDir()
	paths, err = WriteRun(dir, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if strings.Contains(p, "hedge_units") {
			t.Errorf("%s written without hedge units", p)
		}
	}
}
