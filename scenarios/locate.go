package scenarios

import (
	"sort"
	"strconv"
	"strings"
)

// locator maps dotted key paths of a TOML document to the line they are
// written on. BurntSushi/toml v1.6 does not expose key positions, so the
// locator runs its own small, tolerant scanner over the text: it tracks
// [table] and [[array]] headers (with a per-array element counter, so the
// n-th [[replicas]] is replicas.<n>), `key = value` lines, dotted keys,
// keys inside inline tables and the elements of arrays. Array elements are
// path segments holding their decimal index ("replicas", "1", "servers").
//
// The scanner never fails and never panics: on text that is not TOML it
// records what it can and skips to the end of the line. Its time and
// memory are linear in the size of the text: an array element written on
// the same line as its array is not recorded (its line is the array's, and
// [locator.line] falls back to the array), so a one-line list of a million
// partitions costs nothing per element.
type locator struct {
	lineStart []int          // byte offset of each line start
	first     map[string]int // joined path -> first line it appears on
	entries   []locEntry     // every recorded path, in file order
	arrays    map[string]int // joined [[array]] path -> elements seen so far
	cursor    int            // index in lineStart of the line lineOf last returned
}

// locEntry is one recorded key path; index[i] marks segments that are array
// indexes rather than keys.
type locEntry struct {
	path  []string
	index []bool
	line  int
}

const pathSep = "\x00"

func joinPath(p []string) string { return strings.Join(p, pathSep) }

// locate scans src and returns its locator.
func locate(src []byte) *locator {
	l := &locator{first: map[string]int{}, arrays: map[string]int{}, lineStart: []int{0}}
	for i, c := range src {
		if c == '\n' {
			l.lineStart = append(l.lineStart, i+1)
		}
	}
	sc := &scanner{s: src, l: l}
	sc.document()
	return l
}

// lineOf returns the 1-based line of byte offset off. The scanner asks
// for nondecreasing offsets, so a cursor makes a whole scan linear; an
// earlier offset falls back to a binary search.
func (l *locator) lineOf(off int) int {
	if off < l.lineStart[l.cursor] {
		return sort.Search(len(l.lineStart), func(i int) bool { return l.lineStart[i] > off })
	}
	for l.cursor+1 < len(l.lineStart) && l.lineStart[l.cursor+1] <= off {
		l.cursor++
	}
	return l.cursor + 1
}

// record notes that path appears at byte offset off, together with every
// prefix of it that has not been seen yet, and returns its line. Every
// recorded path has all its prefixes recorded, so the search for unseen
// prefixes stops at the first seen one (usually the parent): the cost is
// independent of how many paths the file has.
func (l *locator) record(path []string, index []bool, off int) int {
	line := l.lineOf(off)
	for n := len(path); n > 0; n-- {
		k := joinPath(path[:n])
		if _, ok := l.first[k]; ok {
			break
		}
		l.first[k] = line
	}
	l.entries = append(l.entries, locEntry{path: clone(path), index: cloneB(index), line: line})
	return line
}

// line returns the line of path (keys and decimal array indexes), or of its
// nearest recorded ancestor (the enclosing table header or inline table), or
// 0 when nothing on the way is in the file.
func (l *locator) line(path ...string) int {
	for n := len(path); n > 0; n-- {
		if line, ok := l.first[joinPath(path[:n])]; ok {
			return line
		}
	}
	return 0
}

// find returns the first recorded path (in file order) whose key segments,
// ignoring array indexes, equal key, preferring one on line wantLine when
// wantLine > 0. It serves keys reported by BurntSushi/toml, which carry no
// array indexes. ok is false when nothing matches.
func (l *locator) find(key []string, wantLine int) (path []string, line int, ok bool) {
	for _, e := range l.entries {
		if !matchKey(e, key) {
			continue
		}
		if wantLine > 0 && e.line == wantLine {
			return e.path, e.line, true
		}
		if !ok {
			path, line, ok = e.path, e.line, true
		}
	}
	return path, line, ok
}

func matchKey(e locEntry, key []string) bool {
	j := 0
	for i, seg := range e.path {
		if e.index[i] {
			continue
		}
		if j >= len(key) || key[j] != seg {
			return false
		}
		j++
	}
	return j == len(key)
}

func clone(p []string) []string { return append([]string(nil), p...) }
func cloneB(p []bool) []bool    { return append([]bool(nil), p...) }

// scanner is the tolerant TOML scanner behind locate.
type scanner struct {
	s []byte
	i int
	l *locator
}

