package scenarios

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"hedgelab/hedging"
	"hedgelab/simnet/dist"
)

// Space is a declared scenario space: what [Space.Generate] draws
// scenarios from. The default ([DefaultSpace]) is the embedded
// space/default.toml, whose comments document every section; a user's
// file ([LoadSpace]) is layered over it. Every range a space gives for a
// scenario key lies inside what the validator accepts for that key (the
// one declaration in fields.go), so a rule cannot drift between what is
// generated and what is accepted.
type Space struct {
	// Source names the space: "embedded:space/default.toml", or the
	// user's file.
	Source string

	edge     float64
	regions  []string
	size     map[string]float64
	count    map[string][2]int64
	p        map[string]float64
	nums     map[string][2]float64 // [fields] number ranges
	enums    map[string][]string   // [fields] enum values
	kinds    []faultKind
	policies []string
	reads    []string
	writes   []string
	dists    map[string][]string   // [dist] family lists
	params   map[string][2]float64 // [dist] parameter ranges
	rtt      map[string]map[string]float64
}

// faultKind is one status (and substatus) a fault or an episode answers.
type faultKind struct{ status, sub int64 }

//go:embed space/default.toml
var defaultSpaceText []byte

//go:embed space/azure_rtt_p50_ms_2026-07.csv
var rttMatrixText []byte

// DefaultSpaceSource names the embedded default space.
const DefaultSpaceSource = "embedded:space/default.toml"

// DefaultSpace returns the embedded default scenario space. It never
// fails on a build whose embedded file is valid (a test checks it).
func DefaultSpace() (*Space, error) {
	return parseSpace(DefaultSpaceSource, defaultSpaceText, nil)
}

//go:embed space/population.toml
var populationSpaceText []byte

// PopulationSpaceSource names the embedded population space.
const PopulationSpaceSource = "embedded:space/population.toml"

// PopulationSpace returns the embedded population space of
// `hedgesim scorecard --n` (space/population.toml, layered over the
// default as a user's file is): scenarios where a threshold decision
// matters (an alternate region, enough operations for a p99, conditions
// that change inside the run). It never fails on a build whose embedded
// files are valid (a test checks it).
func PopulationSpace() (*Space, error) {
	base, err := DefaultSpace()
	if err != nil {
		return nil, err
	}
	return parseSpace(PopulationSpaceSource, populationSpaceText, base)
}

// LoadSpace reads a scenario space from path, layered over the default:
// each key the file sets replaces the default's. Errors name the file,
// line and key: an unknown section or key (one the default space does not
// have, or a scenario key without a declaration), a range outside what the
// validator accepts for the key, an enum value it does not accept, a
// region missing from the embedded RTT matrix.
func LoadSpace(path string) (*Space, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	base, err := DefaultSpace()
	if err != nil {
		return nil, err
	}
	return parseSpace(path, data, base)
}

// spaceFile is a space file as written.
type spaceFile struct {
	Edge       *float64                 `toml:"edge"`
	Regions    []string                 `toml:"regions"`
	Size       map[string]float64       `toml:"size"`
	Count      map[string][]int64       `toml:"count"`
	P          map[string]float64       `toml:"p"`
	Fields     map[string][]any         `toml:"fields"`
	Faults     struct{ Kinds []string } `toml:"faults"`
	Policies   struct{ Types []string } `toml:"policies"`
	Operations struct {
		Reads  []string `toml:"reads"`
		Writes []string `toml:"writes"`
	} `toml:"operations"`
	Dist map[string][]any `toml:"dist"`
}

// spaceErrs collects a space file's errors as scenario errors
// (file:line: key: message).
type spaceErrs struct {
	src  string
	loc  *locator
	errs []*Error
}

func (e *spaceErrs) fail(path []string, format string, args ...any) {
	if len(e.errs) == MaxErrors {
		return
	}
	e.errs = append(e.errs, &Error{File: e.src, Line: max(e.loc.line(path...), 1), Field: strings.Join(path, "."), Msg: fmt.Sprintf(format, args...)})
}

