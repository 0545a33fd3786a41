package hedging_test

import (
	"strings"
	"testing"

	"hedgelab/hedging"
)

// htASCIILower lowercases ASCII letters only; the reference for ParseBool's
// case-insensitivity over its eight ASCII words.
func htASCIILower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// FuzzParseBool: never panics; accepts exactly the eight words of §4.4
// (true/false, 1/0, yes/no, on/off) in any case with surrounding white
// space trimmed, and rejects everything else with an error quoting it.
func FuzzParseBool(f *testing.F) {
	for _, s := range []string{"true", "FALSE", " yes ", "No", "on", "OFF", "1", "0", "", "maybe", "2", "tru", "\ttrue\n", "t rue", "truE\u00a0", "ſalse", "\u212aey"} {
		f.Add(s)
	}
	words := map[string]bool{"true": true, "1": true, "yes": true, "on": true, "false": false, "0": false, "no": false, "off": false}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := hedging.ParseBool(s)
		want, ok := words[htASCIILower(strings.TrimSpace(s))]
		if ok {
			if err != nil || got != want {
				t.Fatalf("ParseBool(%q) = %v, %v; want %v, nil", s, got, err, want)
			}
			return
		}
		if err == nil {
			t.Fatalf("ParseBool(%q) = %v, nil; want an error (not one of the eight words)", s, got)
		}
		if got {
			t.Fatalf("ParseBool(%q) returned true with an error", s)
		}
	})
}

// htIsFinalRef is a straightforward reference of the §7.2 table.
func htIsFinalRef(code, sub int) bool {
	switch {
	case code < 400:
		return true // 1xx/2xx/3xx (and anything below)
	case code == 404:
		return sub == 0
	case code == 429:
		return sub == 3200 || sub == 3210 || sub == 3214
	}
	finals := []int{400, 401, 403, 405, 409, 412, 413, 422, 451, 501, 505}
	for _, f := range finals {
		if code == f {
			return true
		}
	}
	return false
}

// htCanSpawnRef is the §7.2.1 reference: 503, 404/1002 and 429/3092; for a
// metadata read also 500, 410/1022 and 403/1008 (.NET's
// MetadataHedgingStrategy regional failures, spec §16 Phase 2).
func htCanSpawnRef(metadata bool, code, sub int) bool {
	return code == 503 || (code == 404 && sub == 1002) || (code == 429 && sub == 3092) ||
		metadata && (code == 500 || code == 410 && sub == 1022 || code == 403 && sub == 1008)
}

// FuzzIsFinal: IsFinal is total and agrees with the reference table;
// CanSpawnHedge agrees with its reference and implies !IsFinal.
func FuzzIsFinal(f *testing.F) {
	for _, s := range [][2]int{{200, 0}, {404, 0}, {404, 1002}, {429, 3092}, {429, 3200}, {429, 0}, {503, 0}, {403, 3}, {0, 0}, {-1, 0}, {600, 0}, {1 << 40, -1}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, code, sub int) {
		st := hedging.Status{Code: code, SubStatus: sub}
		final := hedging.IsFinal(st)
		if want := htIsFinalRef(code, sub); final != want {
			t.Fatalf("IsFinal(%v) = %v, reference %v", st, final, want)
		}
		for _, kind := range []hedging.OperationKind{hedging.PointRead, hedging.MetadataRead} {
			spawn := hedging.CanSpawnHedge(kind, st)
			if want := htCanSpawnRef(kind.IsMetadata(), code, sub); spawn != want {
				t.Fatalf("CanSpawnHedge(%v, %v) = %v, reference %v", kind, st, spawn, want)
			}
			if spawn && hedging.IsFinalFor(kind, st) {
				t.Fatalf("CanSpawnHedge(%v, %v) for a final status", kind, st)
			}
		}
		if (hedging.Result{Status: st}).Final() != final {
			t.Fatalf("Result.Final disagrees with IsFinal for %v", st)
		}
		if st.String() == "" {
			t.Fatalf("empty String() for %#v", st)
		}
	})
}