func (sc *scanner) eof() bool { return sc.i >= len(sc.s) }

func (sc *scanner) peek(k int) byte {
	if sc.i+k < len(sc.s) {
		return sc.s[sc.i+k]
	}
	return 0
}

// spaces skips blanks on the current line.
func (sc *scanner) spaces() {
	for !sc.eof() && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\t') {
		sc.i++
	}
}

// blank skips blanks, newlines and comments.
func (sc *scanner) blank() {
	for !sc.eof() {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.i++
		case '#':
			sc.toEOL()
		default:
			return
		}
	}
}

// toEOL skips to the next newline (not consuming it).
func (sc *scanner) toEOL() {
	for !sc.eof() && sc.s[sc.i] != '\n' {
		sc.i++
	}
}

func (sc *scanner) document() {
	var cur []string
	var curIdx []bool
	for {
		sc.blank()
		if sc.eof() {
			return
		}
		start := sc.i
		if sc.s[sc.i] == '[' {
			array := sc.peek(1) == '['
			sc.i++
			if array {
				sc.i++
			}
			sc.spaces()
			keys := sc.keys()
			cur, curIdx = sc.l.resolveHeader(keys, array)
			if len(cur) > 0 {
				sc.l.record(cur, curIdx, start)
			}
			sc.toEOL()
			continue
		}
		keys := sc.keys()
		if len(keys) == 0 {
			sc.toEOL()
			if sc.i == start {
				sc.i++
			}
			continue
		}
		p, idx := appendKeys(cur, curIdx, keys)
		line := sc.l.record(p, idx, start)
		sc.spaces()
		if !sc.eof() && sc.s[sc.i] == '=' {
			sc.i++
			sc.value(p, idx, line, 0)
		}
		sc.spaces()
		if !sc.eof() && sc.s[sc.i] == '#' {
			sc.toEOL()
		}
		if sc.i == start {
			sc.i++
		}
	}
}

func appendKeys(base []string, baseIdx []bool, keys []string) ([]string, []bool) {
	p := append(clone(base), keys...)
	idx := append(cloneB(baseIdx), make([]bool, len(keys))...)
	return p, idx
}

// resolveHeader turns the keys of a [table] or [[array]] header into a path
// with array indexes: a prefix that names an array of tables refers to its
// latest element, and [[x]] itself opens a new element.
func (l *locator) resolveHeader(keys []string, array bool) ([]string, []bool) {
	var p []string
	var idx []bool
	for n, k := range keys {
		p = append(p, k)
		idx = append(idx, false)
		key := joinPath(p)
		if n == len(keys)-1 && array {
			c := l.arrays[key]
			l.arrays[key] = c + 1
			p = append(p, strconv.Itoa(c))
			idx = append(idx, true)
		} else if c, ok := l.arrays[key]; ok && c > 0 {
			p = append(p, strconv.Itoa(c-1))
			idx = append(idx, true)
		}
	}
	return p, idx
}

// keys reads a dotted key (bare, "basic" or 'literal' segments).
func (sc *scanner) keys() []string {
	var out []string
	for {
		sc.spaces()
		if sc.eof() {
			return out
		}
		var k string
		switch c := sc.s[sc.i]; {
		case c == '"':
			k = sc.basicString()
		case c == '\'':
			k = sc.literalString()
		default:
			st := sc.i
			for !sc.eof() && isBareKeyByte(sc.s[sc.i]) {
				sc.i++
			}
			if sc.i == st {
				return out
			}
			k = string(sc.s[st:sc.i])
		}
		out = append(out, k)
		sc.spaces()
		if sc.eof() || sc.s[sc.i] != '.' {
			return out
		}
		sc.i++
	}
}

func isBareKeyByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// basicString reads a "basic" or """multi-line""" string starting at the
// opening quote and returns its (unescaped when possible) content.
func (sc *scanner) basicString() string {
	if sc.peek(1) == '"' && sc.peek(2) == '"' {
		sc.i += 3
		st := sc.i
		for !sc.eof() {
			if sc.s[sc.i] == '\\' {
				sc.i += 2
				continue
			}
			if sc.s[sc.i] == '"' && sc.peek(1) == '"' && sc.peek(2) == '"' {
				raw := string(sc.s[st:sc.i])
				sc.i += 3
				for !sc.eof() && sc.s[sc.i] == '"' { // up to two quotes may end the content
					sc.i++
				}
				return raw
			}
			sc.i++
		}
		return string(sc.s[st:])
	}
	sc.i++
	st := sc.i
	for !sc.eof() && sc.s[sc.i] != '"' && sc.s[sc.i] != '\n' {
		if sc.s[sc.i] == '\\' && sc.i+1 < len(sc.s) && sc.s[sc.i+1] != '\n' {
			sc.i++
		}
		sc.i++
	}
	end := min(sc.i, len(sc.s))
	raw := string(sc.s[st:end])
	if !sc.eof() && sc.s[sc.i] == '"' {
		sc.i++
	}
	if u, err := strconv.Unquote(`"` + raw + `"`); err == nil {
		return u
	}
	return raw
}

