package hedging

import (
	"fmt"
	"time"
)

// OperationKind is the kind of a logical operation, which decides hedge
// eligibility (spec §1 operation-type scope, §5.1).
type OperationKind uint8

// Operation kinds. Writes are never hedged (spec §1 Non-Goals, §5.1 row 4).
const (
	PointRead       OperationKind = iota // document point read (GetItem)
	QueryPage                            // one page of QueryItems
	ReadManyPage                         // one page of ReadMany
	ChangeFeedPage                       // one page of the change feed
	MetadataRead                         // database / container / offer / throughput read
	Create                               // document create (write)
	Replace                              // document replace (write)
	Upsert                               // document upsert (write)
	Delete                               // document delete (write)
	Patch                                // document patch (write)
	StoredProcedure                      // stored procedure execution
	// QueryPlan is the gateway's query plan read before a query's first
	// page: a data-plane read (.NET's Document/QueryPlan, Java's
	// QueryPlanRetriever), hedged with the data-plane strategy, not a
	// metadata read (spec §16 Phase 2).
	QueryPlan
	numOperationKinds
)

var operationKindNames = [...]string{
	PointRead: "read", QueryPage: "query", ReadManyPage: "read_many", ChangeFeedPage: "change_feed",
	MetadataRead: "metadata_read", Create: "create", Replace: "replace", Upsert: "upsert",
	Delete: "delete", Patch: "patch", StoredProcedure: "stored_procedure", QueryPlan: "query_plan",
}

// String returns the kind's scenario-file name ("read", "create", ...).
func (k OperationKind) String() string {
	if k < numOperationKinds {
		return operationKindNames[k]
	}
	return fmt.Sprintf("OperationKind(%d)", uint8(k))
}

