package scenarios

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"hedgelab/simnet"
)

// DefaultName is the name of the embedded scenario `hedgesim run` uses
// when none is given.
const DefaultName = "default"

// Scenario is one parsed and validated scenario file.
//
// A Scenario is treated as immutable: the ones returned by [Embedded] and
// [Get] are shared, so derive variants with [Scenario.WithParam] rather
// than by editing File.
type Scenario struct {
	// Name is the file's name key ([a-z0-9-]+); it names the output
	// directory.
	Name string
	// Description is the file's description key (free text).
	Description string
	// Source names where the scenario came from: the file path given to
	// [Load] or [Parse], "embedded:<file>.toml" for [Embedded] ones, with
	// " (<path>=<value>)" appended by each [Scenario.WithParam].
	Source string
	// Replications is the number of independent replications to run
	// (file key replications, default 1).
	Replications int
	// File is the decoded file as written, before defaults.
	File File

	data    []byte         // the TOML text File was decoded from
	locText []byte         // text error lines refer to (the original file)
	raw     map[string]any // data decoded generically
	loc     *locator       // locate(locText), computed once
}

// Error is a problem in a scenario file. Its text is
// "<file>:<line>: <field>: <message>", for example
//
//	scenarios/x.toml:12: replicas.eastus.service: lognormal: p99_ms (3) must be greater than median_ms (4)
//
// A field the file does not contain is reported on the line of its
// nearest enclosing table in the file (line 1 for the root table). The line
// is omitted only when there is none to give, the field when the problem is
// not about one field (a TOML syntax error).
type Error struct {
	File  string // the scenario's source (file path or "embedded:<file>")
	Line  int    // 1-based line in File; 0 = unknown
	Field string // dotted key path, array elements by name or index; may be empty
	Msg   string // what is wrong
}

// Error returns "<file>:<line>: <field>: <message>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// MaxErrors is the most problems [Parse] reports for one file.
const MaxErrors = 20

// Errors is every problem found in one file, in the order found (at most
// [MaxErrors]). Its text is one [Error] per line; errors.As finds the
// first [*Error].
type Errors []*Error

// Error returns the errors' texts, one per line.
func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// joinErrors returns the only error of es as itself, several as [Errors],
// each text once (two elements of one name on one line, say, would print
// the same line twice).
func joinErrors(es []*Error) error {
	seen := make(map[Error]bool, len(es))
	es = slices.DeleteFunc(slices.Clone(es), func(e *Error) bool {
		dup := seen[*e]
		seen[*e] = true
		return dup
	})
	if len(es) == 1 {
		return es[0]
	}
	return Errors(es)
}

