package tomltree

import (
	"reflect"
	"testing"

	"github.com/BurntSushi/toml"
)

// A document written by Marshal reads back, with BurntSushi/toml, as the
// values that were set: floats stay floats, keys that need quoting are
// quoted, small tables are inline, arrays of tables have headers.
func TestMarshalReadsBack(t *testing.T) {
	doc := New().Set("name", `a "quoted" name`).Set("n", 3).Set("x", 2.0).Set("on", true)
	doc.Table("net").Table("rtt_ms").Table("East US").Set("West US 2", 70.0)
	r := doc.Append("replicas")
	r.Set("name", "a").Set("service", New().Set("family", "constant").Set("value_ms", 1.0))
	m := doc.Append("replicas").Table("service").Set("family", "mixture")
	m.Append("components").Set("weight", 0.5).Set("family", "constant").Set("value_ms", 1.0)
	doc.Set("q", []any{[]any{0.0, 1.0}, []any{1.0, 2.5}})
	var got map[string]any
	if _, err := toml.Decode(string(doc.Marshal()), &got); err != nil {
		t.Fatalf("%v:\n%s", err, doc.Marshal())
	}
	want := map[string]any{
		"name": `a "quoted" name`, "n": int64(3), "x": 2.0, "on": true,
		"net":      map[string]any{"rtt_ms": map[string]any{"East US": map[string]any{"West US 2": 70.0}}},
		"replicas": []map[string]any{{"name": "a", "service": map[string]any{"family": "constant", "value_ms": 1.0}}, {"service": map[string]any{"family": "mixture", "components": []map[string]any{{"weight": 0.5, "family": "constant", "value_ms": 1.0}}}}},
		"q":        []any{[]any{0.0, 1.0}, []any{1.0, 2.5}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%#v\nwant\n%#v\nfrom\n%s", got, want, doc.Marshal())
	}
	c := doc.Clone()
	c.Table("net").Delete("rtt_ms")
	if _, ok := doc.Table("net").Get("rtt_ms"); !ok {
		t.Error("Clone shares tables with the original")
	}
}
