package scenarios

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// lineOf returns the 1-based line of the first line of text that starts
// with prefix, failing the test when there is none.
func lineOf(t *testing.T, text, prefix string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return 0
}

// parseRepeatedly parses data n times and fails unless every parse gives
// the same error; it returns that error.
func parseRepeatedly(t *testing.T, src string, data []byte, n int) error {
	t.Helper()
	_, first := Parse(src, data)
	if first == nil {
		t.Fatalf("%s parses", src)
	}
	for range n - 1 {
		if _, err := Parse(src, data); err == nil || err.Error() != first.Error() {
			t.Fatalf("%s: parses differ:\n%v\nthen\n%v", src, first, err)
		}
	}
	return first
}

// TestTypeErrorsRepro: hub-header-1002.toml without its [[faults]] header
// puts the fault's keys in [network.replication_lag_ms], a map of numbers.
// Every parse must report the same errors, the first one being the first
// wrongly typed key of the file (targets), with the line and field.
func TestTypeErrorsRepro(t *testing.T) {
	orig := readFile(t, "hub-header-1002.toml")
	if strings.Count(orig, "\n[[faults]]\n") != 1 {
		t.Fatal("hub-header-1002.toml no longer has exactly one [[faults]] header")
	}
	text := strings.Replace(orig, "\n[[faults]]\n", "\n", 1)
	if lineOf(t, text, "[network.replication_lag_ms]") > lineOf(t, text, "status = 404") {
		t.Fatal("the fault no longer follows [network.replication_lag_ms]")
	}
	const src = "hub-no-faults.toml"
	err := parseRepeatedly(t, src, []byte(text), 20)
	want := fmt.Sprintf("%[1]s:%[2]d: network.replication_lag_ms.targets: must be a number, got an array\n"+
		"%[1]s:%[3]d: network.replication_lag_ms.operations: must be a number, got an array\n"+
		"%[1]s:%[4]d: network.replication_lag_ms.first_attempt_only: must be a number, got true or false",
		src, lineOf(t, text, "targets ="), lineOf(t, text, "operations ="), lineOf(t, text, "first_attempt_only ="))
	if err.Error() != want {
		t.Errorf("error\n got: %v\nwant: %s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Line != lineOf(t, text, "targets =") || e.Field != "network.replication_lag_ms.targets" {
		t.Errorf("first error %#v, want targets on line %d", e, lineOf(t, text, "targets ="))
	}
}

// TestTypeErrorsFileOrder: a wrongly typed value at two (or three) places
// of each map table of the schema, and of struct tables, is reported in
// file order on every parse, also when the keys sort the other way.
func TestTypeErrorsFileOrder(t *testing.T) {
	base := readFile(t, "testdata/valid.toml")
	edit := func(old, new string) string {
		if strings.Count(base, old) != 1 {
			t.Fatalf("testdata/valid.toml does not contain %q once", old)
		}
		return strings.Replace(base, old, new, 1)
	}
	for _, c := range []struct {
		name string
		text string
		want string // "<line>: <field>: <message>" per error
	}{
		{"ru", base + "[ru]\nupsert = \"a\"\ncreate = 1\nread = true\n",
			"43: ru.upsert: must be a number, got a string\n45: ru.read: must be a number, got true or false"},
		{"workload.mix", base + "[workload.mix]\nupsert = \"a\"\nread = 1\ncreate = [1]\n",
			"43: workload.mix.upsert: must be a number, got a string\n45: workload.mix.create: must be a number, got an array"},
		{"network.replication_lag_ms", base + "[network.replication_lag_ms]\n\"West US\" = \"10\"\n\"East US\" = [1]\n",
			"43: network.replication_lag_ms.West US: must be a number, got a string\n44: network.replication_lag_ms.East US: must be a number, got an array"},
		{"network.rtt_ms lines", base + "[network.rtt_ms.\"West US\"]\n\"West US\" = \"1\"\n\"East US\" = false\n",
			"43: network.rtt_ms.West US.West US: must be a number, got a string\n44: network.rtt_ms.West US.East US: must be a number, got true or false"},
		{"network.rtt_ms one line", edit(`"East US" = { "West US" = 60.0 }`, `"East US" = { "West US" = "60", "East US" = false }`),
			"29: network.rtt_ms.East US.West US: must be a number, got a string\n29: network.rtt_ms.East US.East US: must be a number, got true or false"},
		{"replicas.service_by_op", edit("servers = 4\nservice = { family = \"constant\", value_ms = 2.0 }\n",
			"servers = 4\nservice = { family = \"constant\", value_ms = 2.0 }\n[replicas.service_by_op]\nupsert = { family = \"constant\", value_ms = \"2\" }\ncreate = 7\n"),
			"28: replicas.westus.service_by_op.upsert.value_ms: must be a number, got a string\n29: replicas.westus.service_by_op.create: must be a table, got an integer"},
		{"client", edit("region = \"East US\"\n\n", "region = \"East US\"\nphase = \"2\"\nretry_max_attempts = 1.5\nprobe_interval_s = \"x\"\n\n"),
			"8: client.phase: must be an integer, got a string\n" +
				"9: client.retry_max_attempts: must be an integer, written without a decimal point or exponent (2, not 2.0)\n" +
				"10: client.probe_interval_s: must be a number, got a string"},
		{"top level", edit("seed = 1\nduration_s = 10\n", "seed = \"1\"\nduration_s = \"10\"\n"),
			"3: seed: must be an integer, got a string\n4: duration_s: must be a number, got a string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "order.toml"
			err := parseRepeatedly(t, src, []byte(c.text), 20)
			if want := src + ":" + strings.ReplaceAll(c.want, "\n", "\n"+src+":"); err.Error() != want {
				t.Errorf("error\n got: %v\nwant: %s", err, want)
			}
		})
	}
}

