package fuzz

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"hedgelab/internal/tomltree"
	"hedgelab/scenarios"
)

// shrink returns a smaller scenario than doc that still breaks invariant
// inv (and that failure's detail), or nil when none of the candidates
// checked does. It is a greedy delta-debugging loop over edits of the
// document, in a fixed order — a shorter run, fewer policies, fewer list
// entries (episodes, faults, rate changes, ...), fewer regions, fewer
// sections and keys (back to their defaults), simpler distributions,
// smaller numbers — keeping every edit after which the scenario still
// validates and still breaks inv, until a whole pass keeps none or
// ShrinkBudget candidates were simulated (candidates the validator refuses
// cost little and count apart, up to 20 times as many).
func (e *engine) shrink(ctx context.Context, doc *tomltree.Table, inv, want string) (*tomltree.Table, string) {
	budget := e.opt.ShrinkBudget
	if inv == "hang" {
		return nil, "" // each check would last the whole timeout: the generated file is reported as it is
	}
	deep := inv == "determinism" || inv == "parallel"
	cur, detail := doc.Clone(), ""
	found := false
	evals, refused := 0, 0 // candidates simulated, and refused by the validator (cheap)
	try := func(c *tomltree.Table) bool {
		if evals >= budget || refused >= 20*budget || ctx.Err() != nil {
			return false
		}
		text := c.Marshal()
		if inv != "invalid" {
			if _, err := scenarios.Parse("candidate.toml", text); err != nil {
				refused++
				return false
			}
		}
		evals++
		for _, f := range e.check(ctx, text, deep) {
			if f.invariant == inv && (inv != "invalid" || shape(f.detail) == shape(want)) {
				detail = f.detail
				return true
			}
		}
		return false
	}
	for improved := true; improved && evals < budget && ctx.Err() == nil; {
		improved = false
		for _, edits := range editors {
			for {
				kept := false
				for _, c := range edits(cur) {
					if evals >= budget || ctx.Err() != nil {
						break
					}
					if try(c) {
						cur, kept, improved, found = c, true, true, true
						break
					}
				}
				if !kept {
					break
				}
			}
		}
	}
	if !found {
		return nil, ""
	}
	return cur, detail
}

// shape is a validation error without its file, line, numbers and
// element names: two errors of one rule have the same shape, so an
// "invalid" failure shrinks to a file refused for the same reason.
func shape(msg string) string {
	first, _, _ := strings.Cut(msg, "\n")
	if _, rest, ok := strings.Cut(first, ": "); ok { // the file:line prefix
		first = rest
	}
	field, text, _ := strings.Cut(first, ": ")
	parts := strings.Split(field, ".")
	for i := range parts {
		if i > 0 && arrayKeys[parts[i-1]] {
			parts[i] = "*" // an element, by index or name
		}
	}
	return strings.Join(parts, ".") + ": " + reNumber.ReplaceAllString(text, "#")
}

// arrayKeys are the schema's arrays of tables (and of values) whose
// elements errors name.
var arrayKeys = map[string]bool{"replicas": true, "endpoints": true, "policies": true, "episodes": true, "faults": true,
	"background": true, "rate_changes": true, "components": true, "events": true, "targets": true, "operations": true,
	"exclude_regions": true, "partitions": true, "rtt_ms": true, "replication_lag_ms": true, "mix": true, "ru": true}

var reNumber = regexp.MustCompile(`[-+]?[0-9][0-9.]*(e[-+]?[0-9]+)?`)

// editor returns candidate edits of a document, each a modified clone.
type editor func(*tomltree.Table) []*tomltree.Table

// editors are the shrinker's edits, in the order it tries them: the ones
// that make later checks cheap (a shorter run) first.
var editors = []editor{
	shorterRun,
	fewerEntries("policies", 1),
	dropRegion,
	fewerEntries("", 0),
	dropTables,
	dropKeys,
	simplerDists,
	smallerNumbers,
}

// shorterRun halves max_ops, or duration_s with every time in seconds
// (episodes, faults, rate changes, background windows), and drops a second
// replication.
func shorterRun(t *tomltree.Table) []*tomltree.Table {
	var out []*tomltree.Table
	if v, ok := t.Get("replications"); ok && v != int64(1) {
		c := t.Clone()
		c.Delete("replications")
		out = append(out, c)
	}
	if v, ok := t.Get("max_ops"); ok && v.(int64) > 1 {
		c := t.Clone()
		c.Set("max_ops", v.(int64)/2)
		out = append(out, c)
	}
	if v, ok := t.Get("duration_s"); ok {
		if d, _ := v.(float64); d > 0.5 {
			c := t.Clone()
			scaleSeconds(c, 0.5)
			out = append(out, c)
		}
	}
	return out
}

