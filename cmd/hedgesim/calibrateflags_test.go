package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hedgelab/scenarios"
)

// TestCLICalibrateFlagsRefused: a --name or --partitions that would make
// a scenario hedgesim does not accept is refused up front, by the flag's
// name and the validator's own wording (scenarios.CheckName and
// CheckValue), not by the writer's self-check "(a defect)"; nothing is
// written. The largest accepted values still calibrate (issue 24).
func TestCLICalibrateFlagsRefused(t *testing.T) {
	long := strings.Repeat("a", scenarios.MaxNameLen+1)
	cases := []struct {
		flags []string
		want  string // in stderr; "" = accepted
	}{
		{[]string{"--name", "Bad"}, `--name "Bad": must match [a-z0-9-]+ and not start with a dash, got "Bad"`},
		{[]string{"--name", "-x"}, `--name "-x": must match`},
		{[]string{"--name", "a b"}, `--name "a b": must match`},
		{[]string{"--name", ""}, `--name "": the scenario needs a name`},
		{[]string{"--name", long}, `: must be at most 64 characters (it names the output directory), got 65`},
		{[]string{"--partitions", "1000001"}, "--partitions 1000001: workload.partitions: must be between 0 and 1000000, got 1000001"},
		{[]string{"--partitions", "9223372036854775807"}, "--partitions 9223372036854775807: workload.partitions: must be between 0 and 1000000"},
		{[]string{"--name", long[:scenarios.MaxNameLen]}, ""},
		{[]string{"--partitions", "1000000"}, ""},
	}
	dir := t.TempDir()
	for i, c := range cases {
		out := filepath.Join(dir, strings.Repeat("x", i+1)+".toml")
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"calibrate", sampleTelemetry, "--out", out}, c.flags...), &stdout, &stderr)
		_, statErr := os.Stat(out)
		if c.want == "" {
			if code != exitOK {
				t.Errorf("%v: exit %d, stderr %q; want accepted", c.flags, code, stderr.String())
			} else if _, err := scenarios.Load(out); err != nil {
				t.Errorf("%v: wrote a scenario validate refuses: %v", c.flags, err)
			}
			continue
		}
		if code != exitError || !strings.Contains(stderr.String(), c.want) || strings.Contains(stderr.String(), "a defect") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.flags, code, stderr.String(), exitError, c.want)
		}
		if statErr == nil {
			t.Errorf("%v: refused, yet %s was written", c.flags, out)
		}
	}
}