// parseSpace decodes a space file; base (nil for the default itself) is
// the space it is layered over.
func parseSpace(src string, data []byte, base *Space) (*Space, error) {
	var f spaceFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		line, key, msg := decodeError(err)
		return nil, &Error{File: src, Line: line, Field: strings.Join(key, "."), Msg: msg}
	}
	e := &spaceErrs{src: src, loc: locate(data)}
	var reported []string
	for _, k := range md.Undecoded() {
		key := strings.Join(k, ".")
		if slices.ContainsFunc(reported, func(r string) bool { return strings.HasPrefix(key, r+".") }) {
			continue // inside an unknown table already reported
		}
		reported = append(reported, key)
		e.fail([]string(k), "unknown field")
	}
	if len(e.errs) > 0 {
		return nil, joinErrors(e.errs)
	}
	sp := &Space{Source: src, size: map[string]float64{}, count: map[string][2]int64{}, p: map[string]float64{},
		nums: map[string][2]float64{}, enums: map[string][]string{}, dists: map[string][]string{}, params: map[string][2]float64{}}
	if base != nil {
		*sp = *base.clone()
		sp.Source = src
	}
	known := func(section, key string, has bool) bool {
		if base != nil && !has {
			e.fail([]string{section, key}, "unknown key: the default space (%s) has no %s.%s", DefaultSpaceSource, section, key)
			return false
		}
		return true
	}
	if f.Edge != nil {
		if !(*f.Edge >= 0 && *f.Edge <= 1) {
			e.fail([]string{"edge"}, "must be between 0 and 1, got %g", *f.Edge)
		}
		sp.edge = *f.Edge
	}
	if sp.rtt == nil {
		sp.rtt = rttMatrix()
	}
	if f.Regions != nil {
		sp.regions = nil
		seen := map[string]bool{}
		for i, r := range f.Regions {
			switch {
			case sp.rtt[r] == nil:
				e.fail([]string{"regions", strconv.Itoa(i)}, "%q is not a region of the embedded RTT matrix (space/azure_rtt_p50_ms_2026-07.csv)", r)
			case seen[r]:
				e.fail([]string{"regions", strconv.Itoa(i)}, "%q is listed twice", r)
			}
			seen[r] = true
			sp.regions = append(sp.regions, r)
		}
		if len(f.Regions) == 0 {
			e.fail([]string{"regions"}, "at least one region is required")
		}
	}
	for _, k := range sortedKeys(f.Size) {
		_, has := sp.size[k]
		if known("size", k, has) && !(f.Size[k] > 0) {
			e.fail([]string{"size", k}, "must be > 0, got %g", f.Size[k])
		}
		sp.size[k] = f.Size[k]
	}
	for _, k := range sortedKeys(f.Count) {
		_, has := sp.count[k]
		v := f.Count[k]
		if !known("count", k, has) {
			continue
		}
		if len(v) != 2 || v[0] < 0 || v[0] > v[1] {
			e.fail([]string{"count", k}, "must be [lo, hi] with 0 <= lo <= hi, got %v", v)
			continue
		}
		sp.count[k] = [2]int64{v[0], v[1]}
	}
	for _, k := range sortedKeys(f.P) {
		_, has := sp.p[k]
		if known("p", k, has) && !(f.P[k] >= 0 && f.P[k] <= 1) {
			e.fail([]string{"p", k}, "must be between 0 and 1, got %g", f.P[k])
		}
		sp.p[k] = f.P[k]
	}
	for _, k := range sortedKeys(f.Fields) {
		sp.field(e, k, f.Fields[k])
	}
	if f.Faults.Kinds != nil {
		sp.kinds = nil
		for i, s := range f.Faults.Kinds {
			k, err := parseFaultKind(s)
			if err != nil {
				e.fail([]string{"faults", "kinds", strconv.Itoa(i)}, "%v", err)
			}
			sp.kinds = append(sp.kinds, k)
		}
	}
	if f.Policies.Types != nil {
		sp.policies = nil
		for i, t := range f.Policies.Types {
			if !slices.Contains(PolicyTypes(), t) {
				e.fail([]string{"policies", "types", strconv.Itoa(i)}, "unknown policy type %q (want %s)", t, policyTypeNames())
			}
			sp.policies = append(sp.policies, t)
		}
	}
	kinds := func(path string, names []string, write bool) []string {
		for i, n := range names {
			k, err := hedging.ParseOperationKind(n)
			switch {
			case err != nil:
				e.fail([]string{"operations", path, strconv.Itoa(i)}, "unknown operation kind %q (want one of %s)", n, kindNames)
			case k.IsWrite() != write:
				e.fail([]string{"operations", path, strconv.Itoa(i)}, "%q is not a %s", n, strings.TrimSuffix(path, "s"))
			}
		}
		return names
	}
	if f.Operations.Reads != nil {
		sp.reads = kinds("reads", f.Operations.Reads, false)
	}
	if f.Operations.Writes != nil {
		sp.writes = kinds("writes", f.Operations.Writes, true)
	}
	for _, k := range sortedKeys(f.Dist) {
		sp.dist(e, k, f.Dist[k], base != nil)
	}
	if len(e.errs) > 0 {
		return nil, joinErrors(e.errs)
	}
	return sp, nil
}

