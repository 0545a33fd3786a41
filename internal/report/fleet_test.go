package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// summary.json names the fleet size only for a fleet of more than one
// instance, after "replications"; one instance (or none given) writes the
// same file as before fleets existed.
func TestSummaryJSONInstances(t *testing.T) {
	for _, c := range []struct {
		instances int
		want      any
	}{{0, nil}, {1, nil}, {100, float64(100)}} {
		r := fakeRun(1, 1)
		base, err := summaryJSON(r)
		if err != nil {
			t.Fatal(err)
		}
		r.Instances = c.instances
		data, err := summaryJSON(r)
		if err != nil {
			t.Fatal(err)
		}
		var s map[string]any
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		if got := s["instances"]; got != c.want {
			t.Errorf("instances %d: summary.json has instances = %v, want %v", c.instances, got, c.want)
		}
		if c.want == nil && !bytes.Equal(data, base) {
			t.Errorf("instances %d: summary.json changed:\n%s", c.instances, data)
		}
		if c.want != nil && !bytes.Contains(data, []byte("\"replications\": 1,\n  \"instances\": 100,\n  \"duration_s\"")) {
			t.Errorf("instances not after replications:\n%.200s", data)
		}
	}
}
