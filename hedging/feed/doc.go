// Package feed hedges feed-style operations and metadata reads (spec §16
// Phase 2, §17 Q9) on top of the hedging race, which it leaves as it is.
//
// The hedge unit is one page request of one feed-range leaf with one
// continuation: a [Driver] turns a plan (partition-key-range leaves of a
// query or change feed, or the groups of a ReadMany) into page operations,
// one [hedging.Race] each, and forwards only the winner's continuation to
// the leaf's next page. Around that loop it adds what a feed needs and a
// point read does not:
//
//   - Page affinity ([Affinity]), chosen per feed kind: none (.NET and
//     Java), pin after a hedge win, pin always, or breaker-driven (§9.5). A
//     region-affine continuation always pins its leaf to the region that
//     issued it ([hedging.Client.Pin]: no hedge, no upgrade path, no
//     failover, whatever the settings); a change feed whose cursors are
//     region-affine is not hedged at all, its cold page included. When the
//     pinned region fails, a metadata chain restarts cold and a data-plane
//     chain resumes from its continuation by failover.
//   - Concurrency: at most MaxConcurrency leaves in flight and at most
//     MaxFanOut leaves per query or change feed (ReadMany is not capped),
//     and an optional per-client [Gate] on the hedge legs in flight, so a
//     fan-out of 100 in a brown-out cannot send 100 hedges at once.
//   - Feed [Diagnostics]: pages, pages hedged, alternate wins, region
//     switches within a leaf, cold restarts and the contacts made before the
//     first page (the §16 G2 caveat).
//   - Metadata reads ([MetadataConfig], [MetadataLeaf], [Choice]): a budget
//     of alternates in flight and the choice between the fastest answer
//     and the latest by an ordered version; the fixed 1.5 s threshold, the
//     immediate hedge on a regional failure and "primary is authoritative"
//     are the race's own rules for metadata reads.
//
// The Driver is a pure state machine like the race core: time and page
// outcomes are inputs, it reads no clock and starts no goroutine, so the
// real-time [Run] (over [hedging.Client.Do]) and a simulator's event loop
// (over [hedging.Client.Begin]) drive the same rules.
package feed
