// Package hedging implements cross-region request hedging as specified in
// the cross-region hedging spec (shared/spec/cross-region-hedging-spec.md).
//
// A read goes to the primary region. If no final response has arrived by
// the threshold, exactly one request goes to one alternate region, pinned
// there by its ExcludeRegions set; the first final response wins and the
// loser is cancelled (spec §6).
//
// The package is layered:
//
//   - Pure, clock-free rules: [IsFinal] (§7.1, §7.2), [canSpawnHedge]
//     (§7.2.1), [NewThreshold] (§4.1), [AvailabilityStrategy] and
//     [resolveStrategy] (§4.2, §11.3.1), [shouldHedge] (§5.1),
//     [applicableRegions], [alternateExcludeRegions] and [distinct] (§6.2,
//     §6.3, §6.4.1) and the [HedgeDiagnostics]
//     terminal-state taxonomy (§10.1).
//   - The race core, [Race]: one logical operation's hedge race written once
//     as a deterministic state machine. Time and results are inputs; every
//     method returns the [Effects] the driver must perform. It never reads
//     the clock, starts goroutines or performs I/O ("one race, two worlds"
//     in the project's design notes, shared/DESIGN.md beside the repository).
//   - Shared state between operations, each safe for concurrent use and
//     taking "now" as a parameter: threshold policies ([ThresholdPolicy]),
//     the consecutive-hedge-win tracker ([HedgeWinTracker], §9.5), the
//     location store ([LocationStore], §6.5 #10, §9.1) and session tokens
//     ([SessionTokens], §9.2). A [Client] bundles them.
//   - Drivers: [Client.Do] runs the core in real time over a [Transport]
//     (an HTTP transport is provided by [HTTPTransport]); the simnet package
//     runs the very same core from a virtual-time event loop.
//
// Where to start: a policy owner configures a [Client] ([Config]) with an
// [AvailabilityStrategy] built from a [Threshold] ([NewHedgingStrategy]) or
// a [ThresholdPolicy] ([StaticPolicy], [P99Dynamic], [BudgetedPolicy];
// [NewPolicyStrategy]), then calls [Client.Do].
//
// Durations are [time.Duration]; virtual and real time are both expressed as
// a time.Duration offset from an arbitrary origin.
package hedging
