package simnet

// This file holds the client fleet: the run's client instances, each its
// own hedging.Client with its own policy state, and the assignment of each
// operation to one of them.

import (
	"cmp"
	"fmt"
	"math/bits"

	"hedgelab/hedging"
)

// Assignment selects the fleet instance that runs an operation.
type Assignment uint8

const (
	// AssignUniform spreads operations evenly over the instances. In an
	// open loop each operation goes to an instance drawn uniformly at
	// random by a draw keyed on the seed and the operation index (common
	// random numbers: every policy sees the same assignment, and no
	// sequential stream is consumed). In a closed loop, workload client c
	// belongs to instance c mod Instances, so each instance runs
	// Clients/Instances clients (rounded up for the first Clients mod
	// Instances instances; with fewer clients than instances, instances
	// Clients..Instances-1 stay idle).
	AssignUniform Assignment = iota
	// AssignPartition sends every operation of partition p (0-based, see
	// Workload.Partitions) to instance p mod Instances, open or closed
	// loop, as when an application shards its keys over its instances.
	// With fewer partitions than instances, instances
	// Partitions..Instances-1 receive no operations; with Zipf keys the
	// instance of partition 0 carries the hottest key range.
	AssignPartition
)

// String returns "uniform" or "partition" (the scenario key's values).
func (a Assignment) String() string {
	switch a {
	case AssignUniform:
		return "uniform"
	case AssignPartition:
		return "partition"
	}
	return fmt.Sprintf("Assignment(%d)", a)
}

// MaxInstances bounds Fleet.Instances (resource guard: each instance holds
// its own client and policy state).
const MaxInstances = 100_000

// Fleet describes the client instances of a run. Each instance is its own
// hedging.Client built from Config.Client, with its own strategy from
// Policy.New: its own threshold-policy state (latency windows, hedge
// budget), hedge-win tracker (the partition breaker of spec §9.5),
// location marks and session tokens. The workload's rate (or its clients)
// is the whole fleet's; Assignment decides which instance runs each
// operation.
type Fleet struct {
	// Instances is the number of client instances, 1..MaxInstances; 0
	// means 1. One instance is the single client of a run without a
	// fleet, with identical results.
	Instances int
	// Assignment is how operations are assigned to instances (default
	// AssignUniform).
	Assignment Assignment
}

// size is the number of instances (at least 1).
func (f Fleet) size() int { return max(f.Instances, 1) }

func (f Fleet) validate() error {
	if f.Instances < 0 || f.Instances > MaxInstances {
		return fmt.Errorf("simnet: Fleet.Instances must be between 0 and %d, got %d", MaxInstances, f.Instances)
	}
	if f.Assignment > AssignPartition {
		return fmt.Errorf("simnet: Fleet.Assignment: unknown %v", f.Assignment)
	}
	return nil
}

// initFleet builds the fleet's instances as one hedging.ClientGroup of
// the first instance's configuration (s.clientCfg). Instance 0 runs the
// policy's first strategy (the one newSim's client was built with) and is
// built at once; the others are built on their first operation
// (instance), each with a fresh strategy from p.New, so a large fleet with
// few operations holds only the instances that run some (instances =
// 100000 at 200 operations/s for 10 s built 100000 clients and their
// policy state before: 2.6 GB with a 1000-bucket p99_dynamic). Neither
// constructor reads the clock or draws randomness, so building late
// changes no result.
func (s *sim) initFleet(p Policy) error {
	n := s.cfg.Fleet.size()
	if n <= 1 {
		return nil
	}
	first := s.clientCfg.Strategy
	g, err := hedging.NewClientGroup(s.clientCfg, n, func(i int) (hedging.AvailabilityStrategy, error) {
		if i == 0 {
			return first, nil
		}
		st, err := p.New()
		if err != nil {
			return st, fmt.Errorf("policy %q: %w", p.Name, err)
		}
		return st, nil
	})
	if err != nil {
		return err
	}
	c0, err := g.Client(0)
	if err != nil {
		return err
	}
	s.group, s.client0, s.instances = g, c0, int32(n)
	return nil
}

// instance returns fleet instance i (with more than one), building it on
// its first use: one call (ClientGroup.Client), no pointer of the
// instance's own to load. startOp writes it out (it is not small enough
// to inline).
func (s *sim) instance(i int32) *hedging.Client {
	c, err := s.group.Client(int(i))
	if err != nil {
		return s.buildFailed(err)
	}
	return c
}

// buildFailed keeps err, an instance's constructor error (it succeeded
// for instance 0), in s.fleetErr, which fails the run, and returns
// instance 0, which runs the operation.
func (s *sim) buildFailed(err error) *hedging.Client {
	s.fleetErr = cmp.Or(s.fleetErr, err)
	return s.client0
}

// instanceOf returns the instance that runs operation idx of partition
// part, started by closed-loop client (-1: open loop), per the fleet's
// Assignment. Called only with more than one instance.
func (s *sim) instanceOf(idx uint64, part int, client int32) int32 {
	n := uint64(s.instances)
	switch {
	case s.cfg.Fleet.Assignment == AssignPartition:
		return int32(uint64(part) % n)
	case client >= 0:
		return int32(uint64(client) % n)
	}
	// A keyed draw, uniform on [0, n) (Lemire's multiply-high; the bias is
	// below n/2^64): mix64(seed ^ key(purposeInstance, idx, 0, 0)), written
	// out (a zero b or c leaves key's xors out) so that it inlines.
	x := mix64(mix64(mix64(mix64(purposeInstance^mix64(idx)))) ^ s.seed)
	hi, _ := bits.Mul64(x, n)
	return int32(hi)
}
