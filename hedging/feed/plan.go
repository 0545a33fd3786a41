package feed

import (
	"fmt"

	"hedgelab/hedging"
)

// Leaf is one feed-range leaf of a plan: one partition-key range read page
// by page, each page one hedge race (spec §16 Phase 2, §17 Q9).
type Leaf struct {
	// Partition is the partition-key range id (the FeedRange leaf); it keys
	// the race's shared state (location marks, breaker, session tokens).
	Partition string
	// Kind is the page's operation kind: QueryPage, ReadManyPage,
	// ChangeFeedPage, MetadataRead, or PointRead (a one-item ReadMany group).
	Kind hedging.OperationKind
	// Start is where the leaf resumes: no Token for a cold start, a
	// change-feed cursor or an inherited ETag otherwise. A region-affine
	// Start with a Token must name the region that issued it. A cold
	// Start's Affinity says what the leaf's cursors will be: a change feed
	// whose cursors are region-affine is never hedged, its cold page
	// included (hedging's §5.1 row 4a); [Leaves] sets
	// hedging.DefaultContinuationAffinity of the kind.
	Start hedging.Continuation
	// Request is handed to every page's Operation.Request when non-nil (the
	// query, or the ids of a ReadMany group); the race never reads it.
	Request any
}

// MaxReadManyIDs is the most item ids one ReadMany query page carries, as
// the .NET SDK's ReadManyQueryHelper chunks them.
const MaxReadManyIDs = 1000

// Group is the item ids of a ReadMany call that fall in one partition-key
// range.
type Group struct {
	Partition string
	IDs       []string
}

// ReadManyPlan returns the leaves of a ReadMany call, in the order of groups
// (spec §16 ReadMany per page): a group of one id becomes a point read (~1
// RU where a query page pays its cover charge, .NET and Java do the same),
// a larger group query leaves of at most [MaxReadManyIDs] ids each. Every
// leaf's Request is its ids, a []string. Errors: a group with no ids or an
// empty partition, naming its index.
func ReadManyPlan(groups []Group) ([]Leaf, error) {
	var leaves []Leaf
	for i, g := range groups {
		if g.Partition == "" || len(g.IDs) == 0 {
			return nil, fmt.Errorf("feed: ReadMany group %d: partition and ids must be non-empty", i)
		}
		if len(g.IDs) == 1 {
			leaves = append(leaves, Leaf{Partition: g.Partition, Kind: hedging.PointRead, Request: g.IDs})
			continue
		}
		for lo := 0; lo < len(g.IDs); lo += MaxReadManyIDs {
			hi := min(lo+MaxReadManyIDs, len(g.IDs))
			leaves = append(leaves, Leaf{Partition: g.Partition, Kind: hedging.ReadManyPage, Request: g.IDs[lo:hi:hi]})
		}
	}
	return leaves, nil
}

// Leaves returns one cold leaf of kind per partition, in order: the plan of
// a cross-partition query or change feed. Each Start is cold with the
// kind's hedging.DefaultContinuationAffinity (a change feed's cursors are
// region-affine, so no page of it is hedged; set Start.Affinity to
// hedging.Portable to hedge every page as .NET does).
func Leaves(kind hedging.OperationKind, partitions ...string) []Leaf {
	out := make([]Leaf, len(partitions))
	for i, p := range partitions {
		out[i] = Leaf{Partition: p, Kind: kind, Start: hedging.Continuation{Affinity: hedging.DefaultContinuationAffinity(kind)}}
	}
	return out
}