// secondKeys are the keys in seconds that scale with the run's length.
var secondKeys = map[string]bool{"duration_s": true, "start_s": true, "end_s": true, "at_s": true, "ramp_s": true,
	"ramp_up_s": true, "ramp_down_s": true}

func scaleSeconds(t *tomltree.Table, f float64) {
	for _, k := range t.Keys() {
		v, _ := t.Get(k)
		switch x := v.(type) {
		case float64:
			if secondKeys[k] {
				t.Set(k, roundSig(x*f))
			}
		case *tomltree.Table:
			scaleSeconds(x, f)
		case []*tomltree.Table:
			for _, e := range x {
				scaleSeconds(e, f)
			}
		}
	}
}

// roundSig rounds v to 3 significant digits.
func roundSig(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return r
}

// arrays returns every array of tables in t, as (owner, key) pairs, in
// document order.
func arrays(t *tomltree.Table) (owners []*tomltree.Table, keys []string) {
	for _, k := range t.Keys() {
		v, _ := t.Get(k)
		switch x := v.(type) {
		case []*tomltree.Table:
			owners, keys = append(owners, t), append(keys, k)
			for _, e := range x {
				o, ks := arrays(e)
				owners, keys = append(owners, o...), append(keys, ks...)
			}
		case *tomltree.Table:
			o, ks := arrays(x)
			owners, keys = append(owners, o...), append(keys, ks...)
		}
	}
	return owners, keys
}

// fewerEntries removes one entry of an array of tables (only of the array
// called name when name is set), keeping at least keep; halves first.
func fewerEntries(name string, keep int) editor {
	return func(t *tomltree.Table) []*tomltree.Table {
		var out []*tomltree.Table
		owners, keys := arrays(t)
		for ai := range owners {
			if name != "" && keys[ai] != name {
				continue
			}
			v, _ := owners[ai].Get(keys[ai])
			n := len(v.([]*tomltree.Table))
			cut := func(lo, hi int) {
				if n-(hi-lo) < max(keep, 0) || hi <= lo {
					return
				}
				c := t.Clone()
				co, ck := arrays(c)
				arr, _ := co[ai].Get(ck[ai])
				list := slices.Delete(slices.Clone(arr.([]*tomltree.Table)), lo, hi)
				if len(list) == 0 {
					co[ai].Delete(ck[ai])
				} else {
					co[ai].Set(ck[ai], list)
				}
				out = append(out, c)
			}
			cut(0, n) // the whole array first
			if n >= 4 {
				cut(0, n/2)
				cut(n/2, n)
			}
			for i := range n {
				cut(i, i+1)
			}
		}
		return out
	}
}

