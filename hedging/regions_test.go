package hedging_test

import (
	"slices"
	"testing"

	"hedgelab/hedging"
)

func TestApplicableRegions(t *testing.T) {
	all := htRegions("A", "B", "C", "D")
	t.Run("nothing_excluded_returns_input_without_copy", func(t *testing.T) {
		for _, ex := range [][]hedging.Region{nil, {}} {
			got := hedging.ApplicableRegions(all, ex)
			if len(got) != len(all) || &got[0] != &all[0] {
				t.Errorf("ApplicableRegions(all, %v) copied or changed the list: %v", ex, got)
			}
		}
		allocs := testing.AllocsPerRun(1000, func() { _ = hedging.ApplicableRegions(all, nil) })
		if allocs != 0 {
			t.Errorf("ApplicableRegions with nothing excluded allocates %v times, want 0", allocs)
		}
	})
	for _, tc := range []struct {
		name string
		ex   []hedging.Region
		want []string
	}{
		{"exclude first", []hedging.Region{"A"}, []string{"B", "C", "D"}},
		{"exclude middle two", []hedging.Region{"C", "B"}, []string{"A", "D"}},
		{"exclude unknown", []hedging.Region{"X"}, []string{"A", "B", "C", "D"}},
		{"exclude all", []hedging.Region{"D", "C", "B", "A"}, nil},
		{"exclude all but one", []hedging.Region{"A", "B", "D"}, []string{"C"}},
		{"case sensitive", []hedging.Region{"a"}, []string{"A", "B", "C", "D"}},
		{"duplicates in excludes", []hedging.Region{"B", "B"}, []string{"A", "C", "D"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(all)
			got := hedging.ApplicableRegions(all, tc.ex)
			if !slices.Equal(got, htRegions(tc.want...)) {
				t.Errorf("ApplicableRegions(%v) = %v, want %v", tc.ex, got, tc.want)
			}
			if !slices.Equal(all, before) {
				t.Errorf("input mutated: %v", all)
			}
			if len(got) > 0 && &got[0] == &all[0] {
				// A filtered result must not alias the caller's list.
				got[0].Key = "mutated"
				if all[0].Key == "mutated" {
					t.Errorf("filtered result aliases the input")
				}
			}
		})
	}
	if got := hedging.ApplicableRegions(nil, []hedging.Region{"A"}); len(got) != 0 {
		t.Errorf("ApplicableRegions(nil) = %v", got)
	}
}

func TestAlternateExcludeRegions(t *testing.T) {
	all := htRegions("A", "B", "C")
	t.Run("alternate_region_pin_excludes_primary", func(t *testing.T) {
		got := hedging.AlternateExcludeRegions(nil, all, "B")
		if !slices.Contains(got, "A") {
			t.Errorf("pin %v does not exclude the primary A", got)
		}
		if slices.Contains(got, "B") {
			t.Errorf("pin %v excludes its own target B", got)
		}
		if !slices.Equal(got, []hedging.Region{"A", "C"}) {
			t.Errorf("pin = %v, want [A C] (all \\ {B}, preference order)", got)
		}
	})
	t.Run("alternate_region_pin_unions_user_excludes", func(t *testing.T) {
		// User excludes X (not an account region) and C.
		got := hedging.AlternateExcludeRegions([]hedging.Region{"X"}, all, "B")
		if !slices.Equal(got, []hedging.Region{"X", "A", "C"}) {
			t.Errorf("pin = %v, want [X A C] = {X} ∪ (all \\ {B})", got)
		}
		got = hedging.AlternateExcludeRegions([]hedging.Region{"C"}, htRegions("A", "B", "C", "D"), "D")
		if !slices.Equal(got, []hedging.Region{"C", "A", "B"}) {
			t.Errorf("pin = %v, want [C A B]", got)
		}
	})
	t.Run("no_duplicates", func(t *testing.T) {
		got := hedging.AlternateExcludeRegions([]hedging.Region{"C", "A"}, all, "B")
		if !slices.Equal(got, []hedging.Region{"C", "A"}) {
			t.Errorf("pin = %v, want [C A] (user order, no duplicates)", got)
		}
		seen := map[hedging.Region]bool{}
		for _, r := range got {
			if seen[r] {
				t.Errorf("%s appears twice in %v", r, got)
			}
			seen[r] = true
		}
	})
	t.Run("user_input_not_mutated", func(t *testing.T) {
		user := make([]hedging.Region, 1, 8)
		user[0] = "C"
		_ = hedging.AlternateExcludeRegions(user, all, "B")
		if len(user) != 1 || user[:2][1] != "" {
			t.Errorf("AlternateExcludeRegions wrote into the user's slice: %v", user[:2])
		}
	})
	t.Run("duplicate_user_excludes_collapse", func(t *testing.T) {
		got := hedging.AlternateExcludeRegions([]hedging.Region{"C", "C"}, all, "B")
		if !slices.Equal(got, []hedging.Region{"C", "A"}) {
			t.Errorf("pin = %v, want [C A]", got)
		}
	})
}

