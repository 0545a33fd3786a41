package study

import (
	"fmt"
	"reflect"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hedgelab/simnet"
)

// The floating-point fields of simnet.Stats (the RU sums, each window's
// threshold sum) are the only part of a fold whose result depends on how
// replications are grouped: (a+b)+c and a+(b+c) can differ in the last
// bit. Counters and histograms add exactly in any grouping. So a shard's
// partial result carries its fold with those fields zeroed, plus each
// replication's floating-point fields, and [Merge] adds them up in the
// single run's order (replication 0, 1, 2, …), as [simnet.Stats.Merge]
// does: the result is the single run's, bit for bit. The fields are
// found by reflection, so a field added to simnet.Stats later is covered
// without a change here (TestMergeSemantics checks the assumption this
// rests on: Merge adds every floating-point field index by index).

var histType = reflect.TypeFor[hdr.Histogram]()

var floatTypes sync.Map // reflect.Type -> bool

// hasFloats reports whether values of t hold floating-point fields that
// Merge adds: t is a float, or a struct, pointer, slice or array leading
// to one. A histogram holds none (it merges exactly); maps are not
// followed (checkFloatLayout refuses a map of floats).
func hasFloats(t reflect.Type) bool {
	if v, ok := floatTypes.Load(t); ok {
		return v.(bool)
	}
	floatTypes.Store(t, false) // breaks cycles
	var has bool
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		has = true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		has = hasFloats(t.Elem())
	case reflect.Struct:
		if t == histType {
			break
		}
		for i := 0; i < t.NumField(); i++ {
			has = has || hasFloats(t.Field(i).Type)
		}
	}
	floatTypes.Store(t, has)
	return has
}

// checkFloatLayout reports a floating-point field the fold of partial
// results cannot carry: one in a map or behind an interface.
func checkFloatLayout(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Map:
		if hasFloats(t.Key()) || hasFloats(t.Elem()) {
			return fmt.Errorf("study: %s is a map holding floating-point values, which partial results cannot add in order", path)
		}
	case reflect.Interface:
		return fmt.Errorf("study: %s is an interface, which partial results cannot encode", path)
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return checkFloatLayout(t.Elem(), path+"[]", seen)
	case reflect.Struct:
		if t == histType {
			return nil
		}
		for i := 0; i < t.NumField(); i++ {
			if err := checkFloatLayout(t.Field(i).Type, path+"."+t.Field(i).Name, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// zipFloats applies op to each floating-point field of src and the field
// at the same place in dst, growing dst's slices and allocating its nil
// pointers on the way when grow is set (and otherwise reporting a shape
// that differs). dst must be addressable.
func zipFloats(dst, src reflect.Value, grow bool, op func(d reflect.Value, s float64)) error {
	t := src.Type()
	if !hasFloats(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		op(dst, src.Float())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if err := zipFloats(dst.Field(i), src.Field(i), grow, op); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		if src.IsNil() {
			return nil
		}
		if dst.IsNil() {
			if !grow {
				return fmt.Errorf("study: partial results do not fit: %s missing", t)
			}
			dst.Set(reflect.New(t.Elem()))
		}
		return zipFloats(dst.Elem(), src.Elem(), grow, op)
	case reflect.Slice:
		if n := src.Len(); dst.Len() < n {
			if !grow {
				return fmt.Errorf("study: partial results do not fit: %d elements of %s, want %d", dst.Len(), t, n)
			}
			dst.Set(reflect.AppendSlice(dst, reflect.MakeSlice(t, n-dst.Len(), n-dst.Len())))
		}
		fallthrough
	case reflect.Array:
		for i := 0; i < src.Len(); i++ {
			if err := zipFloats(dst.Index(i), src.Index(i), grow, op); err != nil {
				return err
			}
		}
	}
	return nil
}

// floatsOf returns a Stats holding only s's floating-point fields, in
// their places (the slices and pointers leading to them, nothing else).
func floatsOf(s *simnet.Stats) *simnet.Stats {
	out := &simnet.Stats{}
	_ = zipFloats(reflect.ValueOf(out).Elem(), reflect.ValueOf(s).Elem(), true, func(d reflect.Value, x float64) { d.SetFloat(x) })
	return out
}

// addFloats adds src's floating-point fields into dst's, as
// simnet.Stats.Merge does (window by window, growing dst's timeline).
func addFloats(dst, src *simnet.Stats) {
	_ = zipFloats(reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem(), true, func(d reflect.Value, x float64) { d.SetFloat(d.Float() + x) })
}

// setFloats sets dst's floating-point fields to src's; dst must already
// have src's shape.
func setFloats(dst, src *simnet.Stats) error {
	return zipFloats(reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem(), false, func(d reflect.Value, x float64) { d.SetFloat(x) })
}

// zeroFloats sets s's floating-point fields to 0.
func zeroFloats(s *simnet.Stats) {
	v := reflect.ValueOf(s).Elem()
	_ = zipFloats(v, v, false, func(d reflect.Value, _ float64) { d.SetFloat(0) })
}