// Load reads and parses the scenario file at path (see [Parse]). Errors:
// the file cannot be read, or any [Parse] error.
func Load(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read at most one byte past the limit, so a huge file is refused
	// without being read whole.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// MaxFileBytes is the largest scenario file [Load] and [Parse] accept, in
// bytes (8 MiB): far above any real scenario, and small enough that
// validating one takes well under a second and a few hundred MB.
const MaxFileBytes = 8 << 20

// Parse decodes and validates one scenario file; source names the file in
// errors and becomes [Scenario.Source]. Every problem is reported as an
// [*Error] with file, line and field: a file deeper than [MaxNesting] or
// with more than [MaxKeys] keys (refused before it is parsed), TOML syntax errors, values of the
// wrong type, unknown keys, NaN or infinite numbers, and every semantic
// check listed in scenarios/README.md (including the resource limits). A
// scenario that parses also builds: [Scenario.Config] will not fail on it.
func Parse(source string, data []byte) (*Scenario, error) {
	return parse(source, data, data)
}

// parse decodes data; errors name source and lines of locText (the same as
// data unless data is a rewritten version of locText, see WithParam).
func parse(source string, data []byte, locText []byte) (*Scenario, error) {
	locSource := source
	if len(data) > MaxFileBytes {
		return nil, &Error{File: source, Msg: fmt.Sprintf("file is larger than the limit of %d MiB (%d bytes); a scenario is a few KB", MaxFileBytes>>20, MaxFileBytes)}
	}
	if e := checkNesting(locSource, data); e != nil {
		return nil, e
	}
	derived := !bytes.Equal(data, locText)
	loc := locate(locText)
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			if num, ok := strings.CutSuffix(pe.Message, " is out of range for int64"); ok && pe.LastKey != "" {
				// A number too large for any field: name the field.
				return nil, &Error{File: locSource, Line: pe.Position.Line, Field: pe.LastKey,
					Msg: fmt.Sprintf("%s is too large: an integer must be at most %d", num, int64(math.MaxInt64))}
			}
			if num, ok := strings.CutSuffix(pe.Message, " is out of range for float64"); ok && pe.LastKey != "" {
				return nil, &Error{File: locSource, Line: pe.Position.Line, Field: pe.LastKey,
					Msg: fmt.Sprintf("%s is too large for a number (at most ~1.8e308)", num)}
			}
			return nil, &Error{File: locSource, Line: pe.Position.Line, Msg: "TOML syntax error: " + pe.Message}
		}
		return nil, &Error{File: locSource, Msg: err.Error()}
	}
	// Keys BurntSushi reports carry no array indexes: find them in the
	// decoded text, then their line (or their enclosing table's) in locText.
	dataLoc := loc
	if derived {
		dataLoc = locate(data)
	}
	place := func(e *Error, key []string, line int) *Error {
		if p, _, ok := dataLoc.find(key, line); ok {
			e.Field, e.Line = displayPath(raw, p), loc.line(p...)
		} else {
			e.Line = loc.line(key...)
		}
		if e.Line == 0 {
			e.Line = 1
		}
		return e
	}
	var f File
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		// The decoder reports one wrongly typed value, picked in map
		// iteration order: report them all, in file order, instead.
		if errs := typeErrors(locSource, raw, loc, dataLoc); len(errs) > 0 {
			return nil, joinErrors(errs)
		}
		line, key, msg := decodeError(err)
		e := &Error{File: locSource, Field: strings.Join(key, "."), Msg: msg}
		if key == nil {
			e.Line = line
			if derived {
				e.Line = 0
			}
			return nil, e
		}
		return nil, place(e, key, line)
	}
	if errs := shapeErrors(locSource, raw, loc, dataLoc); len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	if und := md.Undecoded(); len(und) > 0 {
		var errs []*Error
		var reported []string
		for _, k := range und {
			key := []string(k)
			if len(errs) == MaxErrors || slices.ContainsFunc(reported, func(r string) bool {
				return strings.HasPrefix(strings.Join(key, pathSep)+pathSep, r+pathSep)
			}) {
				continue // inside an unknown table already reported
			}
			reported = append(reported, strings.Join(key, pathSep))
			errs = append(errs, place(&Error{File: locSource, Field: strings.Join(key, "."), Msg: "unknown field"}, key, 0))
		}
		return nil, joinErrors(errs)
	}
	if e := nonFinite(locSource, loc, raw); e != nil {
		return nil, e
	}
	s := &Scenario{Name: f.Name, Description: f.Description, Source: source, Replications: 1, File: f,
		data: data, locText: locText, raw: raw, loc: loc}
	if f.Replications != nil {
		s.Replications = *f.Replications
	}
	if _, _, err := s.Config(); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeError splits an error of decoding into File (a value of the wrong
// type or out of range) into the line in the decoded text, the key (nil
// when the error names none) and the message.
func decodeError(err error) (line int, key []string, msg string) {
	var lastKey string
	msg = err.Error()
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line, lastKey, msg = pe.Position.Line, pe.LastKey, pe.Message
	} else if rest, ok := strings.CutPrefix(msg, "toml: "); ok {
		// "toml: line 12 (last key \"a.b\"): message" (md.e in decode.go)
		if r, ok := strings.CutPrefix(rest, "line "); ok {
			if i := strings.IndexByte(r, ' '); i > 0 {
				if n, err := strconv.Atoi(r[:i]); err == nil {
					line, rest = n, r[i+1:]
				}
			}
		}
		if r, ok := strings.CutPrefix(rest, "(last key "); ok {
			if q, err := strconv.QuotedPrefix(r); err == nil {
				if k, err := strconv.Unquote(q); err == nil {
					if m, ok := strings.CutPrefix(r[len(q):], "): "); ok {
						lastKey, rest = k, m
					}
				}
			}
		}
		msg = rest
	}
	msg = plainTypeError(msg)
	if lastKey != "" {
		sc := &scanner{s: []byte(lastKey)}
		key = sc.keys()
	}
	return line, key, msg
}

