package study_test

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/study"
	"hedgelab/simnet"
)

// shardInputs is a small study of three inputs: one with several
// replications, one that ends on max_ops (its timelines grow), one so
// sparse that some replications see no operation.
func shardInputs(t *testing.T) []study.Input {
	cfg, pols := scenario(t)
	cfg.Duration = 2 * time.Second
	// RU of 1.1 per read: the RU sums are inexact, so their grouping
	// shows in the last bits (as with any RU charge that is not an
	// integer: a cancelled read's share of its charge, a fractional size).
	cfg.RU = map[hedging.OperationKind]float64{hedging.PointRead: 1.1}
	// So are the threshold sums of a 2.7 ms threshold.
	th := hedging.MustThreshold(2700 * time.Microsecond)
	pols = append(pols, simnet.Policy{Name: "2.7ms", New: func() (hedging.AvailabilityStrategy, error) {
		return hedging.Hedging(hedging.NewHedgingStrategy(th)), nil
	}})
	capped := *cfg
	capped.Seed, capped.Duration, capped.MaxOps = 3, 0, 700
	sparse := *cfg
	sparse.Seed, sparse.Workload.RatePerSec = 5, 0.7
	return []study.Input{
		{Config: cfg, Policies: pols, Replications: 6, Label: "a"},
		{Config: &capped, Policies: pols[1:], Replications: 3, Label: "b"},
		{Config: &sparse, Policies: pols, Replications: 5, Label: "c"},
	}
}

// partials simulates every shard of count and returns their partial
// results as written and read back.
func partials(t *testing.T, inputs []study.Input, count int) []*study.Partial {
	t.Helper()
	var out []*study.Partial
	for k := range count {
		p, err := study.SimulateShard(inputs, study.Shard{Index: k, Count: count}, study.Options{Parallel: 2})
		if err != nil {
			t.Fatalf("shard %d/%d: %v", k, count, err)
		}
		var buf bytes.Buffer
		if _, err := p.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := study.ReadPartial(&buf)
		if err != nil {
			t.Fatalf("shard %d/%d: read back: %v", k, count, err)
		}
		out = append(out, back)
	}
	return out
}

// Merging every shard's partial result, in any order, gives exactly
// SimulateAll's results: the same figures, CCDFs, quantiles and
// timelines, bit for bit, whatever the number of shards (more shards than
// runs leaves some empty).
func TestShardsMergeToSimulateAll(t *testing.T) {
	inputs := shardInputs(t)
	want, err := study.SimulateAll(inputs, study.Options{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want[2].Policies[0].EmptyReplications == 0 {
		t.Fatal("the sparse input has no empty replication: the test would not cover them")
	}
	runs := 0
	for _, in := range inputs {
		runs += len(in.Policies) * in.Replications
	}
	for _, count := range []int{1, 2, 5, runs + 3} {
		parts := partials(t, inputs, count)
		m, err := study.NewShardMerge(inputs)
		if err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, k := range rand.New(rand.NewPCG(uint64(count), 0)).Perm(count) {
			held += parts[k].Runs()
			if err := m.Add(parts[k], parts[k].Shard.String()); err != nil {
				t.Fatal(err)
			}
		}
		if held != runs {
			t.Errorf("%d shards hold %d runs, want %d", count, held, runs)
		}
		got, err := m.Results()
		if err != nil {
			t.Fatalf("%d shards: %v", count, err)
		}
		for i := range want {
			if got[i].Replications != want[i].Replications || len(got[i].Policies) != len(want[i].Policies) {
				t.Fatalf("%d shards, input %d: shape differs", count, i)
			}
			for p := range want[i].Policies {
				a, b := study.Policy(want[i].Policies[p]), study.Policy(got[i].Policies[p])
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%d shards, input %d policy %s: merged report differs from the single run's\n got %+v\nwant %+v", count, i, a.Policy, b.Figures, a.Figures)
				}
				if a, b := want[i].Policies[p].Merged, got[i].Policies[p].Merged; a.RUCharged != b.RUCharged || a.RUReturned != b.RUReturned || !a.Latency.Equals(b.Latency) {
					t.Errorf("%d shards, input %d policy %d: merged measurements differ", count, i, p)
				}
			}
		}
	}
}

// A shard's partial result is the same bytes every time.
func TestPartialDeterministic(t *testing.T) {
	inputs := shardInputs(t)
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		p, err := study.SimulateShard(inputs, study.Shard{Index: 1, Count: 3}, study.Options{Parallel: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.WriteTo(buf); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two runs of one shard wrote different partial results")
	}
}

// Partials that do not belong together are refused with an error naming
// the partial; so are a missing shard, a corrupt file and a shard that
// does not exist.
func TestShardMergeRefuses(t *testing.T) {
	inputs := shardInputs(t)
	parts := partials(t, inputs, 3)
	add := func(inputs []study.Input, ps ...*study.Partial) error {
		m, err := study.NewShardMerge(inputs)
		if err != nil {
			return err
		}
		for i, p := range ps {
			if err := m.Add(p, "part"+string(rune('A'+i))); err != nil {
				return err
			}
		}
		_, err = m.Results()
		return err
	}
	other := partials(t, inputs, 2)
	fewer := append([]study.Input(nil), inputs...)
	fewer[0].Replications = 3
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"missing", add(inputs, parts[0], parts[2]), "shard 1/3 missing: the partial results given are shards 0/3, 2/3"},
		{"duplicate", add(inputs, parts[0], parts[1], parts[1]), "partC: shard 1/3 again: partB is shard 1/3 too"},
		{"other count", add(inputs, parts[0], other[1]), "partB: shard 1/2 of 2 shards; the partials before it are of 3 shards"},
		{"other study", add(fewer, parts[0]), "partA: a partial result of another study"},
		{"none", add(inputs), "no partial results to merge"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, c.err, c.want)
		}
	}
	var buf bytes.Buffer
	if _, err := parts[1].WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", data[:len(data)/2], "corrupt or truncated"},
		{"not gzip", []byte("name = \"x\"\n"), "not a partial result"},
		{"empty", nil, "not a partial result"},
	} {
		if _, err := study.ReadPartial(bytes.NewReader(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	for _, sh := range []study.Shard{{Index: 3, Count: 3}, {Index: -1, Count: 3}, {Index: 0, Count: 0}} {
		if _, err := study.SimulateShard(inputs, sh, study.Options{}); err == nil || !strings.Contains(err.Error(), "shard "+sh.String()) {
			t.Errorf("shard %s: error %v, want it refused", sh, err)
		}
	}
}

// A partial result's reader refuses what it cannot read, never panics,
// and what it accepts can be merged or refused without a panic.
func FuzzReadPartial(f *testing.F) {
	f.Add([]byte{})
	cfg, pols := scenario(f)
	cfg.Duration = 200 * time.Millisecond
	inputs := []study.Input{{Config: cfg, Policies: pols, Replications: 2}}
	for k := range 2 {
		p, err := study.SimulateShard(inputs, study.Shard{Index: k, Count: 2}, study.Options{Parallel: 1})
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := p.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := study.ReadPartial(bytes.NewReader(data))
		if err != nil {
			return
		}
		m, err := study.NewShardMerge(inputs)
		if err != nil {
			t.Fatal(err)
		}
		if m.Add(p, "fuzz") == nil {
			_, _ = m.Results()
		}
	})
}
