// Package simnet is a virtual-time discrete-event simulation of a
// multi-region database network that drives the production hedging package.
//
// A simulated read goes through exactly the decisions a real application's
// read goes through: simnet owns the network, the replicas, the faults and
// the workload, and runs the very same [hedging.Race] core, with the same
// threshold policies, hedge-win tracker, location store, session tokens and
// retry rules, from a single-goroutine event loop. simnet makes no hedging
// decision of its own.
//
// Engine: a virtual clock and a queue of value events ordered by (time,
// insertion sequence), so ties are deterministic: the next open-loop
// arrival in a slot, FIFO lanes for the kinds pushed in time order
// (arrivals, threshold and deadline timers), a calendar of buckets for
// responses and a 4-ary heap for the rest. Timers are cancelled lazily
// (the race ignores stale ones), and a timer that a response already
// queued for the same operation makes dead never enters the queue.
//
// Randomness: math/rand/v2 PCG streams. Arrivals and operation attributes
// come from sequential streams; every per-attempt draw (network jitter,
// service time, fault, episode membership) is keyed by (seed, operation
// index, replica, attempt number, purpose), so every policy compared in one
// run sees the same arrivals and the same base latencies (common random
// numbers), and adding a policy or a region does not change what another
// component draws. Same Config and seed ⇒ identical [Stats], byte for byte.
//
// Model: regions reached through endpoints that map to physical replicas
// (several endpoints may alias one replica and then share its queue);
// client-to-replica round-trip time from an RTT matrix plus jitter; replica
// service times per operation kind; k servers and a FIFO queue per replica
// (0 servers = unlimited); slow or failing episodes with ramps; fault rules
// (503, 404/1002, 429/3092/3200/3210/3214, 408, 410, 500, 403, ...); a
// replication-lag model that answers 404/1002 to a read whose session token
// is ahead of the replica; an optional RU/s budget per partition and region
// (429/3200) and an optional local throughput-control gate (local 429).
// Cancelling an attempt still queued removes it; one already in service
// runs to completion and still charges its RU (spec §14.2), unless the
// replica's cancel mode says otherwise (Replica.Cancel: abort in service
// with a pro-rata charge, or no cancellation at all). Replicas may bound
// their queue (Replica.QueueLimit, refused requests answered with
// Replica.OverflowStatus) and serve background load from other tenants
// (Config.Background); runs that model capacity measure utilisation, queue
// length, refusals and background latency per replica
// (Stats.Capacity, see capacity.go).
//
// Clients: one hedging.Client by default, or a fleet of independent
// instances (Config.Fleet), each with its own policy state, breaker,
// location marks and session tokens, sharing the replicas; the workload's
// rate is the fleet's total and each operation runs on one instance.
//
// Feeds (Config.Feed, feed.go): queries, ReadMany calls and change-feed
// polls run page by page through hedging/feed's Driver, driven from the
// event loop like the race core (each page one race in an op slot); setup
// stages are metadata reads under feed.MetadataConfig and the query plan
// a data-plane read under the query's own strategy; Config.Lag and
// Config.Consistency make replication lag a process per (region,
// partition) and decide what a lagging replica answers; Stats.Feed holds
// the feed measurements. A run without them takes none of these paths.
//
// Units: virtual time is a time.Duration from the start of the run;
// configuration latencies are in milliseconds; RU is request units.
package simnet