// tomlTypes names BurntSushi/toml's type words in a scenario's terms.
var tomlTypes = map[string]string{
	"int64": "an integer", "integer": "an integer", "float64": "a number", "float": "a number",
	"string": "a string", "bool": "true or false", "boolean": "true or false",
	"[]any": "an array", "slice": "an array", "array": "an array", "[]map[string]any": "an array of tables",
	"map[string]any": "a table", "map": "a table", "struct": "a table",
	"time.Time": "a date", "time": "a date",
}

// msgIntegerWithFraction is the message for an integer field written as
// a float.
const msgIntegerWithFraction = "must be an integer, written without a decimal point or exponent (2, not 2.0)"

// plainTypeError rewrites "incompatible types: TOML value has type X;
// destination has type Y" as "must be Y, got X", with a hint for the
// common case of an integer field written with a fraction (2.0), and
// "type mismatch for T: expected table but found X" (a table written as
// another value) as "must be a table, got X".
func plainTypeError(msg string) string {
	if rest, ok := strings.CutPrefix(msg, "type mismatch for "); ok {
		if _, got, ok := strings.Cut(rest, ": expected table but found "); ok {
			if g, ok := tomlTypes[got]; ok {
				return "must be a table, got " + g
			}
		}
		return msg
	}
	rest, ok := strings.CutPrefix(msg, "incompatible types: TOML value has type ")
	if !ok {
		return msg
	}
	got, want, ok := strings.Cut(rest, "; destination has type ")
	if !ok {
		return msg
	}
	g, ok1 := tomlTypes[got]
	w, ok2 := tomlTypes[want]
	if !ok1 || !ok2 {
		return msg
	}
	if got == "float64" && want == "integer" {
		return msgIntegerWithFraction
	}
	return fmt.Sprintf("must be %s, got %s", w, g)
}

// nonFinite reports the first (by line) NaN or infinite number in raw.
func nonFinite(source string, loc *locator, raw map[string]any) *Error {
	var best *Error
	var walk func(p []string, v any)
	walk = func(p []string, v any) {
		switch v := v.(type) {
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				line := loc.line(p...)
				if best == nil || line < best.Line {
					best = &Error{File: source, Line: line, Field: displayPath(raw, p),
						Msg: fmt.Sprintf("must be a finite number, got %v", v)}
				}
			}
		case map[string]any:
			for _, k := range sortedKeys(v) {
				walk(append(clone(p), k), v[k])
			}
		case []map[string]any:
			for i, e := range v {
				walk(append(clone(p), strconv.Itoa(i)), e)
			}
		case []any:
			for i, e := range v {
				switch e.(type) {
				case float64, map[string]any, []map[string]any, []any:
					walk(append(clone(p), strconv.Itoa(i)), e)
				}
			}
		}
	}
	walk(nil, raw)
	return best
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// elemName is how an element of an array of tables is named in field
// paths and [Scenario.WithParam] paths: replicas and policies by their
// name, endpoints by their region, everything else by index.
func elemName(array string, m map[string]any) string {
	key := ""
	switch array {
	case "replicas", "policies":
		key = "name"
	case "endpoints":
		key = "region"
	default:
		return ""
	}
	s, _ := m[key].(string)
	return s
}

