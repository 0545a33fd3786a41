package simnet

// This file holds the RU accounting's rules: the range of a request's
// charge (so no sum of charges can overflow) and which population a
// charge counts in — the workload's operations (Stats.RUCharged and
// RUReturned, over the same operations as the hedge rate) or the
// change-feed pollers, background consumers that are not operations
// (FeedStats.PollRUCharged and PollRUReturned).

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// MaxRequestCharge bounds the RU charge of one request: every Config.RU
// entry, and a feed page's Feed.RUCover + Feed.RUPerItem × its items (at
// most Feed's items per page or ReadMany ids). With it, a run's RU sum
// stays below MaxRunWork × 2 legs × MaxRequestCharge ≈ 4e15, far from
// float64's overflow and exact to a thousandth of an RU.
const MaxRequestCharge = 1e6

// validateRU checks every charge against [0, MaxRequestCharge], in kind
// order, so the error names the same kind whatever the map's order.
func (c *Config) validateRU() error {
	for _, k := range slices.Sorted(maps.Keys(c.RU)) {
		if v := c.RU[k]; !(v >= 0 && v <= MaxRequestCharge) {
			return fmt.Errorf("simnet: RU[%v] must be in [0, %g] RU, got %g", k, float64(MaxRequestCharge), v)
		}
	}
	if f := c.Feed; f != nil {
		if n := f.MaxPageCharge(); !(n <= MaxRequestCharge) {
			return fmt.Errorf("simnet: a feed page may cost %.3g RU (Feed.RUCover + Feed.RUPerItem × %d items); the limit is %g RU (MaxRequestCharge)",
				n, max(f.itemsPerPage(), f.readManyItems()), float64(MaxRequestCharge))
		}
	}
	return nil
}

// MaxPageCharge returns the largest RU charge of one feed page: RUCover +
// RUPerItem × the most items a page holds (the items per page, or the ids
// of a ReadMany call). Validate refuses a Feed above MaxRequestCharge.
func (f *Feed) MaxPageCharge() float64 {
	return f.RUCover + f.RUPerItem*float64(max(f.itemsPerPage(), f.readManyItems()))
}

// chargeRU adds ru charged by a replica for an attempt of op slot o (a
// negative ru refunds) to its population's sum.
func (s *sim) chargeRU(o *opState, ru float64) {
	if o.poll {
		s.fx.stats.PollRUCharged += ru
		return
	}
	s.stats.RUCharged += ru
}

// returnRU adds ru returned to the caller of op slot o's race.
func (s *sim) returnRU(o *opState, ru float64) {
	if o.poll {
		s.fx.stats.PollRUReturned += ru
		return
	}
	s.stats.RUReturned += ru
}

// ruMultiplier is charged / returned, NaN (undefined) when nothing was
// returned: with zero charges (or every operation failed) there is no
// cost to multiply.
func ruMultiplier(charged, returned float64) float64 {
	if returned == 0 {
		return math.NaN()
	}
	return charged / returned
}
