// Package scorecard scores threshold policies over a set of scenarios
// (issue 25, the scorecard's fourth edition): each scenario's policies and
// a roster of one policy per type, paired replications added until every
// verdict of internal/study's rule is decided, the hindsight frontier of
// fixed thresholds with each policy's regret to it, and the clairvoyant
// bound where the model allows one. `hedgesim scorecard` and notebook 01
// are its users.
package scorecard

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"hedgelab/scenarios"
)

// Source is where a scorecard's scenarios come from: Scenarios yields them
// in the order they are scored, with an error for one that cannot be read
// (which stops the scorecard). Name describes the set in reports ("3
// files", "the embedded library"). Any producer of scenarios — files, the
// embedded library, a generator — is a Source.
type Source struct {
	Name      string
	Scenarios iter.Seq2[*scenarios.Scenario, error]
}

// Files returns the scenarios of paths in order: a directory stands for
// its *.toml files (sorted by name; one with none is an error, not an
// empty set), anything else for the one file. A
// file whose content an earlier path already gave (the same case in a
// repository copy and in ../shared) is read once.
func Files(paths ...string) Source {
	return Source{
		Name: fmt.Sprintf("%d path(s)", len(paths)),
		Scenarios: func(yield func(*scenarios.Scenario, error) bool) {
			var seen [][]byte
			for _, p := range paths {
				files := []string{p}
				if st, err := os.Stat(p); err == nil && st.IsDir() {
					files, _ = filepath.Glob(filepath.Join(p, "*.toml")) // the pattern is well formed: no error
					if len(files) == 0 {
						yield(nil, fmt.Errorf("%s: a directory with no *.toml scenario files", p))
						return
					}
					slices.Sort(files)
				}
				for _, f := range files {
					data, err := os.ReadFile(f)
					if err != nil {
						yield(nil, err)
						return
					}
					if slices.ContainsFunc(seen, func(d []byte) bool { return string(d) == string(data) }) {
						continue
					}
					seen = append(seen, data)
					s, err := scenarios.Parse(filepath.ToSlash(f), data)
					if !yield(s, err) || err != nil {
						return
					}
				}
			}
		},
	}
}

// Library returns the embedded scenarios (scenarios.Embedded), by name.
func Library() Source {
	return Source{
		Name: "the embedded library",
		Scenarios: func(yield func(*scenarios.Scenario, error) bool) {
			list, err := scenarios.Embedded()
			if err != nil {
				yield(nil, err)
				return
			}
			for _, s := range list {
				if !yield(s, nil) {
					return
				}
			}
		},
	}
}

// Generated returns n scenarios from gen: scenario i is gen(i), for i from
// 0 to n-1 (a generator of scenarios from a seed, such as the population
// of `hedgesim scorecard --n N --seed S`).
func Generated(name string, n int, gen func(i int) (*scenarios.Scenario, error)) Source {
	return Source{
		Name: name,
		Scenarios: func(yield func(*scenarios.Scenario, error) bool) {
			for i := range n {
				s, err := gen(i)
				if !yield(s, err) || err != nil {
					return
				}
			}
		},
	}
}

// Concat returns the scenarios of every source in turn.
func Concat(name string, sources ...Source) Source {
	return Source{
		Name: name,
		Scenarios: func(yield func(*scenarios.Scenario, error) bool) {
			for _, src := range sources {
				for s, err := range src.Scenarios {
					if !yield(s, err) || err != nil {
						return
					}
				}
			}
		},
	}
}

// Population returns the scenarios of space sp at seed with the given
// indices, in that order (the population of `hedgesim scorecard --n N
// --seed S [--space FILE]` is indices 0..N-1; a shard's, those of its
// share): scenario i is sp.Generate(seed, i), parsed as `hedgesim
// validate` parses the file `hedgesim fuzz` writes for it, so a scenario
// of a population can be written out and rerun byte for byte. The same
// space, seed and index always give the same scenario. Errors name the
// scenario (fuzz-<seed>-<i>) and how to write it out: the generator's (a
// space lacking a key) and the parser's (a defect of the generator, which
// `hedgesim fuzz` reports).
func Population(sp *scenarios.Space, seed uint64, indices []int) Source {
	return Generated(fmt.Sprintf("%d scenarios of %s at seed %d", len(indices), sp.Source, seed), len(indices), func(k int) (*scenarios.Scenario, error) {
		i := indices[k]
		name := fmt.Sprintf("fuzz-%d-%d", seed, i)
		doc, err := sp.Generate(seed, i)
		if err == nil {
			var s *scenarios.Scenario
			if s, err = scenarios.Parse(name+".toml", doc.Marshal()); err == nil {
				return s, nil
			}
		}
		return nil, fmt.Errorf("population scenario %s does not generate: %w\n(write it out with: hedgesim fuzz%s --seed %d --first %d --n 1 --keep --out DIR)", name, err, spaceFlag(sp), seed, i)
	})
}

// spaceFlag is the --space flag that names sp ("" for an embedded space,
// which fuzz does not take by name).
func spaceFlag(sp *scenarios.Space) string {
	if strings.HasPrefix(sp.Source, "embedded:") {
		if sp.Source == scenarios.PopulationSpaceSource {
			return " --space scenarios/space/population.toml"
		}
		return ""
	}
	return " --space " + sp.Source
}
