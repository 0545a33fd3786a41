// Package hedging implements cross-region request hedging as specified in
// the cross-region hedging spec (shared/spec/cross-region-hedging-spec.md).
//
//	c, err := hedging.NewClient(hedging.Config{
//		Regions: []hedging.Endpoint{
//			{Region: "West US", Key: "westus"},
//			{Region: "East US", Key: "eastus"},
//		},
//		Strategy:  hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(200 * time.Millisecond))),
//		Transport: regionsTransport{},
//	})
//	if err != nil {
//		panic(err)
//	}
//	resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "0"})
//	if err != nil {
//		panic(err)
//	}
//	cause, _ := resp.Diagnostics.SpawnCause()
//	fmt.Println(resp.Result.Status, resp.Region, resp.RequestCharge, resp.Diagnostics.TerminalState(), cause)
//	// Output: 200 East US 1.5 AlternateWon 503
//
// (This is [Client.Do]'s example, compiled and run by go test; its
// regionsTransport answers 503 from West US and 200 from East US. For HTTP,
// use the hedginghttp sub-package: an http.RoundTripper, or its Transport
// for Client.Do; for metrics, hedgingotel; for queries, ReadMany, the
// change feed and metadata reads hedged per page (spec §16 Phase 2),
// hedging/feed; for threshold policies, hedging/threshold.)
//
// A read goes to the primary region. If no final response has arrived by
// the threshold, exactly one request goes to one alternate region, pinned
// there by its ExcludeRegions set; the first final response wins and the
// loser is cancelled (spec §6). A 503, 404/1002, 429/3092 or transport
// error of the primary sends the alternate at once (§7.2.1).
//
// The package is layered:
//
//   - Pure, clock-free rules: [IsFinal] (§7.1, §7.2), [NewThreshold] (§4.1),
//     [AvailabilityStrategy] (§4.2, §11.3.1) and the [HedgeDiagnostics]
//     terminal-state taxonomy (§10.1).
//   - The race core, [Race]: one logical operation's hedge race written once
//     as a deterministic state machine. Time and results are inputs; every
//     call yields the [Effects] the driver must perform. It never reads
//     the clock, starts goroutines or performs I/O ("one race, two worlds"
//     in the project's design notes, shared/DESIGN.md beside the
//     repository). Its tie-break for simultaneous answers is [Leg.WinsTie].
//   - Shared state between operations, each safe for concurrent use and
//     taking "now" as a parameter: a threshold policy (any
//     [ThresholdPolicy]; the policies under study are in hedging/threshold),
//     the consecutive-hedge-win tracker ([HedgeWinTracker], §9.5), the
//     location store (§6.5 #10, §9.1) and session tokens (§9.2). A
//     [Client] bundles them; a [ClientGroup] is many clients of one
//     [Config] (one per shard), each with its own.
//   - Drivers: [Client.Do] runs the core in real time over a [Transport];
//     the simnet package runs the very same core from a virtual-time event
//     loop. [Observer] sees every attempt and operation of Client.Do.
//
// Where to start: a policy owner configures a [Client] ([Config]) with an
// [AvailabilityStrategy] built from a [Threshold] ([NewHedgingStrategy]) or
// a [ThresholdPolicy] ([NewPolicyStrategy]; the policies are in
// hedging/threshold: [hedgelab/hedging/threshold.Recommended], the
// recommended one, and the others under study), optionally with a
// [HedgeGate] beside the threshold ([HedgingStrategy.Gate]: a hedge budget,
// [hedgelab/hedging/threshold.Budget], admits each hedge when it is due and
// each read a tripped partition breaker moves to the alternate), then calls
// [Client.Do]. A policy chooses each operation's threshold from a
// [ThresholdQuery] (primary and alternate regions, operation kind, time
// left) and learns from the [Observation]s the race reports (an
// operation started, an alternate sent, an operation ended and what
// became of each leg); a gate admits hedges and sees the same
// observations.
//
// Durations are [time.Duration]; virtual and real time are both expressed as
// a time.Duration offset from an arbitrary origin.
package hedging