// literalString reads a 'literal' string or a multi-line literal string
// delimited by three single quotes.
func (sc *scanner) literalString() string {
	if sc.peek(1) == '\'' && sc.peek(2) == '\'' {
		sc.i += 3
		st := sc.i
		for !sc.eof() {
			if sc.s[sc.i] == '\'' && sc.peek(1) == '\'' && sc.peek(2) == '\'' {
				raw := string(sc.s[st:sc.i])
				sc.i += 3
				for !sc.eof() && sc.s[sc.i] == '\'' {
					sc.i++
				}
				return raw
			}
			sc.i++
		}
		return string(sc.s[st:])
	}
	sc.i++
	st := sc.i
	for !sc.eof() && sc.s[sc.i] != '\'' && sc.s[sc.i] != '\n' {
		sc.i++
	}
	raw := string(sc.s[st:sc.i])
	if !sc.eof() && sc.s[sc.i] == '\'' {
		sc.i++
	}
	return raw
}

// maxDepth bounds the nesting of inline tables and arrays the scanner
// follows (deeper values are skipped as scalars), so hostile input cannot
// exhaust the stack.
const maxDepth = 64

// value reads one value belonging to path p (recorded on line pline),
// recording the keys of inline tables and the elements of arrays that are
// not on pline.
func (sc *scanner) value(p []string, idx []bool, pline, depth int) {
	sc.spaces()
	if sc.eof() {
		return
	}
	switch c := sc.s[sc.i]; {
	case c == '"':
		sc.basicString()
	case c == '\'':
		sc.literalString()
	case c == '{' && depth < maxDepth:
		sc.i++
		for {
			sc.blank()
			if sc.eof() {
				return
			}
			if sc.s[sc.i] == '}' {
				sc.i++
				return
			}
			st := sc.i
			keys := sc.keys()
			if len(keys) > 0 {
				kp, kidx := appendKeys(p, idx, keys)
				kline := sc.l.record(kp, kidx, st)
				sc.spaces()
				if !sc.eof() && sc.s[sc.i] == '=' {
					sc.i++
					sc.value(kp, kidx, kline, depth+1)
				}
			}
			sc.blank()
			if !sc.eof() && sc.s[sc.i] == ',' {
				sc.i++
			} else if sc.i == st {
				sc.i++ // garbage: make progress
			}
		}
	case c == '[' && depth < maxDepth:
		sc.i++
		for n := 0; ; n++ {
			sc.blank()
			if sc.eof() {
				return
			}
			if sc.s[sc.i] == ']' {
				sc.i++
				return
			}
			st := sc.i
			eline := sc.l.lineOf(st)
			if c := sc.s[sc.i]; eline != pline || c == '{' || c == '[' {
				ep := append(clone(p), strconv.Itoa(n))
				eidx := append(cloneB(idx), true)
				if eline != pline {
					sc.l.record(ep, eidx, st)
				}
				sc.value(ep, eidx, eline, depth+1)
			} else {
				sc.value(p, idx, eline, depth+1) // a scalar: nothing to record
			}
			sc.blank()
			if !sc.eof() && sc.s[sc.i] == ',' {
				sc.i++
			} else if sc.i == st {
				sc.i++
			}
		}
	default:
		for !sc.eof() {
			switch sc.s[sc.i] {
			case ',', ']', '}', '#', '\n', '\r':
				return
			}
			sc.i++
		}
	}
}

// seqs returns, for every recorded path (and prefix), the index in
// l.entries of its first appearance: an order of keys in the file finer
// than lines (keys of one inline table are in the order written). It is
// built on demand, for the rare callers that need it.
func (l *locator) seqs() map[string]int {
	seq := make(map[string]int, len(l.first))
	for i, e := range l.entries {
		for n := len(e.path); n > 0; n-- {
			k := joinPath(e.path[:n])
			if _, ok := seq[k]; ok {
				break
			}
			seq[k] = i
		}
	}
	return seq
}
