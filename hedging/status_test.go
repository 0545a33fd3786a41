package hedging_test

import (
	"testing"

	"hedgelab/hedging"
)

// htFinalRows is every row of the spec §7.2 table (one or more concrete
// statuses per row), plus the neighbouring classes the table implies.
var htFinalRows = []struct {
	row   string // the §7.2 row or the class it stands for
	st    hedging.Status
	final bool
}{
	// §7.2 rows.
	{"200 *", htSt(200, 0), true},
	{"200 *", htSt(200, 1002), true},
	{"304 *", htSt(304, 0), true},
	{"400 *", htSt(400, 0), true},
	{"400 *", htSt(400, 1001), true},
	{"401 *", htSt(401, 0), true},
	{"403/0", htSt(403, 0), true},
	{"403/3 WriteForbidden", htSt(403, hedging.SubStatusWriteForbidden), true},
	{"403/other", htSt(403, 1008), true},
	{"404/0", htSt(404, 0), true},
	{"404/1002", htSt(404, hedging.SubStatusReadSessionNotAvailable), false},
	{"405 *", htSt(405, 0), true},
	{"408 *", htSt(408, 0), false},
	{"409 *", htSt(409, 0), true},
	{"410 *", htSt(410, 0), false},
	{"410/1002", htSt(410, 1002), false},
	{"412 *", htSt(412, 0), true},
	{"413 *", htSt(413, 0), true},
	{"422 *", htSt(422, 0), true},
	{"429/3092", htSt(429, hedging.SubStatusSystemResourceUnavailable), false},
	{"429/0 (none)", htSt(429, 0), false},
	{"429/3200", htSt(429, hedging.SubStatusRUBudgetExceeded), true},
	{"429/3210", htSt(429, hedging.SubStatusRUBudgetExceededMaster), true},
	{"429/3214", htSt(429, hedging.SubStatusHotPartitionKeyThrottled), true},
	{"451 *", htSt(451, 0), true},
	{"500 *", htSt(500, 0), false},
	{"501 *", htSt(501, 0), true},
	{"503 *", htSt(503, 0), false},
	{"503/sub", htSt(503, 21008), false},
	{"505 *", htSt(505, 0), true},
	// Classes around the table: 1xx/2xx/3xx final (§7.1 "code < 400").
	{"1xx", htSt(100, 0), true},
	{"1xx", htSt(101, 0), true},
	{"2xx", htSt(201, 0), true},
	{"2xx", htSt(204, 0), true},
	{"3xx", htSt(301, 0), true},
	{"3xx", htSt(302, 0), true},
	{"3xx", htSt(399, 0), true},
	// Other 4xx/5xx not listed: transient.
	{"404/other", htSt(404, 1003), false},
	{"429/other", htSt(429, 1234), false},
	{"402", htSt(402, 0), false},
	{"499", htSt(499, 0), false},
	{"502", htSt(502, 0), false},
	{"504", htSt(504, 0), false},
	{"599", htSt(599, 0), false},
	// Outside 100–599: IsFinal is total (below 400 final, otherwise transient).
	{"0", htSt(0, 0), true},
	{"-1", htSt(-1, 0), true},
	{"99", htSt(99, 0), true},
	{"600", htSt(600, 0), false},
	{"999", htSt(999, 0), false},
	{"1<<40", htSt(1<<40, 0), false},
	{"negative substatus", htSt(404, -1), false},
}

func TestIsFinalTable(t *testing.T) {
	for _, tc := range htFinalRows {
		t.Run(tc.row+"="+tc.st.String(), func(t *testing.T) {
			if got := hedging.IsFinal(tc.st); got != tc.final {
				t.Errorf("IsFinal(%v) = %v, want %v (§7.2 row %q)", tc.st, got, tc.final, tc.row)
			}
			// Result.Final agrees for a response (no transport error).
			if got := (hedging.Result{Status: tc.st}).Final(); got != tc.final {
				t.Errorf("Result{%v}.Final() = %v, want %v", tc.st, got, tc.final)
			}
		})
	}
}

// The §15.1 named classification tests.
func TestIsFinalResultSpecTests(t *testing.T) {
	for _, tc := range []struct {
		name  string
		st    hedging.Status
		final bool
	}{
		{"is_final_result_success", htSt(200, 0), true},
		{"is_final_result_conflict", htSt(409, 0), true},
		{"is_final_result_503", htSt(503, 0), false},
		{"is_final_result_404_0", htSt(404, 0), true},
		{"is_final_result_404_1002", htSt(404, 1002), false},
		{"is_final_result_429", htSt(429, 0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hedging.IsFinal(tc.st); got != tc.final {
				t.Errorf("IsFinal(%v) = %v, want %v", tc.st, got, tc.final)
			}
		})
	}
}

func TestResultFinalTransportError(t *testing.T) {
	// A transport error is transient whatever the status field says.
	r := hedging.Result{Status: htSt(200, 0), Err: errTest}
	if r.Final() {
		t.Errorf("Result with Err is final")
	}
}

type htErr string

func (e htErr) Error() string { return string(e) }

const errTest = htErr("boom")

