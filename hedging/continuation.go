package hedging

import "fmt"

// ContinuationAffinity says where a continuation may be resumed (spec §16
// Phase 2, §17 Q9).
type ContinuationAffinity uint8

// Continuation affinities.
const (
	// Portable: any region can resume the continuation, as the .NET and
	// Java SDKs treat query continuations (a key position), so its next
	// page may be hedged and fail over.
	Portable ContinuationAffinity = iota
	// RegionAffine: only the region that issued the continuation can resume
	// it (the partition-key-range feed's ETag, a region-local change-feed
	// LSN), so its next page must be pinned there ([Client.Pin]): no hedge,
	// no failover.
	RegionAffine
)

// String returns "portable" or "region_affine".
func (a ContinuationAffinity) String() string {
	switch a {
	case Portable:
		return "portable"
	case RegionAffine:
		return "region_affine"
	}
	return fmt.Sprintf("ContinuationAffinity(%d)", uint8(a))
}

// DefaultContinuationAffinity is the affinity of a continuation of kind
// when its transport cannot tell (spec §16 Phase 2, §17 Q9): RegionAffine
// for the change feed and metadata feeds, whose continuation is an ETag
// "only meaningful to the region that issued it" (the Rust driver's
// reason for pinning the partition-key-range feed and for refusing to
// hedge the document change feed), Portable for every other kind (query
// and ReadMany continuations, as the .NET and Java SDKs hedge them).
func DefaultContinuationAffinity(kind OperationKind) ContinuationAffinity {
	if kind == ChangeFeedPage || kind.IsMetadata() {
		return RegionAffine
	}
	return Portable
}

// Continuation is the position of a feed-range leaf: the opaque token a
// page response hands out and the next page request sends back (spec §16
// Phase 2: "the winning page's continuation token is forwarded to the next
// page"). The zero value is a cold start (no continuation).
type Continuation struct {
	// Token is the opaque token (x-ms-continuation, or the change feed's
	// ETag); "" means none.
	Token string
	// Affinity is where Token may be resumed.
	Affinity ContinuationAffinity
	// IssuedBy is the region that issued Token; "" when unknown.
	IssuedBy Region
}

// Cold reports whether c carries no token: the first page of a leaf, or a
// chain restarted from scratch.
func (c Continuation) Cold() bool { return c.Token == "" }

// PageInfo is what a response says as a page of a feed or a metadata read
// (spec §16 Phase 2), in [Result.Page].
type PageInfo struct {
	// Continuation is the position the response hands out for the next
	// page (x-ms-continuation, or the change feed's ETag); cold (no token)
	// when the feed-range leaf is drained.
	Continuation Continuation
	// ServedBy is the region the server reports it served the request
	// from; empty when the transport does not know (the attempt's endpoint
	// region then stands for it).
	ServedBy Region
	// AppliedLSN is what the serving replica had applied: an ordered version
	// (a log sequence number; 0 = unknown). Unlike an _etag it can be
	// compared: the larger is the later view (spec §16 metadata reads).
	AppliedLSN int64
}

// Pin routes op to region alone: op.ExcludeRegions becomes the user's set ∪
// (every preferred region but region), the set the race gives its pinned
// alternate (§6.3, §6.4.1). With one applicable region, §5.1 row 5 refuses
// the hedge, so neither the threshold nor the upgrade path (§6.5 #9) sends
// an alternate, and the plain path has no other region to fail over to: a
// region-affine continuation never reaches a region that did not issue it.
// No setting can undo the pin: the master switch and its environment
// override (§4.4, §11.3.1) only decide whether a strategy resolves (row 1),
// never which regions apply (row 5). This mirrors the Rust driver's internal
// RegionPin, which deliberately does not reuse Disabled because
// AZURE_COSMOS_HEDGING_ENABLED=true overrides that.
//
// A region that is not in Config.Regions, or that the user excluded, leaves
// no applicable region: the operation fails with [ErrNoRegion], and a feed
// driver restarts the chain cold. Pin allocates the new ExcludeRegions; the
// caller's slice is not modified.
func (c *Client) Pin(op *Operation, region Region) {
	op.ExcludeRegions = alternateExcludeRegions(op.ExcludeRegions, c.regions, region)
}
