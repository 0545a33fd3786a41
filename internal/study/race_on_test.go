//go:build race

package study

// raceEnabled reports whether the tests run under the race detector
// (.ci/run's race step): a test that is a single-goroutine simulation or
// property check skips itself there, as the race detector finds nothing
// in code no two goroutines share; the test step runs it without -race.
const raceEnabled = true
