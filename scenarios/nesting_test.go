package scenarios

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// nestedTables returns `x = {a = {a = … 1 …}}` with n inline tables:
// about 4 bytes per level.
func nestedTables(n int) []byte {
	return []byte("x = " + strings.Repeat("{a = ", n) + "1" + strings.Repeat("}", n) + "\n")
}

const tooDeep = "keys, tables and arrays nested more than 32 deep (a scenario needs about 8)"

// TestNestingRefused: the inputs of issue 19 that exhausted memory (nested
// inline tables: 4 KB took 91 MB, 12 KB 545 MB, 1.2 MB was killed at 24 GB)
// or the stack (`x = [[[…]]]` two million deep), and dotted keys, are
// refused before the TOML parser sees them, with the line of the bracket
// or key that crosses the bound.
func TestNestingRefused(t *testing.T) {
	head := "# [[[[ { {\nname = \"x\" # ]]]]\ns = \"[[[[\\\"{{{{\"\nt = '[[[['\nu = \"\"\"\n[[[[\"\"\"\nv = '''\n{{{{'''\n"
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"inline tables 4 KB", nestedTables(1000), "n.toml:1: " + tooDeep},
		{"inline tables 12 KB", nestedTables(3000), "n.toml:1: " + tooDeep},
		{"inline tables 1.2 MB", nestedTables(300_000), "n.toml:1: " + tooDeep},
		{"arrays 2e6 deep (4 MB)", []byte("x = " + strings.Repeat("[", 2_000_000) + strings.Repeat("]", 2_000_000) + "\n"), "n.toml:1: " + tooDeep},
		{"arrays 33 deep", []byte("x = " + strings.Repeat("[", 32) + "1" + strings.Repeat("]", 32) + "\n"), "n.toml:1: " + tooDeep},
		{"dotted key 33 deep", []byte("a" + strings.Repeat(".a", 32) + " = 1\n"), "n.toml:1: " + tooDeep},
		{"header and key", []byte("[[a" + strings.Repeat(".a", 29) + "]]\nb.c = 1\n"), "n.toml:2: " + tooDeep},
		{"after brackets in comments and strings", []byte(head + string(nestedTables(40))), "n.toml:9: " + tooDeep},
		{"multi-line array", []byte("x = [\n  1, # ]\n  [[\n" + strings.Repeat("[", 40) + "\n"), "n.toml:4: " + tooDeep},
		{"many keys", []byte(strings.Repeat("k = 1\n", MaxKeys+1)), fmt.Sprintf("n.toml:%d: more than %d keys and arrays, each counted by its depth (a scenario counts a few thousand)", MaxKeys+1, MaxKeys)},
		{"many deep keys", []byte(strings.Repeat("a.b.c.d = 1\n", MaxKeys/4+1)), fmt.Sprintf("n.toml:%d: more than %d keys and arrays, each counted by its depth (a scenario counts a few thousand)", MaxKeys/4+1, MaxKeys)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("n.toml", c.data)
			if err == nil || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s", err, c.want)
			}
			if _, err := BuildPolicies("p.toml", c.data, 0); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(c.want, "n.toml")) {
				t.Errorf("BuildPolicies: got %v, want %s", err, c.want)
			}
		})
	}
}

// TestNestingAccepted: the deepest and most keys allowed pass the
// pre-scan, and brackets in strings and comments do not count.
func TestNestingAccepted(t *testing.T) {
	for _, c := range []struct {
		name string
		data string
	}{
		{"arrays 32 deep", "x = " + strings.Repeat("[", 31) + "1" + strings.Repeat("]", 31)},
		{"inline tables 32 deep", string(nestedTables(31))},
		{"dotted key 32 deep", "a" + strings.Repeat(".a", 31) + " = 1"},
		{"brackets in strings", `s = "` + strings.Repeat("[{", 100) + `\"[" ` + "\nt = '''\n" + strings.Repeat("[", 100) + "'''''\nu = '\\'"},
		{"brackets in a comment", "# " + strings.Repeat("[", 100)},
		{"quotes closing a multi-line string", `s = """a"""""` + "\nx = " + strings.Repeat("[", 31) + strings.Repeat("]", 31)},
		{"keys at the bound", strings.Repeat("k = 1\n", MaxKeys)},
	} {
		if e := checkNesting("n.toml", []byte(c.data)); e != nil {
			t.Errorf("%s: %v", c.name, e)
		}
	}
	for _, name := range []string{"tiny.toml", "testdata/valid.toml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if e := checkNesting(name, data); e != nil {
			t.Errorf("%s: %v", name, e)
		}
	}
}

// decodedDepth is the depth of the deepest value in a decoded document:
// one per table and array on the way.
func decodedDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, decodedDepth(e))
		}
		return d + 1
	case []map[string]any:
		for _, e := range v {
			d = max(d, decodedDepth(e))
		}
		return d + 1
	case []any:
		for _, e := range v {
			d = max(d, decodedDepth(e))
		}
		return d + 1
	}
	return 0
}

// FuzzCheckNesting: the pre-scan never panics; what it accepts and the
// TOML parser decodes is no deeper than the bound allows (a header's
// arrays of tables add at most one level per segment: 2 × MaxNesting,
// plus the root table); and commented out, any text passes.
func FuzzCheckNesting(f *testing.F) {
	addSeeds(f)
	f.Add(nestedTables(40))
	f.Add([]byte("[[a.b]]\n[a.b.c]\nd.e = [[1], {f = [2]}]\ns = \"\"\"[\"\"\"\"\n"))
	f.Add([]byte("x = [ # [\n'[', \"]\", [[\n]]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e := checkNesting("f.toml", data)
		if e == nil {
			var raw map[string]any
			if _, err := toml.Decode(string(data), &raw); err == nil {
				if d := decodedDepth(raw); d > 2*MaxNesting+1 {
					t.Fatalf("accepted a document %d deep", d)
				}
			}
		} else if e.Line < 1 || e.Line > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("line %d out of range", e.Line)
		}
		lines := bytes.Split(data, []byte("\n"))
		for i := range lines {
			if bytes.ContainsAny(lines[i], "\r") {
				return // a lone \r is no line end for a comment
			}
			lines[i] = append([]byte("#"), lines[i]...)
		}
		if e := checkNesting("f.toml", bytes.Join(lines, []byte("\n"))); e != nil {
			t.Fatalf("commented out: %v", e)
		}
	})
}

// BenchmarkParseNested12KB parses the 12 KB file of nested inline tables
// of issue 19, which took 545 MB before the pre-scan refused it.
func BenchmarkParseNested12KB(b *testing.B) {
	data := nestedTables(3000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("n.toml", data); err == nil {
			b.Fatal("accepted")
		}
	}
}
