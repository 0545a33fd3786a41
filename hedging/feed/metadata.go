package feed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"hedgelab/hedging"
)

// MetadataThreshold is the fixed threshold of metadata reads: the first
// control-plane attempt timeout (about 1 s) plus a 500 ms step, so a hedge
// fires strictly between the first (1 s) and second (5 s) attempt timeouts.
// It is .NET's MetadataHedgingStrategy threshold and the Rust driver's
// METADATA_HEDGE_THRESHOLD, and like theirs it is not configurable (spec §16
// Phase 2 metadata reads).
const MetadataThreshold = 1500 * time.Millisecond

// DefaultMetadataBudget is the capacity of the metadata budget, a [Gate]: the
// Rust driver's HedgeBudget of 32 concurrent hedged metadata races.
const DefaultMetadataBudget = 32

// Resource names what a metadata read reads (spec §16 Phase 2: Database /
// Container / Offer / Throughput reads, and the setup stages before a
// feed's first page).
type Resource uint8

// Metadata resources. .NET and Rust hedge only Collection and the cold
// PartitionKeyRanges feed; .NET's gateway query plan rides the data-plane
// strategy; no SDK hedges Database, Offer or Throughput reads (the spec
// allows them).
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

// metadataStrategy returns the availability strategy of every metadata
// read: hedging at [MetadataThreshold].
func metadataStrategy() hedging.AvailabilityStrategy {
	return hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(MetadataThreshold)))
}

// MetadataConfig returns the driver configuration of metadata reads: the
// fixed threshold on every page (which a caller's per-request strategy
// cannot change) and budget, a [Gate] (nil: no budget). A client
// whose Config.Phase allows MetadataRead (hedging.Phase2) and whose
// Transport is wrapped by [PrimaryAuthoritative] runs them. A primary's
// regional failure hedges at once where the race's upgrade path does (503,
// 404/1002, 429/3092, no response, §7.2.1); .NET's metadata strategy also
// does so on 500, 410/LeaseNotFound and 403/DatabaseAccountNotFound, which
// the race core does not (it is unchanged by Phase 2).
func MetadataConfig(budget *Gate) Config {
	return Config{Template: hedging.Operation{Strategy: metadataStrategy()}, Gate: budget}
}

// MetadataLeaf returns the leaf of one metadata read of res for partition
// (the container or partition-key range it concerns). A warm
// partition-key-range refresh passes the previous map's ETag and the region
// that issued it: an ETag is region-affine, so the refresh is pinned there
// (the Rust driver's rule; .NET hedges the warm refresh's first page, which
// treating the ETag as portable reproduces). Its Request is res.
func MetadataLeaf(res Resource, partition, etag string, issuedBy hedging.Region) Leaf {
	l := Leaf{Partition: partition, Kind: hedging.MetadataRead, Request: res}
	if etag != "" {
		l.Start = hedging.Continuation{Token: etag, Affinity: hedging.RegionAffine, IssuedBy: issuedBy}
	}
	return l
}

// NotAuthoritativeError marks an alternate's final non-success answer to a
// metadata read, which [Authoritative] downgrades to transient.
type NotAuthoritativeError struct {
	// Status is the answer's status.
	Status hedging.Status
}

// Error names the status.
func (e *NotAuthoritativeError) Error() string {
	return "feed: alternate's metadata answer " + e.Status.String() + " is not authoritative"
}

// Authoritative classifies one attempt's result of a metadata read by the
// "primary is authoritative" rule (.NET ResolveWinnerAsync, Rust
// classify_secondary_hedge_result): the alternate's final answer counts only
// when it is a clean success (status < 400); its final non-success (404,
// 409, 412, ...) is returned with Err set to a *[NotAuthoritativeError], so
// the race treats it as transient and keeps waiting for the primary, whose
// definitive answer is never overridden. The race retries such a result
// locally within the leg's attempts (§8.4). Primary results pass unchanged.
func Authoritative(a hedging.Attempt, res hedging.Result) hedging.Result {
	if a.Leg == hedging.Alternate && res.Final() && res.Status.Code >= 400 {
		res.Err = &NotAuthoritativeError{Status: res.Status}
	}
	return res
}

// PrimaryAuthoritative wraps t so that every result passes through
// [Authoritative]: the Transport of a metadata client.
func PrimaryAuthoritative(t hedging.Transport) hedging.Transport { return authoritative{t} }

type authoritative struct{ t hedging.Transport }

func (w authoritative) Send(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	return Authoritative(a, w.t.Send(ctx, op, a))
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