// Every row of the §7.2.1 table, plus the other spawn triggers.
func TestCanSpawnHedgeTable(t *testing.T) {
	for _, tc := range []struct {
		row   string
		st    hedging.Status
		spawn bool
	}{
		{"429/3092 SYSTEM_RESOURCE_UNAVAILABLE", htSt(429, 3092), true},
		{"429/3200 RU_BUDGET_EXCEEDED", htSt(429, 3200), false},
		{"429/3210 RU_BUDGET_EXCEEDED_FOR_MASTER", htSt(429, 3210), false},
		{"429/3214 HOT_PARTITION_KEY_THROTTLED", htSt(429, 3214), false},
		{"429 other", htSt(429, 0), false},
		{"429 other", htSt(429, 3093), false},
		{"429 other", htSt(429, 1002), false},
		{"503", htSt(503, 0), true},
		{"503 with sub-status", htSt(503, 21008), true},
		{"404/1002", htSt(404, 1002), true},
		{"404/other", htSt(404, 1003), false},
		{"408", htSt(408, 0), false},
		{"410", htSt(410, 0), false},
		{"410/1002", htSt(410, 1002), false},
		{"500", htSt(500, 0), false},
		{"502", htSt(502, 0), false},
		{"504", htSt(504, 0), false},
		{"403/1008", htSt(403, 1008), false},
		{"410/1022", htSt(410, 1022), false},
	} {
		t.Run(tc.row+"="+tc.st.String(), func(t *testing.T) {
			if got := hedging.CanSpawnHedge(hedging.PointRead, tc.st); got != tc.spawn {
				t.Errorf("CanSpawnHedge(read, %v) = %v, want %v", tc.st, got, tc.spawn)
			}
			if got := hedging.CanSpawnHedge(hedging.QueryPlan, tc.st); got != tc.spawn {
				t.Errorf("CanSpawnHedge(query_plan, %v) = %v, want %v (a data-plane read)", tc.st, got, tc.spawn)
			}
		})
	}
	t.Run("finals_never", func(t *testing.T) {
		n := 0
		for _, tc := range htFinalRows {
			if tc.final {
				n++
				if hedging.CanSpawnHedge(hedging.PointRead, tc.st) {
					t.Errorf("CanSpawnHedge(%v) = true for a final status", tc.st)
				}
			}
		}
		if n < 20 {
			t.Fatalf("only %d final rows checked", n)
		}
	})
}

// A metadata read's regional failures (spec §16 Phase 2): .NET's
// MetadataHedgingStrategy hedges at once on 503, 500, 410/1022
// (LeaseNotFound), 403/1008 (DatabaseAccountNotFound) and network errors,
// and 403/1008 is then not final. Every other row is the data plane's.
func TestCanSpawnHedgeMetadata(t *testing.T) {
	for _, tc := range []struct {
		st           hedging.Status
		spawn, final bool
	}{
		{htSt(503, 0), true, false},
		{htSt(500, 0), true, false},
		{htSt(410, 1022), true, false},
		{htSt(403, 1008), true, false},
		{htSt(404, 1002), true, false},
		{htSt(429, 3092), true, false},
		{htSt(410, 0), false, false},
		{htSt(410, 1002), false, false},
		{htSt(408, 0), false, false},
		{htSt(403, 0), false, true},
		{htSt(403, 3), false, true},
		{htSt(404, 0), false, true},
		{htSt(409, 0), false, true},
		{htSt(200, 0), false, true},
	} {
		if got := hedging.CanSpawnHedge(hedging.MetadataRead, tc.st); got != tc.spawn {
			t.Errorf("CanSpawnHedge(metadata_read, %v) = %v, want %v", tc.st, got, tc.spawn)
		}
		if got := hedging.IsFinalFor(hedging.MetadataRead, tc.st); got != tc.final {
			t.Errorf("IsFinalFor(metadata_read, %v) = %v, want %v", tc.st, got, tc.final)
		}
	}
	if !hedging.IsFinalFor(hedging.PointRead, htSt(403, 1008)) {
		t.Errorf("a point read's 403/1008 is final (§7.2), got transient")
	}
}

func TestStatusString(t *testing.T) {
	for _, tc := range []struct {
		st   hedging.Status
		want string
	}{
		{htSt(200, 0), "200"},
		{htSt(503, 0), "503"},
		{htSt(404, 1002), "404/1002"},
		{htSt(429, 3092), "429/3092"},
		{htSt(0, 0), "0"},
		{htSt(-1, -2), "-1/-2"},
	} {
		if got := tc.st.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.st, got, tc.want)
		}
	}
}

func TestSubStatusConstants(t *testing.T) {
	// The constants are the wire values of spec §7.2.1 / §9.6.
	for _, tc := range []struct{ got, want int }{
		{hedging.SubStatusNone, 0},
		{hedging.SubStatusWriteForbidden, 3},
		{hedging.SubStatusDatabaseAccountNotFound, 1008},
		{hedging.SubStatusLeaseNotFound, 1022},
		{hedging.SubStatusReadSessionNotAvailable, 1002},
		{hedging.SubStatusSystemResourceUnavailable, 3092},
		{hedging.SubStatusRUBudgetExceeded, 3200},
		{hedging.SubStatusRUBudgetExceededMaster, 3210},
		{hedging.SubStatusHotPartitionKeyThrottled, 3214},
	} {
		if tc.got != tc.want {
			t.Errorf("sub-status constant = %d, want %d", tc.got, tc.want)
		}
	}
}