// displayPath renders a locator path (with decimal array indexes) the way
// errors name fields, replacing indexes by element names where they exist.
func displayPath(raw map[string]any, p []string) string {
	out := clone(p)
	var cur any = raw
	parent := ""
	for i, seg := range p {
		switch c := cur.(type) {
		case map[string]any:
			cur, parent = c[seg], seg
		case []map[string]any:
			cur = nil
			if n, err := strconv.Atoi(seg); err == nil && n >= 0 && n < len(c) {
				cur = c[n]
				if name := elemName(parent, c[n]); name != "" {
					out[i] = name
				}
			}
		case []any:
			cur = nil
			if n, err := strconv.Atoi(seg); err == nil && n >= 0 && n < len(c) {
				cur = c[n]
				if m, ok := c[n].(map[string]any); ok {
					if name := elemName(parent, m); name != "" {
						out[i] = name
					}
				}
			}
		default:
			cur = nil
		}
	}
	return strings.Join(out, ".")
}

// Config builds the simulation input: the network, replicas (with their
// distribution samplers), faults, episodes and workload as a
// [simnet.Config], and one [simnet.Policy] per [[policies]] entry in file
// order, whose New returns a fresh strategy on every call (a new
// threshold.P99Dynamic for p99_dynamic). Each call builds new values. It
// revalidates the File and returns the same [*Error]s as [Parse]; on a
// Scenario from [Parse], [Load], [Embedded], [Get] or [Scenario.WithParam]
// it does not fail.
func (s *Scenario) Config() (*simnet.Config, []simnet.Policy, error) {
	loc := s.loc
	if loc == nil {
		loc = locate(s.locText)
	}
	b := &builder{src: s.Source, loc: loc, f: &s.File}
	return b.build()
}

// Text returns the TOML text s was parsed from (a copy; for a Scenario
// from [Scenario.WithParam], the rewritten text): [Parse] of Source and
// Text gives s again.
func (s *Scenario) Text() []byte { return bytes.Clone(s.data) }

//go:embed *.toml
var embeddedFS embed.FS

var loadEmbedded = sync.OnceValues(func() ([]*Scenario, error) {
	entries, err := embeddedFS.ReadDir(".")
	if err != nil {
		return nil, err
	}
	var list []*Scenario
	var errs []error
	for _, e := range entries {
		data, err := embeddedFS.ReadFile(e.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		src := "embedded:" + e.Name()
		s, err := Parse(src, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if want := strings.TrimSuffix(path.Base(e.Name()), ".toml"); s.Name != want {
			errs = append(errs, &Error{File: src, Line: locate(data).line("name"), Field: "name",
				Msg: fmt.Sprintf("an embedded scenario must be named after its file (%q), got %q", want, s.Name)})
			continue
		}
		list = append(list, s)
	}
	slices.SortFunc(list, func(a, b *Scenario) int { return strings.Compare(a.Name, b.Name) })
	return list, errors.Join(errs...)
})

// Embedded returns the scenario library: every scenarios/*.toml file
// compiled into the binary, parsed once, sorted by name. Each file must be
// named "<name>.toml" after its name key. The error joins the problems of
// the broken files (which are left out of the list); the valid ones are
// returned regardless. The scenarios are shared: do not modify them.
func Embedded() ([]*Scenario, error) {
	list, err := loadEmbedded()
	return slices.Clone(list), err
}

// Get returns the embedded scenario called name. Errors: the embedded file
// of that name is broken (its parse error), or no such scenario (the
// message lists the available names).
func Get(name string) (*Scenario, error) {
	list, err := loadEmbedded()
	var names []string
	for _, s := range list {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	if err != nil && strings.Contains(err.Error(), "embedded:"+name+".toml:") {
		for _, e := range unwrapJoined(err) {
			if strings.HasPrefix(e.Error(), "embedded:"+name+".toml:") {
				return nil, e
			}
		}
	}
	return nil, fmt.Errorf("unknown scenario %q (available: %s)", name, strings.Join(names, ", "))
}

func unwrapJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
