// Package racecases loads the shared table of hedge-race cases
// (shared/cases/race-cases.toml) and the project's own cases, so that every
// driver of the race — the core by hand, the real-time driver and the
// simulator — is held to the same answers.
package racecases

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/BurntSushi/toml"
)

// Leg is one leg's scripted behaviour: its latency from the moment it is
// sent and the status it returns after its own local retries.
type Leg struct {
	LatencyMs float64 `toml:"latency_ms"`
	Status    int     `toml:"status"`
	SubStatus int     `toml:"substatus"`
}

// Expect is a case's right answer.
type Expect struct {
	TerminalState string  `toml:"terminal_state"` // §10.1 name or "none"
	Winner        string  `toml:"winner"`         // primary | alternate | none
	Attempts      int     `toml:"attempts"`       // legs sent
	LatencyMs     float64 `toml:"latency_ms"`     // answer time
	LatencyMaxMs  float64 `toml:"latency_max_ms"` // 0 = exactly LatencyMs
	Status        int     `toml:"status"`         // 0 when an error is returned
}

// Case is one logical read.
type Case struct {
	Name              string            `toml:"name"`
	ThresholdMs       float64           `toml:"threshold_ms"`
	DeadlineMs        float64           `toml:"deadline_ms"`
	Regions           []string          `toml:"regions"`
	ExcludeRegions    []string          `toml:"exclude_regions"`
	EndpointKeys      map[string]string `toml:"endpoint_keys"`
	Operation         string            `toml:"operation"`
	OperationStrategy string            `toml:"operation_strategy"`
	Primary           Leg               `toml:"primary"`
	Alternate         Leg               `toml:"alternate"`
	Expect            Expect            `toml:"expect"`
}

// File is a decoded case file.
type File struct {
	Case []Case `toml:"case"`
}

// Load decodes the case file at path strictly (unknown keys are an error)
// and fills the documented defaults: regions ["A","B"], operation "read".
func Load(path string) ([]Case, error) {
	var f File
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%s: unknown key %s", path, und[0])
	}
	for i := range f.Case {
		c := &f.Case[i]
		if len(c.Regions) == 0 {
			c.Regions = []string{"A", "B"}
		}
		if c.Operation == "" {
			c.Operation = "read"
		}
	}
	return f.Case, nil
}

// SharedPath returns the path of a file in the repository's sibling shared/
// directory (../shared relative to the module root), or the value of
// HEDGELAB_SHARED/name when that variable is set.
func SharedPath(name string) string {
	if dir := os.Getenv("HEDGELAB_SHARED"); dir != "" {
		return filepath.Join(dir, name)
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	return filepath.Join(root, "..", "shared", name)
}

// LoadAll returns the shared cases followed by the project's own cases
// (internal/racecases/testdata/extra-cases.toml).
func LoadAll() ([]Case, error) {
	shared, err := Load(SharedPath(filepath.Join("cases", "race-cases.toml")))
	if err != nil {
		return nil, err
	}
	_, file, _, _ := runtime.Caller(0)
	extra, err := Load(filepath.Join(filepath.Dir(file), "testdata", "extra-cases.toml"))
	if err != nil {
		return nil, err
	}
	return append(shared, extra...), nil
}
