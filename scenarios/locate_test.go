package scenarios

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

const locDoc = `# comment [not.a.table]
name = "x" # trailing
a.b."c d" = 1
'lit key' = 2

[client]
region = "East US"
inline = { x = 1, y = { z = 2 }, "q r" = 3 }

[[replicas]]
name = "one"
service = { family = "constant", value_ms = 1 }

[[replicas]]
name = "two"
[replicas.service]
family = "mixture"
  [[replicas.service.components]]
  weight = 1
  [[replicas.service.components]]
  weight = 2
[replicas.service_by_op]
read = { family = "constant", value_ms = 3 }

[network.rtt_ms]
"East US" = { "West US" = 60.0, "North \"Europe\"" = 90 }

[workload]
text = """
multi = line
[fake]
"""
list = [
  1, # one
  { a = 1 },
  [2, 3],
]
after = 'x'
  [ spaced . "table" ]
k = 1
`

func TestLocator(t *testing.T) {
	l := locate([]byte(locDoc))
	for _, c := range []struct {
		path string
		want int
	}{
		{"name", 2},
		{"a", 3}, {"a.b", 3}, {"a.b.c d", 3},
		{"lit key", 4},
		{"client", 6}, {"client.region", 7},
		{"client.inline.x", 8}, {"client.inline.y.z", 8}, {"client.inline.q r", 8},
		{"client.missing", 6}, // falls back to the table header
		{"replicas.0", 10}, {"replicas.0.name", 11}, {"replicas.0.service.value_ms", 12},
		{"replicas.1", 14}, {"replicas.1.name", 15}, {"replicas.1.service", 16},
		{"replicas.1.service.family", 17},
		{"replicas.1.service.components.0.weight", 19},
		{"replicas.1.service.components.1", 20}, {"replicas.1.service.components.1.weight", 21},
		{"replicas.1.service.components.1.nope", 20},
		{"replicas.1.service_by_op.read.value_ms", 23},
		{"replicas.1.servers", 14}, // absent: the element's header
		{"replicas.2.name", 10},    // no such element: the array's first line
		{"network", 25}, {"network.rtt_ms", 25},
		{"network.rtt_ms.East US.West US", 26}, {`network.rtt_ms.East US.North "Europe"`, 26},
		{"workload.text", 29},
		{"workload.list", 33}, {"workload.list.0", 34}, {"workload.list.1.a", 35},
		{"workload.list.2.1", 36},
		{"workload.after", 38},
		{"fake", 0},
		{"spaced.table.k", 40},
		{"nothing.here", 0},
	} {
		if got := l.line(strings.Split(c.path, ".")...); got != c.want {
			t.Errorf("line(%s) = %d, want %d", c.path, got, c.want)
		}
	}
	// Keys without array indexes, as BurntSushi/toml reports them.
	for _, c := range []struct {
		key       string
		wantLine  int
		want      string
		wantFound int
	}{
		{"replicas.name", 0, "replicas.0.name", 11},
		{"replicas.name", 15, "replicas.1.name", 15},
		{"replicas.service.components.weight", 21, "replicas.1.service.components.1.weight", 21},
		{"workload.list.a", 0, "workload.list.1.a", 35},
	} {
		p, line, ok := l.find(strings.Split(c.key, "."), c.wantLine)
		if !ok || strings.Join(p, ".") != c.want || line != c.wantFound {
			t.Errorf("find(%s, %d) = %v %d %v, want %s %d", c.key, c.wantLine, p, line, ok, c.want, c.wantFound)
		}
	}
	if _, _, ok := l.find([]string{"nope"}, 0); ok {
		t.Error("find(nope) found something")
	}
}

// TestLocatorGarbage feeds text that is not TOML: the locator must neither
// panic nor loop.
func TestLocatorGarbage(t *testing.T) {
	for _, s := range []string{
		"", "=", "[", "[[", "]]", "{", "a = {", "a = [", "a = [1,", `a = "unterminated`, "a = '''x", `a = """x`,
		"a = { b = [ { c = ", "\"\\", strings.Repeat("[", 10000), "a = " + strings.Repeat("{b=", 10000),
		"a = " + strings.Repeat("[", 10000), "x.=.y", "\x00\xff", "a = }", "a = ]", "[a]]]\n[[b]\nc",
	} {
		l := locate([]byte(s))
		_ = l.line("a", "b")
		_, _, _ = l.find([]string{"a"}, 1)
	}
}

// bigPartitions returns the tiny scenario with one fault listing n
// partitions on one line (the hostile input of issue 12).
func bigPartitions(t testing.TB, n int) []byte {
	t.Helper()
	s, err := Get("tiny")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(strings.Replace(string(s.locText), "partitions = 16", "partitions = 1000", 1))
	b.WriteString("\n[[faults]]\nprobability = 0.01\npartitions = [")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i % 1000))
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// The locator's memory does not grow with the elements of a one-line list:
// before issue 12 it recorded each element (several allocations apiece).
func TestLocatorOneLineListIsFree(t *testing.T) {
	small, large := bigPartitions(t, 10), bigPartitions(t, 100_000)
	a := testing.AllocsPerRun(3, func() { locate(small) })
	b := testing.AllocsPerRun(3, func() { locate(large) })
	if b > a+64 {
		t.Errorf("locate: %v allocations for 10 partitions, %v for 100000; want about the same", a, b)
	}
	l := locate(large)
	line := strings.Count(string(large), "\n") // the list's line
	if got := l.line("faults", "0", "partitions", "99999"); got != line {
		t.Errorf("line of the last element = %d, want %d", got, line)
	}
}

// A file over MaxFileBytes is refused by name before it is parsed.
func TestParseRefusesHugeFile(t *testing.T) {
	data := make([]byte, MaxFileBytes+1)
	for i := range data {
		data[i] = ' '
	}
	_, err := Parse("huge.toml", data)
	if err == nil || !strings.HasPrefix(err.Error(), "huge.toml: ") || !strings.Contains(err.Error(), "8 MiB") {
		t.Fatalf("Parse of %d bytes: %v; want an error naming huge.toml and the 8 MiB limit", len(data), err)
	}
	path := t.TempDir() + "/huge.toml"
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Load: %v; want an error naming %s", err, path)
	}
}

// BenchmarkParseLargeList parses a scenario whose fault lists 1M
// partitions on one line (~4.9 MB). Issue 12 measured 19 s and 594 MB
// peak for `hedgesim validate` on it before the locator was made linear.
func BenchmarkParseLargeList(b *testing.B) {
	data := bigPartitions(b, 1_000_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("big.toml", data); err != nil {
			b.Fatal(err)
		}
	}
}