// field narrows scenario key k to the [fields] entry v.
func (sp *Space) field(e *spaceErrs, k string, v []any) {
	path := []string{"fields", k}
	fd, ok := fields[k]
	if !ok {
		e.fail(path, "unknown scenario key (the keys are those of scenarios/fields.go)")
		return
	}
	if fd.kind == kEnum {
		accepted := fd.values
		if k == "policies.type" {
			accepted = PolicyTypes()
		}
		var vals []string
		for i, x := range v {
			s, ok := x.(string)
			if !ok || !slices.Contains(accepted, s) {
				e.fail(append(path, strconv.Itoa(i)), "%v is not a value the validator accepts (want %s)", x, strings.Join(accepted, ", "))
				continue
			}
			vals = append(vals, s)
		}
		if len(v) == 0 {
			e.fail(path, "needs at least one value")
		}
		sp.enums[k] = vals
		return
	}
	if fd.kind == kBool || len(v) != 2 {
		e.fail(path, "must be [lo, hi]")
		return
	}
	var r [2]float64
	for i, x := range v {
		switch n := x.(type) {
		case int64:
			r[i] = float64(n)
		case float64:
			if fd.kind == kInt {
				e.fail(path, "an integer key's range must be integers, got %v", x)
				return
			}
			r[i] = n
		default:
			e.fail(path, "must be [lo, hi] numbers, got %v", x)
			return
		}
	}
	lo, hi := r[0], r[1]
	strict := fd
	strict.zeroOK = false // the generator writes the default by leaving a key out
	switch {
	case lo > hi:
		e.fail(path, "lo (%g) must be <= hi (%g)", lo, hi)
	case !strict.in(lo) || !strict.in(hi):
		e.fail(path, "[%g, %g] is not inside what the validator accepts: %s", lo, hi, fd.rangeMsg("the range"))
	default:
		sp.nums[k] = r
	}
}

// dist checks one [dist] entry: a family list (service, think, jitter,
// pages, tail) or a parameter range "<family>.<param>".
func (sp *Space) dist(e *spaceErrs, k string, v []any, layered bool) {
	path := []string{"dist", k}
	if _, isList := sp.dists[k]; isList || !layered && !strings.Contains(k, ".") {
		var fams []string
		for i, x := range v {
			s, _ := x.(string)
			if !slices.Contains(dist.Families(), s) {
				e.fail(append(path, strconv.Itoa(i)), "unknown family %v (want one of %s)", x, strings.Join(dist.Families(), ", "))
				continue
			}
			fams = append(fams, s)
		}
		if len(fams) == 0 {
			e.fail(path, "needs at least one family")
		}
		sp.dists[k] = fams
		return
	}
	if _, has := sp.params[k]; layered && !has {
		e.fail(path, "unknown key: the default space (%s) has no dist.%s", DefaultSpaceSource, k)
		return
	}
	var r [2]float64
	for i, x := range v {
		switch n := x.(type) {
		case int64:
			r[i%2] = float64(n)
		case float64:
			r[i%2] = n
		}
	}
	if len(v) != 2 || !(r[0] >= 0 && r[0] <= r[1]) || math.IsInf(r[1], 0) {
		e.fail(path, "must be [lo, hi] with 0 <= lo <= hi, got %v", v)
		return
	}
	sp.params[k] = r
}

// parseFaultKind reads "503" or "404/1002".
func parseFaultKind(s string) (faultKind, error) {
	code, sub, _ := strings.Cut(s, "/")
	c, err1 := strconv.ParseInt(code, 10, 64)
	n := int64(0)
	var err2 error
	if sub != "" {
		n, err2 = strconv.ParseInt(sub, 10, 64)
	}
	if err1 != nil || err2 != nil || !fieldOf("faults.status").in(float64(c)) || c == 0 || !fieldOf("faults.substatus").in(float64(n)) {
		return faultKind{}, fmt.Errorf("%q is not a status the validator accepts (CODE or CODE/SUBSTATUS, %d..%d)", s, int(fieldOf("faults.status").lo), int(fieldOf("faults.status").hi))
	}
	return faultKind{c, n}, nil
}

// clone returns a copy of sp whose maps can be changed.
func (sp *Space) clone() *Space {
	c := *sp
	c.size, c.count, c.p = cloneMap(sp.size), cloneMap(sp.count), cloneMap(sp.p)
	c.nums, c.enums, c.dists, c.params = cloneMap(sp.nums), cloneMap(sp.enums), cloneMap(sp.dists), cloneMap(sp.params)
	c.regions, c.kinds, c.policies = slices.Clone(sp.regions), slices.Clone(sp.kinds), slices.Clone(sp.policies)
	return &c
}

func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// rttMatrix parses the embedded RTT matrix: [from][to] in ms.
func rttMatrix() map[string]map[string]float64 {
	r := csv.NewReader(bytes.NewReader(rttMatrixText))
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 2 {
		panic("scenarios: the embedded RTT matrix does not parse: " + fmt.Sprint(err))
	}
	out := map[string]map[string]float64{}
	for _, row := range rows[1:] {
		m := map[string]float64{}
		for j, cell := range row[1:] {
			if v, err := strconv.ParseFloat(cell, 64); err == nil {
				m[rows[0][j+1]] = v
			}
		}
		out[row[0]] = m
	}
	return out
}
