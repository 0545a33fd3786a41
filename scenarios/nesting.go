package scenarios

import "fmt"

// Bounds on a scenario file's structure, checked by a linear pre-scan
// before the file reaches the TOML parser, whose time, memory and stack
// grow with both: a 12 KB file of nested inline tables took 545 MB to
// parse, a 4 KB dotted key 99 MB, and a 4 MB `x = [[[…]]]` two million
// deep overflowed the stack and killed the process.
const (
	// MaxNesting is the deepest key path a file may write: the segments
	// of its [table] header (one more for an [[array]] element), of each
	// dotted key on the way, and one per array, so `a.b = { c = [[1]] }`
	// is 5 deep. A scenario needs at most about 8 (an empirical
	// distribution in a mixture component of a replica's service).
	MaxNesting = 32
	// MaxKeys bounds the keys (key = value pairs, in inline tables too,
	// and table headers) and arrays a file may write, each counted by its
	// depth (`a.b.c = [1]` counts 3 + 4): the parser's cost grows with the
	// depth of each key. A scenario counts a few thousand.
	MaxKeys = 100_000
)

// nestScan is the pre-scan behind checkNesting: a small TOML lexer that
// follows keys, headers, arrays, inline tables, the four kinds of strings
// and comments, and nothing else. On text that is not TOML it skips to
// the end of the line and goes on: the parser reports the syntax error,
// and it never reads past one, so only the valid text before it needs
// the bounds.
type nestScan struct {
	s          []byte
	i, line    int
	keys       int
	err        string
	errLine    int
	depthLimit int
}

// checkNesting refuses data deeper than [MaxNesting] or with more than
// [MaxKeys] keys, naming the line where the bound is crossed.
func checkNesting(source string, data []byte) *Error {
	sc := &nestScan{s: data, line: 1, depthLimit: MaxNesting}
	sc.document()
	if sc.err == "" {
		return nil
	}
	return &Error{File: source, Line: sc.errLine, Msg: sc.err}
}

func (sc *nestScan) fail(format string, args ...any) {
	if sc.err == "" {
		sc.err, sc.errLine = fmt.Sprintf(format, args...), sc.line
	}
}

func (sc *nestScan) eof() bool { return sc.i >= len(sc.s) || sc.err != "" }

// depth checks a key path's depth d.
func (sc *nestScan) depth(d int) bool {
	if d > sc.depthLimit {
		sc.fail("keys, tables and arrays nested more than %d deep (a scenario needs about 8)", sc.depthLimit)
		return false
	}
	return true
}

// blank skips spaces and tabs, and with nl also newlines and comments.
func (sc *nestScan) blank(nl bool) {
	for !sc.eof() {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r':
		case '\n':
			if !nl {
				return
			}
			sc.line++
		case '#':
			if !nl {
				return
			}
			for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
				sc.i++
			}
			continue
		default:
			return
		}
		sc.i++
	}
}

// toEOL skips to the end of the line, over strings (a multi-line one can
// hide a newline).
func (sc *nestScan) toEOL() {
	for !sc.eof() && sc.s[sc.i] != '\n' {
		if c := sc.s[sc.i]; c == '"' || c == '\'' {
			sc.str()
			continue
		}
		sc.i++
	}
}

func (sc *nestScan) document() {
	base := 0 // depth of the current table
	for {
		sc.blank(true)
		if sc.eof() {
			return
		}
		if sc.s[sc.i] == '[' {
			sc.i++
			array := !sc.eof() && sc.s[sc.i] == '['
			if array {
				sc.i++
			}
			base = sc.key()
			if array {
				base++
			}
			sc.count(base)
			sc.depth(base)
			sc.toEOL()
			continue
		}
		k := sc.key()
		if k == 0 || !sc.depth(base+k) {
			sc.toEOL()
			continue
		}
		sc.count(base + k)
		sc.blank(false)
		if !sc.eof() && sc.s[sc.i] == '=' {
			sc.i++
			sc.value(base + k)
		}
		sc.toEOL()
	}
}

