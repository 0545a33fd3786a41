package scenarios

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// BurntSushi/toml v1.6 decodes a table into a struct or a map by ranging
// over a Go map, and stops at the first value it cannot convert: with two
// wrongly typed values in a file, which one it reports changes from run to
// run. typeErrors repeats the decoder's conversion rules (decode.go:
// unify*) over the generically decoded document, in a fixed order, and
// reports every value the decoder would reject, in file order, so the same
// file always gives the same errors, the first one first.

// typeProblem is one value of the document the decoder would reject: its
// path (keys and decimal array indexes, as the locator records them) and
// the decoder's message, not yet rewritten by plainTypeError.
type typeProblem struct {
	path []string
	msg  string
}

var (
	unmarshalerType     = reflect.TypeFor[toml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType        = reflect.TypeFor[time.Duration]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
)

// typeErrors returns an [*Error] for every value of raw that decoding into
// File rejects, ordered by their place in data (line, then position on the
// line), at most [MaxErrors]. Lines are those of loc (the text errors refer
// to), positions those of dataLoc (the text raw was decoded from); a field
// not in the text is placed on its nearest enclosing table's line. It
// returns nil when it finds nothing, and then the decoder's own error
// stands.
func typeErrors(source string, raw map[string]any, loc, dataLoc *locator) []*Error {
	var probs []typeProblem
	checkType(nil, raw, reflect.TypeFor[File](), &probs, false)
	return placeTypeProblems(source, raw, probs, loc, dataLoc)
}

// shapeErrors returns an [*Error] for every value of raw, a document that
// decoded into File without error, where a table is expected but something
// else is written: the decoder takes `ru = 5` or `"East US" = 5` inside
// network.rtt_ms for an empty table and says nothing. Ordered and placed
// as by typeErrors; nil when there is none.
func shapeErrors(source string, raw map[string]any, loc, dataLoc *locator) []*Error {
	var probs []typeProblem
	checkType(nil, raw, reflect.TypeFor[File](), &probs, true)
	return placeTypeProblems(source, raw, probs, loc, dataLoc)
}

// placeTypeProblems turns probs into errors ordered by their place in the
// text (see typeErrors).
func placeTypeProblems(source string, raw map[string]any, probs []typeProblem, loc, dataLoc *locator) []*Error {
	if len(probs) == 0 {
		return nil
	}
	seq := dataLoc.seqs()
	at := func(p []string) (int, int) {
		for n := len(p); n > 0; n-- {
			if s, ok := seq[joinPath(p[:n])]; ok {
				return dataLoc.line(p[:n]...), s
			}
		}
		return 0, -1
	}
	// Stable: problems placed on the same recorded key keep the walk's
	// order (sorted map keys, array indexes).
	slices.SortStableFunc(probs, func(a, b typeProblem) int {
		la, sa := at(a.path)
		lb, sb := at(b.path)
		if la != lb {
			return la - lb
		}
		return sa - sb
	})
	var errs []*Error
	for _, p := range probs[:min(len(probs), MaxErrors)] {
		e := &Error{File: source, Line: loc.line(p.path...), Field: displayPath(raw, p.path), Msg: plainTypeError(p.msg)}
		if e.Line == 0 {
			e.Line = 1
		}
		errs = append(errs, e)
	}
	return errs
}

// checkType appends to probs the problems of decoding data (a value of a
// generically decoded document, at path p) into a value of type t, with
// the rules and messages of BurntSushi/toml v1.6's unify. Types the
// decoder hands to an unmarshaler, and kinds no scenario field has, are
// not checked. With tableMaps, a map-typed field whose value is not a table
// is a problem too (the decoder takes it for an empty table; shapeErrors).
func checkType(p []string, data any, t reflect.Type, probs *[]typeProblem, tableMaps bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) ||
		t == durationType || t == jsonNumberType {
		return
	}
	bad := func(format string, args ...any) {
		*probs = append(*probs, typeProblem{path: clone(p), msg: fmt.Sprintf(format, args...)})
	}
	badtype := func(dst string) {
		bad("incompatible types: TOML value has type %s; destination has type %s", fmtType(data), dst)
	}
	switch k := t.Kind(); k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		num, ok := data.(int64)
		if !ok {
			badtype("integer")
			return
		}
		if lo, hi, ok := intRange(k); ok && (num < lo || num > hi) {
			bad("%v is out of range for %s", num, k)
		}
	case reflect.Float32, reflect.Float64:
		switch num := data.(type) {
		case float64:
			if k == reflect.Float32 && (num < -math.MaxFloat32 || num > math.MaxFloat32) {
				bad("%v is out of range for %s", num, k)
			}
		case int64:
			safe := int64(1<<53 - 1)
			if k == reflect.Float32 {
				safe = 1<<24 - 1
			}
			if num < -safe || num > safe {
				bad("%v is out of the safe %s range", num, k)
			}
		default:
			badtype("float")
		}
	case reflect.String:
		if _, ok := data.(string); !ok {
			badtype("string")
		}
	case reflect.Bool:
		if _, ok := data.(bool); !ok {
			badtype("boolean")
		}
	case reflect.Slice, reflect.Array:
		dv := reflect.ValueOf(data)
		if dv.Kind() != reflect.Slice {
			if dv.IsValid() {
				badtype("slice")
			}
			return
		}
		if k == reflect.Array && dv.Len() != t.Len() {
			bad("expected array length %d; got TOML array of length %d", t.Len(), dv.Len())
			return
		}
		for i := range dv.Len() {
			checkType(append(p, strconv.Itoa(i)), dv.Index(i).Interface(), t.Elem(), probs, tableMaps)
		}
	case reflect.Map:
		if kk := t.Key().Kind(); kk != reflect.String && kk != reflect.Interface {
			return
		}
		// The decoder accepts any value that is not a table for a map
		// (unifyMap returns nil when the type assertion fails), so only a
		// table's entries are checked, unless tableMaps asks for that
		// value to be reported too (shapeErrors).
		m, ok := data.(map[string]any)
		if !ok {
			if tableMaps && data != nil {
				bad("type mismatch for %s: expected table but found %s", t.String(), fmtType(data))
			}
			return
		}
		for _, key := range sortedKeys(m) {
			checkType(append(p, key), m[key], t.Elem(), probs, tableMaps)
		}
	case reflect.Struct:
		m, ok := data.(map[string]any)
		if !ok {
			if data != nil {
				bad("type mismatch for %s: expected table but found %s", t.String(), fmtType(data))
			}
			return
		}
		fields := tomlFields(t)
		for _, key := range sortedKeys(m) {
			if ft, ok := fieldFor(fields, key); ok {
				checkType(append(p, key), m[key], ft, probs, tableMaps)
			} // an unknown key: reported by MetaData.Undecoded
		}
	}
}