// ParseOperationKind maps a scenario-file name ("read", "query",
// "read_many", "change_feed", "metadata_read", "create", "replace",
// "upsert", "delete", "patch", "stored_procedure", "query_plan") to its
// kind, or returns
// an error naming the unknown value.
func ParseOperationKind(s string) (OperationKind, error) {
	for k, name := range operationKindNames {
		if name == s {
			return OperationKind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown operation kind %q", s)
}

// IsWrite reports whether k is a document write (create, replace, upsert,
// delete, patch).
func (k OperationKind) IsWrite() bool { return k >= Create && k <= Patch }

// IsMetadata reports whether k is a metadata (control-plane resource) read;
// every other kind is data-plane (spec §9.6.3). A metadata read is hedged
// as the .NET MetadataHedgingStrategy and the Rust driver hedge their
// metadata cache reads (spec §16 Phase 2): at the fixed
// [MetadataThreshold] whatever the strategy's threshold (the strategy still
// decides whether it is hedged at all), at once on a regional failure
// (canSpawnHedge), and with the primary authoritative: the alternate's
// answer counts only when it is a clean success, and the alternate is not
// retried.
func (k OperationKind) IsMetadata() bool { return k == MetadataRead }

// PhaseSet is the phase-allowed set of operation kinds of spec §5.1 row 3,
// as a bit set.
type PhaseSet uint32

// The phase-allowed sets of spec §5.1 and §16.
const (
	// Phase1 allows document point reads only.
	Phase1 PhaseSet = 1 << PointRead
	// Phase2 adds feed pages (query, read-many, change feed), the query
	// plan and metadata reads.
	Phase2 = Phase1 | 1<<QueryPage | 1<<ReadManyPage | 1<<ChangeFeedPage | 1<<MetadataRead | 1<<QueryPlan
	// PhaseFuture adds stored procedure execution.
	PhaseFuture = Phase2 | 1<<StoredProcedure
)

// allows reports whether k is in the set.
func (p PhaseSet) allows(k OperationKind) bool { return k < numOperationKinds && p&(1<<k) != 0 }

// Hedges reports whether an operation of kind k may be hedged under the
// phase-allowed set p, by rows 3 and 4 of the §5.1 decision matrix
// ([Client.Begin] applies the same rows): k is in p and is not a write.
// The zero PhaseSet is Phase1, as in [Config].Phase.
func (p PhaseSet) Hedges(k OperationKind) bool {
	if p == 0 {
		p = Phase1
	}
	ok, _ := shouldHedge(eligibility{StrategyResolved: true, PreferredRegions: 2, ApplicableRegions: 2, Kind: k, Allowed: p})
	return ok
}

// eligibilityReason says which row of the §5.1 decision matrix decided [shouldHedge].
type eligibilityReason uint8

// The rows of the spec §5.1 decision matrix, in order.
const (
	reasonNoStrategy         eligibilityReason = iota + 1 // row 1: no strategy resolved (or Disabled)
	reasonNoPreferredRegions                              // row 2: application preferred-region list empty
	reasonNotInPhase                                      // row 3: kind not in the phase-allowed set
	reasonWrite                                           // row 4: writes are never hedged
	reasonTooFewRegions                                   // row 5: < 2 applicable regions after ExcludeRegions
	reasonEligible                                        // row 6: read with >= 2 applicable regions: hedge
	// reasonRegionAffineFeed is hedgelab's row 4a, checked between rows 4
	// and 5 and numbered after the spec's six: a change-feed page whose
	// cursor is region-affine.
	reasonRegionAffineFeed
)

var reasonNames = [...]string{"", "no strategy", "no preferred regions", "not in phase-allowed set", "write", "fewer than 2 applicable regions", "eligible", "region-affine change feed"}

// String describes the row.
func (r eligibilityReason) String() string {
	if int(r) < len(reasonNames) && r != 0 {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// eligibility is the input of [shouldHedge].
type eligibility struct {
	StrategyResolved  bool          // a hedging strategy was resolved ([resolveStrategy] returned true)
	PreferredRegions  int           // length of the application's preferred-region list
	ApplicableRegions int           // applicable read regions after ExcludeRegions
	Kind              OperationKind // the operation's kind
	Allowed           PhaseSet      // the phase-allowed set (Phase1, Phase2, ...)
	// Affinity is the affinity of the operation's continuation (of its
	// chain's, for a cold page): row 4a.
	Affinity ContinuationAffinity
}

// shouldHedge evaluates the spec §5.1 decision matrix row by row, first match
// wins, and returns whether to hedge and the deciding row. Row 4a is
// hedgelab's Phase 2 addition (spec §16, §17 Q9): a change-feed page whose
// cursor is region-affine is never hedged, its cold first page included, as
// the Rust driver keeps (Document, ReadFeed) out of HEDGEABLE_PAIRS and Java
// never hedges the change feed; a page pinned to its issuing region would
// fail row 5 anyway, and the cold page would hand out the cursor of
// whichever region won. No setting lifts it (the master switch decides row
// 1 only). A change feed whose cursor the client takes for portable is
// hedged page by page as .NET does.
func shouldHedge(e eligibility) (bool, eligibilityReason) {
	switch {
	case !e.StrategyResolved:
		return false, reasonNoStrategy
	case e.PreferredRegions == 0:
		return false, reasonNoPreferredRegions
	case !e.Allowed.allows(e.Kind):
		return false, reasonNotInPhase
	case e.Kind.IsWrite():
		return false, reasonWrite
	case e.Kind == ChangeFeedPage && e.Affinity == RegionAffine:
		return false, reasonRegionAffineFeed
	case e.ApplicableRegions < 2:
		return false, reasonTooFewRegions
	}
	return true, reasonEligible
}

// Operation is one logical operation handed to a [Client]. Spec §4.3, §8.
type Operation struct {
	Kind OperationKind
	// Partition is the partition key range id the operation targets; it keys
	// the hedge-win tracker, location marks and session tokens.
	Partition string
	// Strategy is the per-operation availability strategy (zero = unset).
	Strategy AvailabilityStrategy
	// HedgingEnabled is the operation layer of the master switch (§11.3).
	HedgingEnabled Switch
	// ExcludeRegions is the user's per-operation exclusion set (§6.3).
	ExcludeRegions []Region
	// Timeout is the end-to-end operation timeout shared by both legs
	// (§9.4); 0 means none. A context deadline, when earlier, wins. With
	// [Client.Do] it bounds the body handed to the caller too, from Do's
	// start: its attempt's context is cancelled when it passes.
	Timeout time.Duration
	// HubRegionProcessingOnly makes every attempt send the
	// x-ms-cosmos-hub-region-processing-only header. The race sets it when
	// a race ends BothTransient after a leg observed 404/1002, so that the
	// caller's next attempt of the same operation keeps the header
	// (§9.6.7, §14.1); [Client.Do] sets it on the caller's op as it
	// returns.
	HubRegionProcessingOnly bool
	// Method, Path and Body describe the request for transports that need
	// them (the HTTP transport); the race never reads them.
	Method string
	Path   string
	Body   []byte
	// Request is an opaque request object for the transport, which the race
	// never reads (the hedginghttp RoundTripper puts the caller's
	// *http.Request here). Attempts may read it concurrently.
	Request any
	// Continuation is the feed position a page request resumes from (spec
	// §16 Phase 2, §17 Q9): zero for a single-shot operation or the first
	// page of a feed-range leaf. Every attempt of the race carries the same
	// one; the race reads only its Affinity (a change-feed page whose
	// cursor is region-affine is never hedged, §5.1 row 4a, [shouldHedge]).
	// A region-affine continuation must be sent pinned to its issuing region
	// ([Client.Pin]); the hedging/feed driver does so. A cold page of a
	// chain whose cursors are region-affine carries no Token and that
	// Affinity.
	Continuation Continuation
	// Legs, when not nil, bounds the alternate legs in flight of every
	// operation that carries it (spec §16 Phase 2): the race asks it for a
	// slot just before it would send the alternate, on the threshold or on
	// a failover upgrade, and returns the slot when that leg ends. Refused
	// on the threshold, the primary runs alone; refused on an upgrade
	// (§6.5 #9), the primary leg fails over sequentially as the plain path
	// does. [HedgeDiagnostics.HedgeRefused] tells. Nil: no bound.
	Legs LegGate
}

// LegGate bounds alternate legs in flight ([Operation.Legs]): the hedge
// unit of a feed fans out to K leaves, so a bound on operations or races
// (the Rust driver's metadata HedgeBudget, azure-sdk-for-rust #4914,
// #4916) is the wrong unit; a slot is held only while an alternate is out.
// Implementations are safe for concurrent use and never block
// (hedgelab/hedging/feed.Gate is one).
type LegGate interface {
	// AcquireLeg takes one slot for an alternate about to be sent and
	// reports whether it got one.
	AcquireLeg() bool
	// ReleaseLeg returns a slot AcquireLeg gave, once its leg has ended.
	ReleaseLeg()
}
