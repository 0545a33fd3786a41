package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Sub-millisecond latencies keep 3 significant digits: the issue saw a
// mean of 0.0044 ms printed as 0.005 (3 decimals).
func TestFmtMsSignificantDigits(t *testing.T) {
	for _, c := range []struct {
		v           float64
		want, short string
	}{
		{0.0044, "0.0044", "0.00440"},
		{0.00444, "0.00444", "0.00444"},
		{0.000123, "0.000123", "0.000123"},
		{0.5, "0.5", "0.500"},
		{0.0125, "0.0125", "0.0125"},
		{0, "0", "0.00"},
		{1.5, "1.5", "1.50"},
		{12.3456, "12.346", "12.3"},
		{1234.5678, "1234.568", "1235"},
	} {
		if got := fmtMs(c.v); got != c.want {
			t.Errorf("fmtMs(%v) = %q, want %q", c.v, got, c.want)
		}
		if got := fmtMsShort(c.v); got != c.short {
			t.Errorf("fmtMsShort(%v) = %q, want %q", c.v, got, c.short)
		}
	}
	data, err := json.Marshal(struct{ M num }{num{0.0044, precMs}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"M":0.0044}`; string(data) != want {
		t.Errorf("JSON %s, want %s", data, want)
	}
}

// The legend under the table says what every column counts, that err
// counts final error responses (a 429/3200 is a failed read) and that the
// latencies include the failed operations.
func TestTableLegendNamesEveryColumn(t *testing.T) {
	var buf bytes.Buffer
	figs := []Figures{{Policy: "p", Ops: 1}}
	if err := FormatTable(&buf, figs); err != nil {
		t.Fatal(err)
	}
	header := strings.Fields(strings.SplitN(buf.String(), "\n", 2)[0])
	legend := TableLegend(figs, 1, "summary.json")
	for _, col := range header {
		if col == "policy" || col == "ms" || col == "%" {
			continue
		}
		if !strings.Contains(legend, col) {
			t.Errorf("legend %q does not explain column %q", legend, col)
		}
	}
	for _, want := range []string{"429/3200", "status >= 400", "failed ones included"} {
		if !strings.Contains(legend, want) {
			t.Errorf("legend %q lacks %q", legend, want)
		}
	}
	if strings.Contains(legend, "left out") {
		t.Errorf("legend %q mentions empty replications when there are none", legend)
	}
	figs[0].EmptyReplications = 2
	if l := TableLegend(figs, 5, "summary.json"); !strings.Contains(l, "2 of 5 replications had no operation") {
		t.Errorf("legend %q does not count the empty replications", l)
	}
}
