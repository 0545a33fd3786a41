package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	chartBases     = []string{"ccdf", "percentiles", "cost", "timeline", "threshold", "hedge_rate"}
	basePolicyKeys = []string{
		"policy", "ops", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "p9999_ms", "max_ms", "mean_ms",
		"hedge_rate", "hedge_rate_latency", "hedge_rate_failover", "alternate_win_rate", "ru_multiplier", "error_rate", "terminal_states",
	}
	ciPolicyKeys = []string{
		"p50_ms_ci95", "p90_ms_ci95", "p99_ms_ci95", "p999_ms_ci95", "p9999_ms_ci95", "max_ms_ci95",
		"mean_ms_ci95", "ru_multiplier_ci95",
	}
)

// Rendering PNGs is slow under the race detector (~1 s per chart), so runs
// that several tests only read are written once into a shared directory.
var (
	fixtureMu   sync.Mutex
	fixtureRoot string
	fixtureDirs = map[[2]int]string{}
)

func TestMain(m *testing.M) {
	var err error
	fixtureRoot, err = os.MkdirTemp("", "report-test-")
	if err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(fixtureRoot)
	os.Exit(code)
}

// writtenRun returns a directory holding WriteRun(fakeRun(n, reps)) and
// the paths WriteRun returned. Tests must not modify it.
func writtenRun(t *testing.T, n, reps int) (string, []string) {
	t.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	key := [2]int{n, reps}
	dir, ok := fixtureDirs[key]
	if !ok {
		dir = filepath.Join(fixtureRoot, fmt.Sprintf("run-%d-%d", n, reps))
		if _, err := WriteRun(dir, fakeRun(n, reps), Options{}); err != nil {
			t.Fatal(err)
		}
		fixtureDirs[key] = dir
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	return dir, paths
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// expectedRunFiles are the files of a run of policies with the given
// slugs: charts as SVG, and as PNG too when png (Options.PNG).
func expectedRunFiles(png bool, slugs ...string) []string {
	names := []string{"summary.json", "summary.csv", "timeline.csv"}
	for _, s := range slugs {
		names = append(names, "quantiles_"+s+".csv")
	}
	for _, b := range chartBases {
		names = append(names, b+".svg")
		if png {
			names = append(names, b+".png")
		}
	}
	sort.Strings(names)
	return names
}

func checkPaths(t *testing.T, dir string, paths []string, names []string) {
	t.Helper()
	var want []string
	for _, n := range names {
		want = append(want, filepath.Join(dir, n))
	}
	sort.Strings(want)
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("paths written:\n got %v\nwant %v", paths, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, e := range entries {
		onDisk = append(onDisk, e.Name())
	}
	if !reflect.DeepEqual(onDisk, sortedCopy(names)) {
		t.Fatalf("files on disk (temp files left?):\n got %v\nwant %v", onDisk, names)
	}
}

// checkCharts checks that each chart base is a valid SVG in dir and, when
// withPNG, a PNG of the documented size; without withPNG no PNG exists.
func checkCharts(t *testing.T, dir string, bases []string, withPNG bool) {
	t.Helper()
	wantW := int(math.Round(float64(ChartWidth/vg.Inch) * PNGDPI))
	wantH := int(math.Round(float64(ChartHeight/vg.Inch) * PNGDPI))
	for _, b := range bases {
		pngPath := filepath.Join(dir, b+".png")
		f, err := os.Open(pngPath)
		if !withPNG {
			if err == nil {
				f.Close()
				t.Errorf("%s written without Options.PNG", pngPath)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", pngPath, err)
			}
			if got := img.Bounds().Size(); got.X != wantW || got.Y != wantH {
				t.Errorf("%s: size %v, want %dx%d", pngPath, got, wantW, wantH)
			}
		}
		svg, err := os.ReadFile(filepath.Join(dir, b+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(svg, []byte("<?xml")) && !bytes.HasPrefix(svg, []byte("<svg")) {
			t.Errorf("%s.svg: does not start with <?xml or <svg: %q", b, svg[:min(len(svg), 40)])
		}
		if !bytes.Contains(svg, []byte("</svg>")) {
			t.Errorf("%s.svg: no closing </svg>", b)
		}
		dec := xml.NewDecoder(bytes.NewReader(svg))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Errorf("%s.svg: invalid XML: %v", b, err)
				break
			}
		}
	}
}

// ExampleWriteRun-style test: a fake run with 3 policies written into a
// temporary directory, then every file checked.
func TestWriteRunExample(t *testing.T) {
	dir := t.TempDir()
	r := fakeRun(3, 1)
	paths, err := WriteRun(dir, r, Options{PNG: true})
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, dir, paths, expectedRunFiles(true, "disabled", "static-200ms", "driver-default"))
	checkCharts(t, dir, chartBases, true)

	// quantiles
	rows := readCSV(t, filepath.Join(dir, "quantiles_static-200ms.csv"))
	if !reflect.DeepEqual(rows[0], []string{"q", "latency_ms"}) {
		t.Errorf("quantiles header %v", rows[0])
	}
	if len(rows)-1 != len(r.Policies[1].Quantiles) {
		t.Errorf("quantile rows %d, want %d", len(rows)-1, len(r.Policies[1].Quantiles))
	}
	if rows[1][0] != "0.5" || rows[1][1] != fmtNum(r.Policies[1].Quantiles[0].Ms, 3) {
		t.Errorf("first quantile row %v", rows[1])
	}

	// timeline
	rows = readCSV(t, filepath.Join(dir, "timeline.csv"))
	wantHdr := []string{"policy", "start_s", "end_s", "ops", "p50_ms", "p99_ms", "hedge_rate", "error_rate", "mean_threshold_ms"}
	if !reflect.DeepEqual(rows[0], wantHdr) {
		t.Errorf("timeline header %v", rows[0])
	}
	n := 0
	for _, p := range r.Policies {
		n += len(p.Timeline)
	}
	if len(rows)-1 != n {
		t.Errorf("timeline rows %d, want %d", len(rows)-1, n)
	}
	if rows[1][0] != "disabled" || rows[1][1] != "0" || rows[1][2] != "10" {
		t.Errorf("first timeline row %v", rows[1])
	}
}

type summaryFile struct {
	Scenario     string          `json:"scenario"`
	Seed         uint64          `json:"seed"`
	Replications int             `json:"replications"`
	DurationS    float64         `json:"duration_s"`
	Policies     []summaryPolicy `json:"policies"`
}

type summaryPolicy struct {
	Policy           string           `json:"policy"`
	Ops              int64            `json:"ops"`
	P50              float64          `json:"p50_ms"`
	P90              float64          `json:"p90_ms"`
	P99              float64          `json:"p99_ms"`
	P999             float64          `json:"p999_ms"`
	P9999            float64          `json:"p9999_ms"`
	Max              float64          `json:"max_ms"`
	Mean             float64          `json:"mean_ms"`
	HedgeRate        float64          `json:"hedge_rate"`
	AlternateWinRate float64          `json:"alternate_win_rate"`
	RUMultiplier     float64          `json:"ru_multiplier"`
	ErrorRate        float64          `json:"error_rate"`
	TerminalStates   map[string]int64 `json:"terminal_states"`
	P99CI            *[2]float64      `json:"p99_ms_ci95"`
	RUCI             *[2]float64      `json:"ru_multiplier_ci95"`
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSummaryJSON(t *testing.T) {
	for _, reps := range []int{1, 5} {
		t.Run(map[int]string{1: "withoutCI", 5: "withCI"}[reps], func(t *testing.T) {
			dir, _ := writtenRun(t, 3, reps)
			r := fakeRun(3, reps)
			data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(data, []byte("}\n")) || !bytes.Contains(data, []byte("\n  \"policies\"")) {
				t.Errorf("summary.json not indented or without trailing newline")
			}
			// Exact key sets.
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			if got, want := sortedKeys(raw), sortedCopy([]string{"scenario", "seed", "replications", "duration_s", "policies"}); !reflect.DeepEqual(got, want) {
				t.Errorf("top-level keys %v, want %v", got, want)
			}
			var pols []map[string]json.RawMessage
			if err := json.Unmarshal(raw["policies"], &pols); err != nil {
				t.Fatal(err)
			}
			want := basePolicyKeys
			if reps > 1 {
				want = append(append([]string(nil), basePolicyKeys...), ciPolicyKeys...)
			}
			for i, p := range pols {
				if got := sortedKeys(p); !reflect.DeepEqual(got, sortedCopy(want)) {
					t.Errorf("policy %d keys\n got %v\nwant %v", i, got, sortedCopy(want))
				}
			}
			// Round trip of values.
			var s summaryFile
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatal(err)
			}
			if s.Scenario != r.Scenario || s.Seed != r.Seed || s.Replications != reps || s.DurationS != r.DurationS {
				t.Errorf("header mismatch: %+v", s)
			}
			if len(s.Policies) != len(r.Policies) {
				t.Fatalf("%d policies, want %d", len(s.Policies), len(r.Policies))
			}
			for i, got := range s.Policies {
				f := r.Policies[i].Figures
				if got.Policy != f.Policy || got.Ops != f.Ops {
					t.Errorf("policy %d: %q/%d", i, got.Policy, got.Ops)
				}
				for _, c := range []struct {
					name      string
					got, want float64
					tol       float64
				}{
					{"p50", got.P50, f.P50, 5e-4}, {"p90", got.P90, f.P90, 5e-4}, {"p99", got.P99, f.P99, 5e-4},
					{"p999", got.P999, f.P999, 5e-4}, {"p9999", got.P9999, f.P9999, 5e-4}, {"max", got.Max, f.Max, 5e-4},
					{"mean", got.Mean, f.Mean, 5e-4}, {"hedge", got.HedgeRate, f.HedgeRate, 5e-7},
					{"altwin", got.AlternateWinRate, f.AlternateWinRate, 5e-7}, {"ru", got.RUMultiplier, f.RUMultiplier, 5e-7},
					{"err", got.ErrorRate, f.ErrorRate, 5e-7},
				} {
					if !near(c.got, c.want, c.tol) {
						t.Errorf("policy %s %s = %v, want %v", f.Policy, c.name, c.got, c.want)
					}
				}
				if !reflect.DeepEqual(got.TerminalStates, f.TerminalStates) {
					t.Errorf("terminal states %v, want %v", got.TerminalStates, f.TerminalStates)
				}
				if reps > 1 {
					ci := f.CI95["p99_ms"]
					if got.P99CI == nil || !near(got.P99CI[0], ci[0], 5e-4) || !near(got.P99CI[1], ci[1], 5e-4) {
						t.Errorf("p99 ci %v, want %v", got.P99CI, ci)
					}
					ci = f.CI95["ru_multiplier"]
					if got.RUCI == nil || !near(got.RUCI[0], ci[0], 5e-7) || !near(got.RUCI[1], ci[1], 5e-7) {
						t.Errorf("ru ci %v, want %v", got.RUCI, ci)
					}
				}
			}
			// terminal_states keys are sorted in the file.
			if i, j := bytes.Index(data, []byte(`"AlternateWon"`)), bytes.Index(data, []byte(`"PrimaryWonAfterHedge"`)); i < 0 || j < 0 || i > j {
				t.Errorf("terminal_states not in sorted key order")
			}
		})
	}
}

func TestSummaryJSONNonFinite(t *testing.T) {
	r := fakeRun(1, 2)
	f := &r.Policies[0].Figures
	f.P99, f.Mean, f.RUMultiplier = math.NaN(), math.Inf(1), math.Inf(-1)
	delete(f.CI95, "p50_ms")
	f.TerminalStates = nil
	data, err := summaryJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Policies []map[string]any `json:"policies"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, data)
	}
	p := s.Policies[0]
	for _, k := range []string{"p99_ms", "mean_ms", "ru_multiplier", "p50_ms_ci95"} {
		if v, ok := p[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if ts, ok := p["terminal_states"].(map[string]any); !ok || len(ts) != 0 {
		t.Errorf("nil terminal_states should be {}, got %v", p["terminal_states"])
	}
	if len(p) != len(basePolicyKeys)+len(ciPolicyKeys) {
		t.Errorf("got %d keys", len(p))
	}
}

func TestSummaryCSV(t *testing.T) {
	for _, reps := range []int{1, 5} {
		dir, _ := writtenRun(t, 3, reps)
		r := fakeRun(3, reps)
		rows := readCSV(t, filepath.Join(dir, "summary.csv"))
		want := append([]string(nil), figureHeader...)
		if reps > 1 {
			for _, k := range ciKeys {
				want = append(want, k+"_ci95_low", k+"_ci95_high")
			}
		}
		if !reflect.DeepEqual(rows[0], want) {
			t.Errorf("reps=%d header\n got %v\nwant %v", reps, rows[0], want)
		}
		if len(rows) != 1+len(r.Policies) {
			t.Fatalf("reps=%d: %d rows", reps, len(rows))
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		for i, p := range r.Policies {
			row := rows[i+1]
			if row[col["policy"]] != p.Policy || row[col["p99_ms"]] != fmtNum(p.P99, 3) || row[col["ru_multiplier"]] != fmtNum(p.RUMultiplier, 6) {
				t.Errorf("row %v", row)
			}
			if reps > 1 && row[col["p99_ms_ci95_high"]] != fmtNum(p.CI95["p99_ms"][1], 3) {
				t.Errorf("ci cell %q", row[col["p99_ms_ci95_high"]])
			}
		}
		if got := rows[2][col["terminal_states"]]; !strings.HasPrefix(got, "AlternateWon=") {
			t.Errorf("terminal_states cell %q", got)
		}
	}
}

func TestWriteRunDeterministic(t *testing.T) {
	a, pa := writtenRun(t, 3, 5)
	b := t.TempDir()
	pb, err := WriteRun(b, fakeRun(3, 5), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pa) != len(pb) {
		t.Fatalf("%d vs %d files", len(pa), len(pb))
	}
	for _, p := range pa {
		da, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		db, err := os.ReadFile(filepath.Join(b, filepath.Base(p)))
		if err != nil {
			t.Fatal(err)
		}
		if len(da) == 0 || !bytes.Equal(da, db) {
			t.Errorf("%s differs between two writes (%s vs %s)", filepath.Base(p), a, b)
		}
	}
}

// TestSweepChartRenderDeterministic renders each sweep chart twice
// in-process and compares bytes: gonum/plot's PNG and SVG output has no
// timestamps or random ids. (Run charts are covered by
// TestWriteRunDeterministic.)
func TestSweepChartRenderDeterministic(t *testing.T) {
	s := fakeSweep(1)
	builds := map[string]func() *chart{
		"sweep_p99": func() *chart { return sweepP99Chart(s) }, "sweep_cost": func() *chart { return sweepCostChart(s) },
	}
	for _, name := range sortedKeys(builds) {
		for _, format := range []string{"png", "svg"} {
			d1, err := renderChart(builds[name], format)
			if err != nil {
				t.Fatal(err)
			}
			d2, err := renderChart(builds[name], format)
			if err != nil {
				t.Fatal(err)
			}
			if len(d1) == 0 || !bytes.Equal(d1, d2) {
				t.Errorf("%s.%s: not byte-identical across renders (%d vs %d bytes)", name, format, len(d1), len(d2))
			}
		}
	}
}

func TestEmptyAndDegenerateInputs(t *testing.T) {
	zeroCCDF := fakeRun(2, 1)
	for i := range zeroCCDF.Policies {
		p := &zeroCCDF.Policies[i]
		p.CCDF = []Point{{0, 1}, {0, 0.5}, {5, 0}, {10, 0}, {-1, -1}, {math.NaN(), 0.1}, {math.Inf(1), 0.1}}
	}
	allZero := &Run{Scenario: "zeros", Replications: 1, Policies: []PolicyResult{
		{Figures: Figures{Policy: "a"}, CCDF: []Point{{0, 0}}, Timeline: []Window{{StartS: 0, EndS: 1}}},
		{Figures: Figures{Policy: "b"}},
	}}
	nanFigs := fakeRun(2, 1)
	nanFigs.Policies[0].P99 = math.NaN()
	nanFigs.Policies[0].RUMultiplier = math.Inf(1)
	nanFigs.Policies[1].P999 = math.Inf(1)
	onePoint := fakeRun(1, 1)
	onePoint.Policies[0].CCDF = []Point{{10, 0.5}}
	onePoint.Policies[0].Timeline = onePoint.Policies[0].Timeline[:1]
	logBars := fakeRun(3, 1)
	logBars.Policies[2].P999 = 50000 // > 2 decades above p50 → log Y
	badEpisodes := fakeRun(2, 1)
	badEpisodes.Episodes = append(badEpisodes.Episodes, Episode{"reversed", 500, 450}, Episode{"nan", math.NaN(), 3},
		Episode{"beyond", 550, 5000}, Episode{"", 0, 0})
	collide := fakeRun(2, 1)
	collide.Policies[0].Policy = "p99 dynamic"
	collide.Policies[1].Policy = "P99_dynamic"

	cases := []struct {
		name  string
		r     *Run
		slugs []string
		full  bool // full WriteRun; else the charts rendered in memory only
	}{
		{"zero policies", &Run{}, nil, true},
		{"zero and negative CCDF", zeroCCDF, []string{"disabled", "static-200ms"}, true},
		{"all zero", allZero, []string{"a", "b"}, true},
		{"nan figures", nanFigs, []string{"disabled", "static-200ms"}, false},
		{"one point", onePoint, []string{"disabled"}, false},
		{"log bars", logBars, []string{"disabled", "static-200ms", "driver-default"}, false},
		{"bad episodes", badEpisodes, []string{"disabled", "static-200ms"}, false},
		{"slug collision", collide, []string{"p99-dynamic", "p99-dynamic-2"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.full {
				for _, b := range []func(*Run) *chart{ccdfChart, percentilesChart, costChart, timelineChart} {
					data, err := renderChart(func() *chart { return b(c.r) }, "svg")
					if err != nil || !bytes.HasPrefix(data, []byte("<?xml")) {
						t.Fatalf("render: %v", err)
					}
				}
				if got := uniqueSlugs(c.r.Policies); !reflect.DeepEqual(got, c.slugs) {
					t.Errorf("slugs %v, want %v", got, c.slugs)
				}
				for _, f := range []func(*Run) ([]byte, error){summaryJSON, summaryCSV, timelineCSV} {
					if _, err := f(c.r); err != nil {
						t.Fatal(err)
					}
				}
				if data, _ := summaryJSON(c.r); !json.Valid(data) {
					t.Errorf("invalid summary.json")
				}
				return
			}
			dir := t.TempDir()
			paths, err := WriteRun(dir, c.r, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, dir, paths, expectedRunFiles(false, c.slugs...))
			checkCharts(t, dir, chartBases, false)
			data, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
			if !json.Valid(data) {
				t.Errorf("invalid summary.json")
			}
			readCSV(t, filepath.Join(dir, "summary.csv"))
			readCSV(t, filepath.Join(dir, "timeline.csv"))
		})
	}
	if _, err := WriteRun(t.TempDir(), nil, Options{}); err == nil {
		t.Error("nil run: want error")
	}
	if _, err := WriteSweep(t.TempDir(), &Sweep{}, Options{}); err != nil {
		t.Errorf("empty sweep: %v", err)
	}
}

func TestWriteRunErrorNamesFile(t *testing.T) {
	dir := t.TempDir()
	// A directory where summary.csv should go makes that write fail.
	if err := os.Mkdir(filepath.Join(dir, "summary.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := WriteRun(dir, &Run{}, Options{})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "summary.csv")) {
		t.Fatalf("error %v does not name summary.csv", err)
	}
	// Output directory path is a file.
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := WriteRun(filepath.Join(f, "sub"), &Run{}, Options{}); err == nil || !strings.Contains(err.Error(), f) {
		t.Fatalf("error %v does not name the directory", err)
	}
}

func TestWriteSweep(t *testing.T) {
	for _, reps := range []int{1, 4} {
		dir := t.TempDir()
		s := fakeSweep(reps)
		withPNG := reps == 1 // PNG on request only
		paths, err := WriteSweep(dir, s, Options{PNG: withPNG})
		if err != nil {
			t.Fatal(err)
		}
		files := []string{"sweep.csv", "sweep.json", "sweep_cost.svg", "sweep_p99.svg"}
		if withPNG {
			files = append(files, "sweep_cost.png", "sweep_p99.png")
		}
		checkPaths(t, dir, paths, files)
		checkCharts(t, dir, []string{"sweep_p99", "sweep_cost"}, withPNG)
		rows := readCSV(t, filepath.Join(dir, "sweep.csv"))
		want := append([]string{"value"}, figureHeader...)
		if reps > 1 {
			want = append(want, ciHeader()...)
		}
		want = append(want, "label")
		if !reflect.DeepEqual(rows[0], want) {
			t.Errorf("sweep.csv header %v", rows[0])
		}
		if len(rows) != 1+len(s.Points)*len(s.Points[0].Policies) {
			t.Errorf("sweep.csv rows %d", len(rows))
		}
		if rows[1][0] != "25" || rows[1][1] != "static" {
			t.Errorf("first row %v", rows[1][:2])
		}
		data, _ := os.ReadFile(filepath.Join(dir, "sweep.json"))
		var js struct {
			Scenario, Param string
			Seed            uint64
			Replications    int
			Points          []struct {
				Value    float64
				Policies []map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal(data, &js); err != nil {
			t.Fatal(err)
		}
		if js.Param != s.Param || js.Seed != s.Seed || len(js.Points) != len(s.Points) || js.Points[2].Value != 100 {
			t.Errorf("sweep.json header %+v", js)
		}
		wantKeys := append(append([]string(nil), basePolicyKeys...), "label")
		if reps > 1 {
			wantKeys = append(wantKeys, ciPolicyKeys...)
		}
		if got := sortedKeys(js.Points[0].Policies[0]); !reflect.DeepEqual(got, sortedCopy(wantKeys)) {
			t.Errorf("sweep policy keys %v", got)
		}
	}
}

func TestFormatTable(t *testing.T) {
	r := fakeRun(3, 1)
	var figs []Figures
	for _, p := range r.Policies {
		figs = append(figs, p.Figures)
	}
	figs[2].RUMultiplier = math.NaN()
	var buf bytes.Buffer
	if err := FormatTable(&buf, figs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines:\n%s", len(lines), buf.String())
	}
	for _, h := range []string{"policy", "ops", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "hedge %", "altwin %", "RU ×", "err %"} {
		if !strings.Contains(lines[0], h) {
			t.Errorf("header %q lacks %q", lines[0], h)
		}
	}
	// Right-aligned columns: every line has the same rune length.
	for _, l := range lines[1:] {
		if len([]rune(l)) != len([]rune(lines[0])) {
			t.Errorf("misaligned:\n%s", buf.String())
			break
		}
	}
	if !strings.HasPrefix(lines[2], "static-200ms ") || !strings.Contains(lines[2], "1.011") || !strings.Contains(lines[3], " -") {
		t.Errorf("unexpected rows:\n%s", buf.String())
	}
	if err := FormatTable(&buf, nil); err != nil {
		t.Errorf("empty table: %v", err)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"disabled": "disabled", "static-200ms": "static-200ms", "p99_dynamic": "p99-dynamic",
		"Driver Default": "driver-default", "": "policy", "a/b": "a-b", "über": "-ber",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFmtNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		prec int
		want string
	}{
		{12.3456, 3, "12.346"}, {12.5, 3, "12.5"}, {100, 3, "100"}, {-0.0001, 3, "0"},
		{1.0000001, 6, "1"}, {math.NaN(), 3, ""}, {math.Inf(-1), 3, ""}, {0.0105, 6, "0.0105"},
	} {
		if got := fmtNum(c.v, c.prec); got != c.want {
			t.Errorf("fmtNum(%v, %d) = %q, want %q", c.v, c.prec, got, c.want)
		}
	}
}

func TestTickers(t *testing.T) {
	// log ticks never panic and label decades.
	if ticks := (logTicks{}).Ticks(0, 10); ticks != nil {
		t.Errorf("invalid range gave %v", ticks)
	}
	var labels []string
	for _, tk := range (logTicks{}).Ticks(1, 1000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if !reflect.DeepEqual(labels, []string{"1", "10", "100", "1000"}) {
		t.Errorf("log labels %v", labels)
	}
	labels = nil
	for _, tk := range (linTicks{}).Ticks(0.995, 1.055) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if !reflect.DeepEqual(labels, []string{"1.00", "1.01", "1.02", "1.03", "1.04", "1.05"}) {
		t.Errorf("linear labels %v", labels)
	}
	if fineDown(0.03) != 0.03 || fineUp(0.031) != 0.04 || fineUp(100) != 100 || fineDown(7) != 6 || fineUp(2204) != 2500 {
		t.Errorf("nice rounding: %v %v %v %v %v", fineDown(0.03), fineUp(0.031), fineUp(100), fineDown(7), fineUp(2204))
	}
}

func TestWriteFileAtomic(t *testing.T) {
	t.Run("success leaves no temp file", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "out.txt")
		if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(p, []byte("new content")); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != "new content" {
			t.Errorf("content %q", got)
		}
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644", fi.Mode().Perm())
		}
		assertOnlyFiles(t, dir, "out.txt")
	})
	t.Run("target is a directory", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "target")
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "inner"), []byte("keep"), 0o644)
		err := WriteFileAtomic(p, []byte("x"))
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("error %v should name %s", err, p)
		}
		if got, _ := os.ReadFile(filepath.Join(p, "inner")); string(got) != "keep" {
			t.Error("directory contents changed")
		}
		assertOnlyFiles(t, dir, "target")
	})
	t.Run("sync failure keeps old file", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "out.txt")
		os.WriteFile(p, []byte("old"), 0o644)
		injected := errors.New("injected sync failure")
		old := syncFile
		syncFile = func(*os.File) error { return injected }
		defer func() { syncFile = old }()
		err := WriteFileAtomic(p, []byte("new"))
		if !errors.Is(err, injected) || !strings.Contains(err.Error(), p) {
			t.Fatalf("error %v", err)
		}
		if got, _ := os.ReadFile(p); string(got) != "old" {
			t.Errorf("old file changed to %q", got)
		}
		assertOnlyFiles(t, dir, "out.txt")
	})
	t.Run("rename failure keeps old file", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "out.txt")
		os.WriteFile(p, []byte("old"), 0o644)
		old := rename
		rename = func(string, string) error { return errors.New("injected rename failure") }
		defer func() { rename = old }()
		if err := WriteFileAtomic(p, []byte("new")); err == nil {
			t.Fatal("want error")
		}
		if got, _ := os.ReadFile(p); string(got) != "old" {
			t.Errorf("old file changed to %q", got)
		}
		assertOnlyFiles(t, dir, "out.txt")
	})
	t.Run("read-only directory", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root ignores directory permissions")
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "out.txt")
		os.WriteFile(p, []byte("old"), 0o644)
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
		if err := WriteFileAtomic(p, []byte("new")); err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("error %v", err)
		}
		if got, _ := os.ReadFile(p); string(got) != "old" {
			t.Errorf("old file changed to %q", got)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "nope", "out.txt")
		if err := WriteFileAtomic(p, []byte("x")); err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("error %v", err)
		}
	})
}

func assertOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !reflect.DeepEqual(got, sortedCopy(names)) {
		t.Errorf("directory holds %v, want %v (temp file left behind?)", got, names)
	}
}

// TestSVGCompact: every regeneration commits the charts, so the SVG is
// kept small and stable: the font family is stated once (not on each of
// ~40 texts), coordinates have at most one decimal (vgsvg writes five
// significant digits, "106.08"), and rendering twice gives the same bytes.
func TestSVGCompact(t *testing.T) {
	r := timelineRun()
	raw := vgsvg.New(ChartWidth, ChartHeight)
	drawChart(draw.New(raw), timelineChart(r))
	var rawBuf bytes.Buffer
	if _, err := raw.WriteTo(&rawBuf); err != nil {
		t.Fatal(err)
	}
	data, err := renderChart(func() *chart { return timelineChart(r) }, "svg")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := renderChart(func() *chart { return timelineChart(r) }, "svg"); !bytes.Equal(data, again) {
		t.Error("two renders of one chart differ")
	}
	s := string(data)
	if n := strings.Count(s, "font-family"); n != 1 {
		t.Errorf("font-family stated %d times, want once on the root", n)
	}
	if !strings.Contains(s, `<svg font-family="'Liberation Sans',Arial,Helvetica,sans-serif"`) {
		t.Errorf("root element lacks the font list: %.200s", s)
	}
	if strings.Contains(s, "font-variant") {
		t.Error("per-text font-variant/weight/style left in")
	}
	if m := regexp.MustCompile(`\b(d|x|y)="[^"]*[0-9]\.[0-9]{2}`).FindString(s); m != "" {
		t.Errorf("coordinate with more than one decimal: %q", m)
	}
	if strings.Contains(s, "-0,") || strings.Contains(s, `"-0"`) {
		t.Error(`"-0" coordinate`)
	}
	if len(data) > len(rawBuf.Bytes())*9/10 {
		t.Errorf("compact SVG %d bytes, vgsvg's %d: want at least a tenth less", len(data), rawBuf.Len())
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("invalid XML: %v", err)
		}
	}
}
