package study

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"pgregory.net/rapid"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// filler fills every exported field of a simnet.Stats with random values
// by reflection, so the tests below cover fields added later without a
// change. Shapes (slice lengths, nil pointers, map keys) come from the
// test case's shape seed and the field's path, so every replication of a
// case has the same replicas, feeds and so on, as runs of one
// configuration do; the timelines (which runs ended by max_ops grow)
// have their own length per replication.
type filler struct {
	rng   *rand.Rand
	shape uint64
}

// sameInEveryRun names the fields that hold a configuration (the same in
// every run of one scenario; Merge keeps the first run's).
var sameInEveryRun = map[string]bool{".Capacity.Replicas[].Servers": true, ".Capacity.Replicas[].QueueLimit": true}

// grows names the slices whose length differs between runs of one
// configuration (Merge grows them).
var grows = map[string]bool{".Timeline": true, ".Capacity.Replicas[].BusyByWindow": true, ".Capacity.Replicas[].BackgroundWindows": true}

func (f *filler) pick(path string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(path))
	return int((h.Sum64() ^ f.shape) % uint64(n))
}

func (f *filler) fill(v reflect.Value, path string) {
	t := v.Type()
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(f.rng.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if sameInEveryRun[path] {
			v.SetInt(int64(f.pick(path, 1000)))
			return
		}
		v.SetInt(f.rng.Int64N(1000))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(f.rng.Uint64N(1000))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(f.rng.Float64() * 1000) // random mantissas: sums depend on order
	case reflect.String:
		v.SetString("r" + path)
	case reflect.Pointer:
		if t.Elem() == histType {
			h := simnet.NewLatencyHistogram()
			for range f.rng.IntN(20) {
				_ = h.RecordValue(1 + f.rng.Int64N(1_000_000))
			}
			v.Set(reflect.ValueOf(h))
			return
		}
		if f.pick(path, 4) == 0 {
			return // nil in every replication of this case
		}
		p := reflect.New(t.Elem())
		f.fill(p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		n := 1 + int(f.shape%3) // one length for every slice: Merge pairs replicas' slices index by index
		if grows[path] {
			n = f.rng.IntN(5)
		}
		s := reflect.MakeSlice(t, n, n)
		for i := range n {
			f.fill(s.Index(i), path+"[]")
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), path+"[]")
		}
	case reflect.Map:
		m := reflect.MakeMap(t)
		for range f.rng.IntN(4) {
			k := reflect.New(t.Key()).Elem()
			if t.Key() == reflect.TypeFor[hedging.Status]() {
				k.Set(reflect.ValueOf(hedging.Status{Code: 400 + f.rng.IntN(3), SubStatus: f.rng.IntN(2)}))
			} else {
				f.fill(k, path+"[key]")
			}
			x := reflect.New(t.Elem()).Elem()
			f.fill(x, path+"[]")
			m.SetMapIndex(k, x)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				f.fill(v.Field(i), path+"."+t.Field(i).Name)
			}
		}
	}
}

// randomReps returns reps random Stats of one shape.
func randomReps(seed, shape uint64, reps int) []*simnet.Stats {
	f := &filler{rng: rand.New(rand.NewPCG(seed, 1)), shape: shape}
	out := make([]*simnet.Stats, reps)
	for r := range out {
		s := &simnet.Stats{}
		f.fill(reflect.ValueOf(s).Elem(), "")
		s.Policy, s.WindowWidth = "x", 7
		if f.rng.IntN(5) == 0 {
			s.Ops = 0 // an empty replication
		}
		out[r] = s
	}
	return out
}