// TestTypeErrorsWithParam: a wrongly typed value set by WithParam on a key
// the file does not have is reported on the line of its table in the
// original file.
func TestTypeErrorsWithParam(t *testing.T) {
	s, err := Parse("p.toml", []byte(readFile(t, "testdata/valid.toml")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.WithParam("client.phase", 1.5)
	if want := "p.toml (client.phase=1.5):6: client.phase: must be an integer, got 1.5"; err == nil || err.Error() != want {
		t.Errorf("WithParam error\n got: %v\nwant: %s", err, want)
	}
}

// FuzzTypeErrors: checkType, the decoder's rules repeated, finds a problem
// exactly when decoding into File fails; with one problem, the decoder
// reports that one, with the same message.
func FuzzTypeErrors(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw map[string]any
		if _, err := toml.Decode(string(data), &raw); err != nil {
			return
		}
		var file File
		_, err := toml.Decode(string(data), &file)
		var probs []typeProblem
		checkType(nil, raw, reflect.TypeFor[File](), &probs, false)
		if (err != nil) != (len(probs) > 0) {
			t.Fatalf("decoder error %v, checkType problems %v", err, probs)
		}
		if len(probs) == 1 {
			_, _, msg := decodeError(err)
			if got := plainTypeError(probs[0].msg); got != msg {
				t.Fatalf("checkType message %q, decoder %q", got, msg)
			}
		}
	})
}

// TestMapTableShape: a value that is not a table where the schema expects
// a map table is an error naming the line and field, not an empty table
// the decoder accepts silently (before: `ru = 5` parsed without a word).
func TestMapTableShape(t *testing.T) {
	orig := readFile(t, "bimodal.toml")
	for _, tc := range []struct {
		name, old, new, prefix, want string
	}{
		{"ru", "\nseed = ", "\nru = 5\nseed = ", "ru = 5", "ru: must be a table, got an integer"},
		{"rtt_ms entry", "[network.rtt_ms]\n", "[network.rtt_ms]\n\"Mars\" = 5\n", `"Mars" = 5`, "network.rtt_ms.Mars: must be a table, got an integer"},
		{"replication_lag_ms", "[network.rtt_ms]\n", "replication_lag_ms = \"none\"\n[network.rtt_ms]\n", "replication_lag_ms =", "network.replication_lag_ms: must be a table, got a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(orig, tc.old) {
				t.Fatalf("bimodal.toml has no %q", tc.old)
			}
			text := strings.Replace(orig, tc.old, tc.new, 1)
			err := parseRepeatedly(t, "shape.toml", []byte(text), 5)
			want := fmt.Sprintf("shape.toml:%d: %s", lineOf(t, text, tc.prefix), tc.want)
			if err.Error() != want {
				t.Errorf("got  %v\nwant %s", err, want)
			}
		})
	}
}