// §6.4.1 region+endpoint distinctness.
func TestDistinct(t *testing.T) {
	for _, tc := range []struct {
		name string
		p, a hedging.Endpoint
		want bool
	}{
		{"both differ", hedging.Endpoint{Region: "A", Key: "k1"}, hedging.Endpoint{Region: "B", Key: "k2"}, true},
		{"same region, different key", hedging.Endpoint{Region: "A", Key: "k1"}, hedging.Endpoint{Region: "A", Key: "k2"}, false},
		{"different region, same key (aliased replica)", hedging.Endpoint{Region: "A", Key: "k"}, hedging.Endpoint{Region: "B", Key: "k"}, false},
		{"identical", hedging.Endpoint{Region: "A", Key: "k"}, hedging.Endpoint{Region: "A", Key: "k"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hedging.Distinct(tc.p, tc.a); got != tc.want {
				t.Errorf("Distinct(%v, %v) = %v, want %v", tc.p, tc.a, got, tc.want)
			}
			if got := hedging.Distinct(tc.a, tc.p); got != tc.want {
				t.Errorf("Distinct is not symmetric for %v, %v", tc.p, tc.a)
			}
		})
	}
}

// PrimaryEndpoint is Begin's steady-state routing of the primary attempt:
// the first preferred region not excluded, or the write region for a
// single-master write (spec §6.2, §6.3, §13).
func TestPrimaryEndpoint(t *testing.T) {
	all := htRegions("A", "B", "C")
	for _, c := range []struct {
		name     string
		write    hedging.Region
		multi    bool
		kind     hedging.OperationKind
		excluded []hedging.Region
		want     hedging.Region // "" = no region
	}{
		{"read", "", false, hedging.PointRead, nil, "A"},
		{"read excluding the first", "", false, hedging.PointRead, []hedging.Region{"A"}, "B"},
		{"read excluding two", "", false, hedging.QueryPage, []hedging.Region{"B", "A"}, "C"},
		{"read excluding all", "", false, hedging.PointRead, []hedging.Region{"A", "B", "C"}, ""},
		{"single-master write", "B", false, hedging.Create, nil, "B"},
		{"single-master write ignores exclusions", "B", false, hedging.Upsert, []hedging.Region{"B"}, "B"},
		{"single-master read", "B", false, hedging.PointRead, nil, "A"},
		{"multi-master write", "B", true, hedging.Create, []hedging.Region{"A"}, "B"},
		{"multi-master write, first region", "C", true, hedging.Create, nil, "A"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := hedging.NewClient(hedging.Config{Regions: all, WriteRegion: c.write, MultiMaster: c.multi})
			if err != nil {
				t.Fatal(err)
			}
			e, ok := cl.PrimaryEndpoint(c.kind, c.excluded)
			if ok != (c.want != "") || e.Region != c.want {
				t.Errorf("PrimaryEndpoint = %v, %v; want %q", e, ok, c.want)
			}
			if !ok {
				return
			}
			// Begin sends the primary attempt to the same endpoint.
			var r hedging.Race
			eff := htBegin(cl, &r, 0, &hedging.Operation{Kind: c.kind, Partition: "p", ExcludeRegions: c.excluded})
			if eff.Len() == 0 || eff.At(0).Kind != hedging.ActSend || eff.At(0).Attempt.Endpoint != e {
				t.Errorf("Begin's first action %+v, want a send to %v", eff.At(0), e)
			}
		})
	}
}