// dropRegion removes one replica with every endpoint that names it and
// every RTT, lag and target of its region that no other replica keeps.
func dropRegion(t *tomltree.Table) []*tomltree.Table {
	reps, _ := t.Get("replicas")
	list, _ := reps.([]*tomltree.Table)
	if len(list) < 2 {
		return nil
	}
	var out []*tomltree.Table
	for i := range list {
		c := t.Clone()
		rv, _ := c.Get("replicas")
		rl := rv.([]*tomltree.Table)
		name, _ := rl[i].Get("name")
		region, _ := rl[i].Get("region")
		rl = slices.Delete(slices.Clone(rl), i, i+1)
		c.Set("replicas", rl)
		regionKept := slices.ContainsFunc(rl, func(r *tomltree.Table) bool { v, _ := r.Get("region"); return v == region })
		if ev, ok := c.Get("endpoints"); ok {
			eps := slices.DeleteFunc(slices.Clone(ev.([]*tomltree.Table)), func(e *tomltree.Table) bool { v, _ := e.Get("replica"); return v == name })
			if len(eps) == 0 {
				continue
			}
			c.Set("endpoints", eps)
		}
		gone := func(v any) bool { return v == name || !regionKept && v == region }
		for _, k := range []string{"episodes", "faults", "background"} {
			if ev, ok := c.Get(k); ok {
				l := slices.DeleteFunc(slices.Clone(ev.([]*tomltree.Table)), func(e *tomltree.Table) bool { v, _ := e.Get("target"); return gone(v) })
				if len(l) == 0 {
					c.Delete(k)
				} else {
					c.Set(k, l)
				}
			}
		}
		if !regionKept {
			if n, ok := c.Get("network"); ok {
				nt := n.(*tomltree.Table)
				for _, k := range []string{"rtt_ms", "replication_lag_ms"} {
					if m, ok := nt.Get(k); ok {
						mt := m.(*tomltree.Table)
						mt.Delete(region.(string))
						for _, from := range mt.Keys() {
							if row, ok := mt.Get(from); ok {
								if rt, ok := row.(*tomltree.Table); ok {
									rt.Delete(region.(string))
								}
							}
						}
					}
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// tables returns every sub-table of t (not array entries' own), as
// (owner, key), deepest last.
func tables(t *tomltree.Table) (owners []*tomltree.Table, keys []string) {
	for _, k := range t.Keys() {
		v, _ := t.Get(k)
		switch x := v.(type) {
		case *tomltree.Table:
			owners, keys = append(owners, t), append(keys, k)
			o, ks := tables(x)
			owners, keys = append(owners, o...), append(keys, ks...)
		case []*tomltree.Table:
			for _, e := range x {
				o, ks := tables(e)
				owners, keys = append(owners, o...), append(keys, ks...)
			}
		}
	}
	return owners, keys
}

// dropTables removes one sub-table (a section, back to its defaults).
func dropTables(t *tomltree.Table) []*tomltree.Table {
	var out []*tomltree.Table
	owners, _ := tables(t)
	for i := range owners {
		c := t.Clone()
		co, ck := tables(c)
		co[i].Delete(ck[i])
		out = append(out, c)
	}
	return out
}

// leaves returns every plain value of t as (owner, key).
func leaves(t *tomltree.Table) (owners []*tomltree.Table, keys []string) {
	for _, k := range t.Keys() {
		v, _ := t.Get(k)
		switch x := v.(type) {
		case *tomltree.Table:
			o, ks := leaves(x)
			owners, keys = append(owners, o...), append(keys, ks...)
		case []*tomltree.Table:
			for _, e := range x {
				o, ks := leaves(e)
				owners, keys = append(owners, o...), append(keys, ks...)
			}
		default:
			owners, keys = append(owners, t), append(keys, k)
		}
	}
	return owners, keys
}

// dropKeys removes plain keys (back to their defaults): the whole set,
// then halves, quarters, ... and one at a time (delta debugging's
// granularity).
func dropKeys(t *tomltree.Table) []*tomltree.Table {
	var out []*tomltree.Table
	owners, keys := leaves(t)
	var idx []int
	for i := range owners {
		if !(keys[i] == "name" && owners[i] == t || keys[i] == "family") {
			idx = append(idx, i)
		}
	}
	drop := func(set []int) {
		c := t.Clone()
		co, ck := leaves(c)
		for _, i := range set {
			co[i].Delete(ck[i])
		}
		out = append(out, c)
	}
	for size := len(idx); size >= 1; size /= 2 {
		for lo := 0; lo < len(idx); lo += size {
			drop(idx[lo:min(lo+size, len(idx))])
		}
		if size == 1 {
			break
		}
	}
	return out
}

// simplerDists replaces a distribution (a table with a family) by a
// constant of 1 ms, or a mixture by one of its components.
func simplerDists(t *tomltree.Table) []*tomltree.Table {
	var out []*tomltree.Table
	owners, keys := tables(t)
	for i := range owners {
		v, _ := owners[i].Get(keys[i])
		fam, _ := v.(*tomltree.Table).Get("family")
		if fam == nil || fam == "constant" {
			continue
		}
		c := t.Clone()
		co, ck := tables(c)
		co[i].Set(ck[i], tomltree.New().Set("family", "constant").Set("value_ms", 1.0))
		out = append(out, c)
		// A mixture becomes one of its components.
		comps, _ := v.(*tomltree.Table).Get("components")
		list, _ := comps.([]*tomltree.Table)
		for j := range list {
			c := t.Clone()
			co, ck := tables(c)
			cv, _ := co[i].Get(ck[i])
			cc, _ := cv.(*tomltree.Table).Get("components")
			one := cc.([]*tomltree.Table)[j].Clone()
			one.Delete("weight")
			co[i].Set(ck[i], one)
			out = append(out, c)
		}
	}
	return out
}

// smallerNumbers halves one count or rate (an integer above 1, a float
// key ending in _per_s or a count key).
func smallerNumbers(t *tomltree.Table) []*tomltree.Table {
	var out []*tomltree.Table
	owners, keys := leaves(t)
	for i := range owners {
		v, _ := owners[i].Get(keys[i])
		var nv any
		switch x := v.(type) {
		case int64:
			if x > 1 && keys[i] != "seed" && !strings.HasSuffix(keys[i], "status") && !strings.HasSuffix(keys[i], "substatus") {
				nv = x / 2
			}
		case float64:
			if strings.HasSuffix(keys[i], "_per_s") && x > 1 {
				nv = roundSig(x / 2)
			}
		}
		if nv == nil {
			continue
		}
		c := t.Clone()
		co, ck := leaves(c)
		co[i].Set(ck[i], nv)
		out = append(out, c)
	}
	return out
}