func encoded(t interface{ Fatal(...any) }, s *simnet.Stats) []byte {
	b, err := encodeStats(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The codec carries every field of simnet.Stats: decoding gives back the
// same value (DeepEqual, histograms compared by their counts) and the same
// bytes.
func TestStatsCodecRoundTrip(t *testing.T) {
	if checkLayout != nil {
		t.Fatal(checkLayout)
	}
	for seed := range uint64(20) {
		s := randomReps(seed, seed*31, 1)[0]
		b := encoded(t, s)
		d := &decoder{data: b}
		got := d.decodeStats()
		if d.err != nil || len(d.data) != 0 {
			t.Fatalf("seed %d: decode: %v, %d bytes left", seed, d.err, len(d.data))
		}
		if !bytes.Equal(encoded(t, got), b) {
			t.Fatalf("seed %d: re-encoding differs", seed)
		}
		if !equalStats(s, got) {
			t.Fatalf("seed %d: decoded Stats differs from the original", seed)
		}
	}
}

// equalStats compares two Stats field by field, histograms by Equals.
func equalStats(a, b *simnet.Stats) bool {
	return equalValues(reflect.ValueOf(a), reflect.ValueOf(b))
}

func equalValues(a, b reflect.Value) bool {
	t := a.Type()
	switch t.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if t.Elem() == histType {
			return a.Interface().(*hdr.Histogram).Equals(b.Interface().(*hdr.Histogram))
		}
		return equalValues(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !equalValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() && !equalValues(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float() || a.Float() != a.Float() && b.Float() != b.Float()
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// The property the shards rest on: simnet.Stats.Merge over replications
// 0..R-1 in order equals, bit for bit, the merge of shards' partial
// results (contiguous pieces, each folded alone, floating-point fields
// zeroed and carried per replication, added in any order) — for random
// values in every field. It fails if a field is added whose merge depends
// on grouping other than by addition of floats (a float kept as a
// maximum, a "last value" counter), which partials cannot carry.
func TestMergeSemantics(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine, random merges: nothing for the race detector (94 s under -race); the test step runs it")
	}
	rapid.Check(t, func(rt *rapid.T) {
		reps := rapid.IntRange(1, 8).Draw(rt, "reps")
		count := rapid.IntRange(1, reps+2).Draw(rt, "shards")
		seed := rapid.Uint64().Draw(rt, "seed")
		shape := rapid.Uint64().Draw(rt, "shape")
		stats := randomReps(seed, shape, reps)
		inputs := []Input{{Config: &simnet.Config{}, Policies: []simnet.Policy{{Name: "x"}}, Replications: reps}}

		seq := newMerger("x", 0, reps, false)
		for r, s := range stats {
			seq.add(r, s)
		}
		want, err := results(inputs, [][]*merger{{seq}}, nil, 1)

		m, err2 := NewShardMerge(inputs)
		if err2 != nil {
			rt.Fatal(err2)
		}
		order := rand.New(rand.NewPCG(seed, 2)).Perm(count)
		for _, k := range order {
			sh := Shard{k, count}
			p := &Partial{Shard: sh, shape: shapeOf(inputs)}
			for _, g := range groupRuns(shardRuns(inputs, sh)) {
				mg := newMerger("x", g.first, reps, true)
				for r := g.first; r < g.first+g.n; r++ {
					mg.add(r, stats[r])
				}
				zeroFloats(mg.merged)
				p.pairs = append(p.pairs, pairState{in: g.in, p: g.p, first: g.first, state: mg.merged, reps: mg.reps})
			}
			var buf bytes.Buffer
			if _, err := p.WriteTo(&buf); err != nil {
				rt.Fatal(err)
			}
			back, err := ReadPartial(&buf)
			if err != nil {
				rt.Fatal(err)
			}
			if err := m.Add(back, sh.String()); err != nil {
				rt.Fatal(err)
			}
		}
		got, err3 := m.Results()
		if (err == nil) != (err3 == nil) {
			rt.Fatalf("single run error %v, merged error %v", err, err3)
		}
		if err != nil {
			return
		}
		a, b := want[0].Policies[0], got[0].Policies[0]
		if !bytes.Equal(encoded(rt, a.Merged), encoded(rt, b.Merged)) {
			rt.Fatalf("merged Stats differ at %s (a configuration field, the same in every run? add it to sameInEveryRun)", diffStats(a.Merged, b.Merged))
		}
		if a.EmptyReplications != b.EmptyReplications || !slices.EqualFunc(a.PerRep, b.PerRep, slices.Equal) {
			rt.Fatalf("per-replication figures differ: %v (%d empty) vs %v (%d empty)", a.PerRep, a.EmptyReplications, b.PerRep, b.EmptyReplications)
		}
	})
}

// Shards cut the runs into contiguous pieces of about equal expected
// work: with equal costs their sizes differ by at most one run; with
// unequal ones no shard is further from total/count than one run's cost.
func TestShardSplit(t *testing.T) {
	pols := []simnet.Policy{{Name: "a"}, {Name: "b"}}
	cfg := func(rate float64) *simnet.Config {
		return &simnet.Config{Duration: 1e9, Workload: simnet.Workload{RatePerSec: rate}}
	}
	for _, c := range []struct {
		name   string
		inputs []Input
	}{
		{"equal", []Input{{Config: cfg(100), Policies: pols, Replications: 7}}},
		{"growing", []Input{{Config: cfg(100), Policies: pols, Replications: 3}, {Config: cfg(1000), Policies: pols[:1], Replications: 3}, {Config: cfg(5000), Policies: pols, Replications: 2}}},
	} {
		runs := allRuns(c.inputs)
		for count := 1; count <= len(runs)+3; count++ {
			of := shardOf(c.inputs, runs, count)
			if !slices.IsSorted(of) || of[0] < 0 || of[len(of)-1] >= count {
				t.Fatalf("%s, %d shards: assignment %v not contiguous in 0..%d", c.name, count, of, count-1)
			}
			work := make([]float64, count)
			n := make([]int, count)
			var total, most float64
			for k, j := range runs {
				x := float64(ExpectedOps(c.inputs[j.in].Config))
				work[of[k]] += x
				n[of[k]]++
				total += x
				most = max(most, x)
			}
			for k := range count {
				if c.name == "equal" && count <= len(runs) && (n[k] < len(runs)/count || n[k] > len(runs)/count+1) {
					t.Errorf("%s, %d shards: shard %d has %d of %d runs", c.name, count, k, n[k], len(runs))
				}
				if d := work[k] - total/float64(count); d > most || d < -most {
					t.Errorf("%s, %d shards: shard %d has work %v, want %v ± %v", c.name, count, k, work[k], total/float64(count), most)
				}
			}
			// Every run is in exactly one shard.
			var union []run
			for k := range count {
				union = append(union, shardRuns(c.inputs, Shard{k, count})...)
			}
			if !slices.Equal(union, runs) {
				t.Fatalf("%s, %d shards: the shards' runs are not the study's runs", c.name, count)
			}
		}
	}
}

// diffStats returns the path of the first field where a and b differ
// ("" when they are equal), for failure messages.
func diffStats(a, b *simnet.Stats) string {
	return diffValues(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem(), "Stats")
}

func diffValues(a, b reflect.Value, path string) string {
	t := a.Type()
	switch t.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + " (nil)"
			}
			return ""
		}
		if t.Elem() == histType {
			if !a.Interface().(*hdr.Histogram).Equals(b.Interface().(*hdr.Histogram)) {
				return path
			}
			return ""
		}
		return diffValues(a.Elem(), b.Elem(), path)
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return path + " (length)"
		}
		for i := range a.Len() {
			if d := diffValues(a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]"); d != "" {
				return d
			}
		}
		return ""
	case reflect.Struct:
		for i := range t.NumField() {
			if d := diffValues(a.Field(i), b.Field(i), path+"."+t.Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return fmt.Sprintf("%s (%v vs %v)", path, a.Interface(), b.Interface())
	}
	return ""
}