// intRange is the range of TOML integers the decoder accepts for an
// integer kind; ok is false when it accepts every int64 (int, int64, and
// uint and uint64, into which it converts negative numbers unchecked).
func intRange(k reflect.Kind) (lo, hi int64, ok bool) {
	switch k {
	case reflect.Int8:
		return math.MinInt8, math.MaxInt8, true
	case reflect.Int16:
		return math.MinInt16, math.MaxInt16, true
	case reflect.Int32:
		return math.MinInt32, math.MaxInt32, true
	case reflect.Uint8:
		return 0, math.MaxUint8, true
	case reflect.Uint16:
		return 0, math.MaxUint16, true
	case reflect.Uint32:
		return 0, math.MaxUint32, true
	}
	return 0, 0, false
}

// fmtType names the Go type of a decoded TOML value as BurntSushi/toml's
// messages do.
func fmtType(v any) string {
	return strings.ReplaceAll(fmt.Sprintf("%T", v), "interface {}", "any")
}

// tomlField is a key of a struct as BurntSushi/toml decodes it.
type tomlField struct {
	name  string
	depth int // of embedding: 0 = a field of the struct itself
	typ   reflect.Type
}

// tomlFields lists the keys of struct type t the decoder fills: exported
// fields by their toml tag name (the Go name without one), fields of
// untagged embedded structs promoted, a shallower field hiding a deeper one
// of the same name. It covers what scenario types use: unlike the decoder
// it does not drop two fields of one name at the same depth.
func tomlFields(t reflect.Type) []tomlField {
	var out []tomlField
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.PkgPath != "" && !sf.Anonymous {
				continue // unexported
			}
			name, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
			if name == "-" {
				continue
			}
			ft := sf.Type
			if ft.Name() == "" && ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
				walk(ft, depth+1)
				continue
			}
			if name == "" {
				name = sf.Name
			}
			out = append(out, tomlField{name: name, depth: depth, typ: sf.Type})
		}
	}
	walk(t, 0)
	// A shallower field hides deeper ones of its name; order stays that of
	// the struct (embedded fields in place), as the decoder's.
	minDepth := map[string]int{}
	for _, f := range out {
		if d, ok := minDepth[f.name]; !ok || f.depth < d {
			minDepth[f.name] = f.depth
		}
	}
	return slices.DeleteFunc(out, func(f tomlField) bool { return f.depth > minDepth[f.name] })
}

// fieldFor finds the field key decodes into: the one named key, else the
// first whose name equals key ignoring case (as unifyStruct does).
func fieldFor(fields []tomlField, key string) (reflect.Type, bool) {
	var fold reflect.Type
	for _, f := range fields {
		if f.name == key {
			return f.typ, true
		}
		if fold == nil && strings.EqualFold(f.name, key) {
			fold = f.typ
		}
	}
	return fold, fold != nil
}
