package feed

import (
	"errors"
	"fmt"
	"time"

	"hedgelab/hedging"
)

// DefaultMetadataBudget is the capacity of the metadata budget, a [Gate]:
// the Rust driver's HedgeBudget of 32, counted here in metadata alternates
// in flight (the Rust budget counts races).
const DefaultMetadataBudget = 32

// Resource names what a metadata read reads (spec §16 Phase 2: Database /
// Container / Offer / Throughput reads, and the setup stages before a
// feed's first page).
type Resource uint8

// Metadata resources. .NET and Rust hedge only Collection and the cold
// PartitionKeyRanges feed; the gateway query plan rides the data-plane
// strategy (.NET, Java); no SDK hedges Database, Offer or Throughput reads
// (the spec allows them).
const (
	Collection         Resource = iota // the container (collection) read
	PartitionKeyRanges                 // the partition-key-range feed: cold, or warm from the previous map's ETag
	QueryPlan                          // the gateway query plan
	Database                           // a database read
	Offer                              // an offer read
	Throughput                         // a throughput read
	numResources
)

var resourceNames = [...]string{"collection", "partition_key_ranges", "query_plan", "database", "offer", "throughput"}

// String returns the resource's name ("collection", "partition_key_ranges",
// "query_plan", "database", "offer", "throughput").
func (r Resource) String() string {
	if r < numResources {
		return resourceNames[r]
	}
	return fmt.Sprintf("Resource(%d)", uint8(r))
}

// MetadataConfig returns the driver configuration of metadata reads: budget,
// a [Gate] on their alternates in flight (nil: no budget). Their threshold,
// classification and winner rule are the race's own for
// OperationKind.IsMetadata (spec §16 Phase 2, see hedging.MetadataThreshold):
// the fixed 1.5 s threshold (which a caller's strategy cannot change, though
// a Disabled one, or the master switch off, disables the hedge), an
// immediate hedge on a regional failure (503, 500, 410/1022, 403/1008, no
// response) and the primary authoritative (an alternate's answer that is
// not a clean success is discarded, never retried). A client whose
// Config.Phase allows MetadataRead (hedging.Phase2) runs them. A query-plan
// leaf ([MetadataLeaf] of [QueryPlan]) is a data-plane read: run it under
// the query's own configuration, not this one.
func MetadataConfig(budget *Gate) Config {
	return Config{Gate: budget}
}

// MetadataLeaf returns the leaf of one setup read of res for partition
// (the container or partition-key range it concerns): a metadata read, or
// for [QueryPlan] a hedging.QueryPlan read (a data-plane read, .NET's
// Document/QueryPlan). A warm partition-key-range refresh passes the
// previous map's ETag and the region that issued it: an ETag is
// region-affine, so the refresh is pinned there (the Rust driver's rule;
// .NET hedges the warm refresh's first page, which treating the ETag as
// portable reproduces). Its Request is res.
func MetadataLeaf(res Resource, partition, etag string, issuedBy hedging.Region) Leaf {
	l := Leaf{Partition: partition, Kind: hedging.MetadataRead, Request: res}
	if res == QueryPlan {
		l.Kind = hedging.QueryPlan
	}
	if etag != "" {
		l.Start = hedging.Continuation{Token: etag, Affinity: hedging.RegionAffine, IssuedBy: issuedBy}
	}
	return l
}

// Choice decides between the answers of a metadata read's two legs (spec
// §16 Phase 2: "prefer the latest _etag / resource id or the fastest
// response"). The zero value is [Fastest]. An _etag is not ordered, so
// "latest" compares Result.Page.AppliedLSN, an ordered version.
type Choice struct {
	grace  time.Duration
	latest bool
}

// Fastest takes the first clean answer (the SDKs' choice, and what
// [hedging.Client.Do] does: the race ends at the first final answer).
var Fastest = Choice{}

// LatestWithGrace waits up to grace after the first clean answer for the
// other leg and takes the answer with the larger Result.Page.AppliedLSN. It needs a
// driver that lets the other leg run on after the first final answer (a
// simulator's event loop); Client.Do cancels it. Errors: a negative grace.
func LatestWithGrace(grace time.Duration) (Choice, error) {
	if grace < 0 {
		return Choice{}, errors.New("feed: LatestWithGrace: grace must not be negative")
	}
	return Choice{grace: grace, latest: true}, nil
}

// String renders "fastest" or "latest(200ms)".
func (c Choice) String() string {
	if !c.latest {
		return "fastest"
	}
	return "latest(" + c.grace.String() + ")"
}

// Answer is one leg's final answer to a metadata read, At the time it
// arrived.
type Answer struct {
	At     time.Duration
	Leg    hedging.Leg
	Result hedging.Result
}

// clean reports whether a is a final success.
func (a *Answer) clean() bool { return a.Result.Final() && a.Result.Status.Code < 400 }

// lsn returns the answer's ordered version, 0 when it reports none.
func (a *Answer) lsn() int64 {
	if a.Result.Page == nil {
		return 0
	}
	return a.Result.Page.AppliedLSN
}

// before reports whether a arrived before b, ties by [hedging.Leg.WinsTie].
func (a *Answer) before(b *Answer) bool {
	return a.At < b.At || a.At == b.At && a.Leg.WinsTie(b.Leg)
}

// Decide picks, at now, the answer to return from answers (any order), and
// reports whether the decision is final; pending says whether a leg may
// still answer. Rules, first match wins:
//
//  1. A final non-success of the primary is authoritative: it is returned
//     (.NET returns a definitive primary answer verbatim) when it arrived
//     before the first clean answer, or within the grace after it.
//  2. No clean answer yet: not decided while a leg is pending; otherwise
//     -1, decided (no answer at all).
//  3. Fastest: the earliest clean answer.
//  4. LatestWithGrace: once now is at least the first clean answer's time
//     plus grace, or nothing is pending, the clean answer with the largest
//     AppliedLSN among those that arrived within the grace (ties: the
//     earlier); before that, not decided.
func (c Choice) Decide(now time.Duration, answers []Answer, pending bool) (int, bool) {
	first, prim := -1, -1
	for i := range answers {
		a := &answers[i]
		switch {
		case a.Leg == hedging.Primary && a.Result.Final() && a.Result.Status.Code >= 400:
			prim = i
		case a.clean() && (first < 0 || a.before(&answers[first])):
			first = i
		}
	}
	if prim >= 0 && (first < 0 || !answers[first].before(&answers[prim]) || answers[prim].At <= answers[first].At+c.grace) {
		return prim, true
	}
	switch {
	case first < 0:
		return -1, !pending
	case !c.latest:
		return first, true
	case pending && now < answers[first].At+c.grace:
		return -1, false
	}
	best := first
	until := answers[first].At + c.grace
	for i := range answers {
		a, b := &answers[i], &answers[best]
		if a.clean() && a.At <= until &&
			(a.lsn() > b.lsn() || a.lsn() == b.lsn() && a.before(b)) {
			best = i
		}
	}
	return best, true
}
