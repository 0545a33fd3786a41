package scenarios

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// WithParam returns a copy of s with the numeric field at path set to
// value, validated like a file (for parameter sweeps); s is unchanged.
//
// path is a dotted key path: top-level and table keys by name
// ("duration_s", "workload.rate_per_s",
// "client.consecutive_hedge_win_threshold", "network.rtt_ms.East US.West
// US"), elements of arrays of tables by name — replicas and policies by
// their name, endpoints by their region — or by 0-based index
// ("policies.static-200ms.threshold_ms", "replicas.eastus.servers",
// "episodes.0.add_ms", "replicas.0.service.components.1.weight"). A key
// that is absent is created, and so are missing tables on the way (an
// absent [ru_budget] for "ru_budget.ru_per_s"); an unknown key is then
// reported by validation as an unknown field. An integral value is written
// as a TOML integer (accepted by float fields too), any other as a float.
//
// The result's Source is "<s.Source> (<path>=<value>)"; its errors carry
// that source and the line of the field (or its enclosing table) in the
// original file. Errors: value NaN or infinite, an empty path segment, no
// element of that name or index, a path through or onto a value that is
// not a table (or a number, at the end), and every validation error of the
// modified scenario (for example a negative rate).
func (s *Scenario) WithParam(path string, value float64) (*Scenario, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: parameter %s: %s", s.Source, path, fmt.Sprintf(format, args...))
	}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return nil, fail("value must be a finite number, got %v", value)
	}
	var raw map[string]any
	if _, err := toml.Decode(string(s.data), &raw); err != nil {
		return nil, fail("%v", err) // unreachable: s.data parsed before
	}
	segs := strings.Split(path, ".")
	for _, seg := range segs {
		if seg == "" {
			return nil, fail("empty key in the path")
		}
	}
	var v any = value
	if value == math.Trunc(value) && math.Abs(value) <= 1<<53 {
		v = int64(value)
	}
	var cur any = raw
	parent := ""
	for i, seg := range segs {
		last := i == len(segs)-1
		here := strings.Join(segs[:i+1], ".")
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[seg]
			if last {
				if ok {
					if err := isNumber(next); err != nil {
						return nil, fail("%s", err)
					}
				}
				c[seg] = v
				break
			}
			if !ok && i == 0 && arrays[seg] {
				return nil, fail("%s: no element %q (the array is empty)", seg, segs[1])
			}
			if !ok {
				next = map[string]any{}
				c[seg] = next
			}
			cur, parent = next, seg
		case []map[string]any:
			n, err := pickElem(parent, len(c), func(j int) map[string]any { return c[j] }, seg)
			if err != nil {
				return nil, fail("%s: %s", strings.Join(segs[:i], "."), err)
			}
			if last {
				return nil, fail("%s is a table, not a number", here)
			}
			cur = c[n]
		case []any:
			n, err := pickElem(parent, len(c), func(j int) map[string]any { m, _ := c[j].(map[string]any); return m }, seg)
			if err != nil {
				return nil, fail("%s: %s", strings.Join(segs[:i], "."), err)
			}
			if last {
				if err := isNumber(c[n]); err != nil {
					return nil, fail("%s", err)
				}
				c[n] = v
				break
			}
			cur = c[n]
		default:
			return nil, fail("%s is not a table", strings.Join(segs[:i], "."))
		}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(raw); err != nil {
		return nil, fail("%v", err)
	}
	out, err := parse(fmt.Sprintf("%s (%s=%s)", s.Source, path, strconv.FormatFloat(value, 'g', -1, 64)), buf.Bytes(), s.locText)
	if err != nil && v == any(value) {
		// A fraction where an integer is wanted is the value's, not a
		// decimal point the file's author wrote (s parsed).
		for _, e := range unwrapJoined(err) {
			if e, ok := e.(*Error); ok && e.Msg == msgIntegerWithFraction {
				e.Msg = fmt.Sprintf("must be an integer, got %g", value)
			}
		}
	}
	return out, err
}

// arrays are the file's arrays of tables.
var arrays = map[string]bool{"endpoints": true, "replicas": true, "episodes": true, "faults": true, "policies": true}

// isNumber reports, as an error, a value WithParam must not overwrite.
func isNumber(v any) error {
	switch v.(type) {
	case int64, float64:
		return nil
	case string:
		return fmt.Errorf("is a string, not a number")
	case bool:
		return fmt.Errorf("is a boolean, not a number")
	case map[string]any:
		return fmt.Errorf("is a table, not a number")
	case []map[string]any, []any:
		return fmt.Errorf("is an array, not a number")
	}
	return fmt.Errorf("is a %T, not a number", v)
}

// pickElem finds the element of an array named seg (see elemName) or, if
// none is, the element at index seg.
func pickElem(array string, n int, at func(int) map[string]any, seg string) (int, error) {
	var names []string
	for j := range n {
		if m := at(j); m != nil {
			name := elemName(array, m)
			if name == seg {
				return j, nil
			}
			if name != "" {
				names = append(names, name)
			}
		}
	}
	if j, err := strconv.Atoi(seg); err == nil && j >= 0 && j < n {
		return j, nil
	}
	if n == 0 {
		return 0, fmt.Errorf("no element %q (the array is empty)", seg)
	}
	if len(names) > 0 {
		return 0, fmt.Errorf("no element named %q (have %s, or an index 0..%d)", seg, strings.Join(names, ", "), n-1)
	}
	return 0, fmt.Errorf("no element %q (want an index 0..%d)", seg, n-1)
}
