// Package scenarios loads, validates and builds hedgelab simulation
// scenarios: TOML files (schema in scenarios/README.md) describing a
// multi-region account, its network, faults, workload and the threshold
// policies to compare, and the library of scenarios embedded from
// scenarios/*.toml.
//
// [Load] or [Parse] a file, or [Get] an embedded one, then call
// [Scenario.Config] for the [simnet.Config] and policies to run. Every
// problem in a file is an [*Error] naming the file, line and field.
// [Scenario.WithParam] derives variants for parameter sweeps.
package scenarios
