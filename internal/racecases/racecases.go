// Package racecases loads the shared table of hedge-race cases
// (shared/cases/race-cases.toml) and the project's own cases, so that every
// driver of the race — the core by hand, the real-time driver and the
// simulator — is held to the same answers.
package racecases

import (
	"errors"
	"fmt"
	"io/fs"
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

// SharedDir returns the project's sibling shared/ directory: the value of
// HEDGELAB_SHARED when set, else ../shared relative to the module root. It
// may not exist (a clean clone has nothing beside it).
func SharedDir() string {
	if dir := os.Getenv("HEDGELAB_SHARED"); dir != "" {
		return dir
	}
	return filepath.Join(moduleRoot(), "..", "shared")
}

// moduleRoot is the repository root, found from this source file.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// testdata returns the path of a file in internal/racecases/testdata.
func testdata(name string) string {
	return filepath.Join(moduleRoot(), "internal", "racecases", "testdata", name)
}

// LoadShared returns the shared race cases: the repository's copy
// (internal/racecases/testdata/race-cases.toml, so tests pass on a clean
// clone) followed by the cases of SharedDir()/cases/race-cases.toml that
// the copy does not already have, when that file exists. A case of the
// shared directory replaces the copy's case of the same name, so an updated
// shared case is the one tested. Errors: a file that does not decode, or
// a shared file that exists but cannot be read.
func LoadShared() ([]Case, error) {
	return loadMerged(testdata("race-cases.toml"), filepath.Join(SharedDir(), "cases", "race-cases.toml"))
}

// loadMerged loads base and, when it exists, overlay; overlay's cases
// replace base's cases of the same name in place and its new cases are
// appended in file order.
func loadMerged(base, overlay string) ([]Case, error) {
	cases, err := Load(base)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(overlay); errors.Is(err, fs.ErrNotExist) {
		return cases, nil
	}
	more, err := Load(overlay)
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(cases))
	for i, c := range cases {
		index[c.Name] = i
	}
	for _, c := range more {
		if i, ok := index[c.Name]; ok {
			cases[i] = c
			continue
		}
		index[c.Name] = len(cases)
		cases = append(cases, c)
	}
	return cases, nil
}

// LoadAll returns the shared cases ([LoadShared]) followed by the
// project's own cases (internal/racecases/testdata/extra-cases.toml).
func LoadAll() ([]Case, error) {
	shared, err := LoadShared()
	if err != nil {
		return nil, err
	}
	extra, err := Load(testdata("extra-cases.toml"))
	if err != nil {
		return nil, err
	}
	return append(shared, extra...), nil
}
