//go:build !race

package study

// raceEnabled: see race_on_test.go.
const raceEnabled = false