// count counts a key or array at depth d toward MaxKeys.
func (sc *nestScan) count(d int) {
	if sc.keys += d; sc.keys > MaxKeys {
		sc.fail("more than %d keys and arrays, each counted by its depth (a scenario counts a few thousand)", MaxKeys)
	}
}

// key reads a dotted key and returns its number of segments (0: none).
func (sc *nestScan) key() int {
	n := 0
	for {
		sc.blank(false)
		if sc.eof() {
			return n
		}
		switch c := sc.s[sc.i]; {
		case c == '"' || c == '\'':
			sc.str()
		case isBareKeyByte(c):
			for !sc.eof() && isBareKeyByte(sc.s[sc.i]) {
				sc.i++
			}
		default:
			return n
		}
		n++
		sc.blank(false)
		if sc.eof() || sc.s[sc.i] != '.' {
			return n
		}
		sc.i++
	}
}

// value reads one value at key path depth d (already checked).
func (sc *nestScan) value(d int) {
	sc.blank(false)
	if sc.eof() {
		return
	}
	switch c := sc.s[sc.i]; c {
	case '"', '\'':
		sc.str()
	case '[':
		sc.i++
		if !sc.depth(d + 1) {
			return
		}
		sc.count(d + 1)
		for {
			sc.blank(true)
			if sc.eof() {
				return
			}
			switch sc.s[sc.i] {
			case ']':
				sc.i++
				return
			case ',':
				sc.i++
				continue
			}
			st := sc.i
			sc.value(d + 1)
			if sc.i == st {
				return // not a value: the parser reports it
			}
		}
	case '{':
		sc.i++
		for {
			sc.blank(true) // TOML 1.1 allows newlines in inline tables
			if sc.eof() {
				return
			}
			switch sc.s[sc.i] {
			case '}':
				sc.i++
				return
			case ',':
				sc.i++
				continue
			}
			k := sc.key()
			if k == 0 || !sc.depth(d+k) {
				return
			}
			sc.count(d + k)
			sc.blank(false)
			if sc.eof() || sc.s[sc.i] != '=' {
				return
			}
			sc.i++
			sc.value(d + k)
		}
	default:
		for !sc.eof() {
			switch sc.s[sc.i] {
			case ',', ']', '}', '#', '\n', '[', '{', '"', '\'':
				return
			}
			sc.i++
		}
	}
}

// str skips the string whose opening quote is at sc.i. A one-line string
// ends at its quote or, unterminated, before the end of its line; an
// unclosed multi-line one at the end of the text.
func (sc *nestScan) str() {
	s, c := sc.s, sc.s[sc.i]
	n := len(s)
	escapes := c == '"' // basic strings have escapes, literal strings none
	if sc.i+2 < n && s[sc.i+1] == c && s[sc.i+2] == c {
		for sc.i += 3; sc.i < n; sc.i++ {
			switch {
			case s[sc.i] == '\n':
				sc.line++
			case escapes && s[sc.i] == '\\':
				if sc.i+1 < n && s[sc.i+1] == '\n' {
					sc.line++
				}
				sc.i++
			case s[sc.i] == c && sc.i+2 < n && s[sc.i+1] == c && s[sc.i+2] == c:
				sc.i += 3
				// Up to two more quotes belong to the content: """a"""""
				for k := 0; k < 2 && sc.i < n && s[sc.i] == c; k++ {
					sc.i++
				}
				return
			}
		}
		return
	}
	for sc.i++; sc.i < n && s[sc.i] != c && s[sc.i] != '\n'; sc.i++ {
		if escapes && s[sc.i] == '\\' && sc.i+1 < n && s[sc.i+1] != '\n' {
			sc.i++
		}
	}
	if sc.i < n && s[sc.i] == c {
		sc.i++
	}
}
