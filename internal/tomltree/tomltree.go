// Package tomltree is an ordered TOML document: tables whose keys keep the
// order they were set in, written out deterministically. The scenario
// generator builds one per scenario and the fuzzer's shrinker edits it;
// the text is parsed back by BurntSushi/toml like any scenario file.
package tomltree

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Table is an ordered TOML table. Its values are string, bool, int64,
// float64 (finite), []any of those (or of []any), *Table (a sub-table)
// and []*Table (an array of tables).
type Table struct {
	keys []string
	vals map[string]any
}

// New returns an empty table.
func New() *Table { return &Table{vals: map[string]any{}} }

// Set sets key k to v and returns t; a new key goes last, an existing one
// keeps its place. An int is stored as int64. It panics on a value of
// another type (a programming error).
func (t *Table) Set(k string, v any) *Table {
	switch x := v.(type) {
	case int:
		v = int64(x)
	case string, bool, int64, *Table, []*Table, []any:
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			panic(fmt.Sprintf("tomltree: %s = %v is not finite", k, x))
		}
	default:
		panic(fmt.Sprintf("tomltree: %s: unsupported value type %T", k, v))
	}
	if _, ok := t.vals[k]; !ok {
		t.keys = append(t.keys, k)
	}
	t.vals[k] = v
	return t
}

// Get returns the value of key k.
func (t *Table) Get(k string) (any, bool) {
	v, ok := t.vals[k]
	return v, ok
}

// Table returns the sub-table at key k, creating it (last) when absent.
func (t *Table) Table(k string) *Table {
	if v, ok := t.vals[k].(*Table); ok {
		return v
	}
	n := New()
	t.Set(k, n)
	return n
}

// Append adds a new table to the array of tables at key k (created when
// absent) and returns it.
func (t *Table) Append(k string) *Table {
	arr, _ := t.vals[k].([]*Table)
	n := New()
	t.Set(k, append(arr, n))
	return n
}

// Delete removes key k.
func (t *Table) Delete(k string) {
	if _, ok := t.vals[k]; !ok {
		return
	}
	delete(t.vals, k)
	for i, x := range t.keys {
		if x == k {
			t.keys = append(t.keys[:i:i], t.keys[i+1:]...)
			break
		}
	}
}

// Keys returns the keys in order.
func (t *Table) Keys() []string { return append([]string(nil), t.keys...) }

// Len is the number of keys.
func (t *Table) Len() int { return len(t.keys) }

// Clone returns a deep copy of t.
func (t *Table) Clone() *Table {
	c := &Table{keys: append([]string(nil), t.keys...), vals: make(map[string]any, len(t.vals))}
	for k, v := range t.vals {
		c.vals[k] = cloneValue(v)
	}
	return c
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case *Table:
		return x.Clone()
	case []*Table:
		out := make([]*Table, len(x))
		for i, e := range x {
			out[i] = e.Clone()
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}

// Marshal writes t as a TOML document: each table's plain values first, in
// order (small tables of plain values inline, as `{ k = v }`), then its
// sub-tables and arrays of tables, in order.
func (t *Table) Marshal() []byte {
	var b strings.Builder
	t.write(&b, nil)
	return []byte(b.String())
}

// maxInline is the most plain values a table written inline holds.
const maxInline = 8

// inline reports whether t is written as an inline table: no arrays of
// tables anywhere in it and at most maxInline values in all.
func (t *Table) inline() bool {
	n := 0
	var walk func(*Table) bool
	walk = func(t *Table) bool {
		for _, k := range t.keys {
			switch v := t.vals[k].(type) {
			case []*Table:
				return false
			case *Table:
				if !walk(v) {
					return false
				}
			default:
				n++
			}
		}
		return true
	}
	return walk(t) && n <= maxInline
}

// plain reports whether v, at depth (1 for the root's keys), is written
// on its key's line: the root's sub-tables always get a [header].
func plain(v any, depth int) bool {
	switch x := v.(type) {
	case []*Table:
		return false
	case *Table:
		return depth > 1 && x.inline()
	}
	return true
}

func (t *Table) write(b *strings.Builder, path []string) {
	depth := len(path) + 1
	for _, k := range t.keys {
		if v := t.vals[k]; plain(v, depth) {
			b.WriteString(Key(k))
			b.WriteString(" = ")
			writeValue(b, v)
			b.WriteByte('\n')
		}
	}
	for _, k := range t.keys {
		p := append(append([]string(nil), path...), k)
		switch v := t.vals[k].(type) {
		case *Table:
			if plain(v, depth) {
				continue
			}
			fmt.Fprintf(b, "\n[%s]\n", joinKeys(p))
			v.write(b, p)
		case []*Table:
			for _, e := range v {
				fmt.Fprintf(b, "\n[[%s]]\n", joinKeys(p))
				e.write(b, p)
			}
		}
	}
}

func joinKeys(p []string) string {
	q := make([]string, len(p))
	for i, k := range p {
		q[i] = Key(k)
	}
	return strings.Join(q, ".")
}

var bare = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Key writes k as a TOML key: bare when it can be, else quoted.
func Key(k string) string {
	if bare.MatchString(k) {
		return k
	}
	return quote(k)
}

// quote writes s as a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Float writes v as a TOML float: always with a decimal point or an
// exponent, so it never reads back as an integer.
func Float(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

func writeValue(b *strings.Builder, v any) {
	switch x := v.(type) {
	case string:
		b.WriteString(quote(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(Float(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	case *Table:
		b.WriteString("{ ")
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(Key(k))
			b.WriteString(" = ")
			writeValue(b, x.vals[k])
		}
		b.WriteString(" }")
	}
}
