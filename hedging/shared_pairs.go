package hedging

// This file holds the hedge-win tracker's table of pair states: one flat,
// open-addressed table (linear probing) of 64-byte slots held by value, so
// that a won hedge, and the primary final that resets its streak, read one
// slot where a Go map of pointers read its header, directory, group and
// the pair's own object, each a cold line in a fleet of clients.

import (
	"math"
	"time"
)

// pairSlot is one (partition, primary region) pair's state in the
// tracker's table: 64 bytes, one cache line in a table of 8 slots (512
// bytes, no allocator header); in a larger table, whose allocation starts
// 8 bytes past a line, its last field (streakStart, which a primary final
// does not read) is on the next line.
type pairSlot struct {
	partition string
	region    Region
	// consecutive is the pair's count of consecutive alternate wins,
	// saturating at math.MaxInt32 (a threshold above it never trips).
	consecutive int32
	// used: the slot holds a pair (whose state may be dead: see dead).
	used bool
	// tripped: the pair holds a trip; when its demotion ends is in the
	// tracker's tripped index (untilOf).
	tripped bool
	// runStart is the first win of the pair's run of wins (wins at most
	// minSpan apart, primary finals in between or not) and lastWin the
	// latest win (0: none, as for a pair never seen).
	lastWin, runStart time.Duration
	// streakStart is the time of the streak's first win.
	streakStart time.Duration
}

// streak reports whether a primary final changes s: it holds a streak or
// a trip. A pair without either (its streak reset while its run of wins
// goes on) only keeps runStart and lastWin for the next win.
func (s *pairSlot) streak() bool { return s.consecutive > 0 || s.tripped }

// dead reports whether slot s behaves at now as a pair the tracker never
// saw: it holds no streak or trip and its run of wins has ended (no win
// for more than minSpan, or no win at all). A dead slot keeps its place
// until a win of another pair, or a rebuild, reuses it.
func (t *HedgeWinTracker) dead(s *pairSlot, now time.Duration) bool {
	return !s.streak() && (s.lastWin == 0 || t.minSpan == 0 || now-s.lastWin > t.minSpan)
}

// minPairSlots is the size of a tracker's first table.
const minPairSlots = 8

// pairHash spreads (partition, region) over the table: FNV-1a over both
// strings' bytes and a final multiply-shift.
func pairHash(partition string, region Region) uint {
	h := uint64(14695981039346656037)
	for i := 0; i < len(partition); i++ {
		h = (h ^ uint64(partition[i])) * 1099511628211
	}
	h = (h ^ 0xff) * 1099511628211 // a separator: ("ab", "c") and ("a", "bc") differ
	for i := 0; i < len(region); i++ {
		h = (h ^ uint64(region[i])) * 1099511628211
	}
	h *= 0x9e3779b97f4a7c15
	return uint(h ^ h>>29)
}

// lookup returns the slot of (partition, region), or nil when the table
// holds none; t.mu must be held.
func (t *HedgeWinTracker) lookup(partition string, region Region) *pairSlot {
	n := len(t.slots)
	if n == 0 {
		return nil
	}
	mask := uint(n - 1)
	for i := pairHash(partition, region) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used {
			return nil
		}
		if s.partition == partition && s.region == region {
			return s
		}
	}
}

// slotFor returns the slot of (partition, region), making one when the
// table holds none: the first dead slot on its probe path, else an empty
// one (rebuilding the table when it would be more than 3/4 used); t.mu
// must be held. A new slot is zero but for its key: a pair never seen.
func (t *HedgeWinTracker) slotFor(now time.Duration, partition string, region Region) *pairSlot {
	if n := len(t.slots); n > 0 {
		mask := uint(n - 1)
		var reuse *pairSlot
		for i := pairHash(partition, region) & mask; ; i = (i + 1) & mask {
			s := &t.slots[i]
			if !s.used {
				switch {
				case reuse != nil:
					s = reuse
				case (t.nslots+1)*4 <= n*3:
					t.nslots++
				default:
					s = nil
				}
				if s != nil {
					*s = pairSlot{partition: partition, region: region, used: true}
					return s
				}
				break
			}
			if s.partition == partition && s.region == region {
				return s
			}
			if reuse == nil && t.dead(s, now) {
				reuse = s
			}
		}
	}
	t.rebuild(now)
	return t.slotFor(now, partition, region) // the rebuilt table has room
}

// rebuild replaces the table with one holding only its slots that are not
// dead at now: larger when at least a quarter of them live (four times
// below 64 slots, so that a client of a few tens of pairs, such as each
// instance of a fleet, builds two tables, not four; twice from 64 on), a
// quarter of the size (not below minPairSlots) when fewer than a sixteenth
// do, the same size otherwise. Each rebuild leaves the table at most 3/8
// used, so it comes after at least as many new pairs as it moves; and the
// table's size follows the pairs alive, not every pair that ever won.
// t.mu must be held.
func (t *HedgeWinTracker) rebuild(now time.Duration) {
	live := 0
	for i := range t.slots {
		if s := &t.slots[i]; s.used && !t.dead(s, now) {
			live++
		}
	}
	n := len(t.slots)
	switch {
	case n == 0:
		n = minPairSlots
	case live*4 >= n && n < 64:
		n *= 4
	case live*4 >= n:
		n *= 2
	case live*16 < n:
		n = max(n/4, minPairSlots)
	}
	old := t.slots
	t.slots, t.nslots = make([]pairSlot, n), live
	mask := uint(n - 1)
	for j := range old {
		if s := &old[j]; s.used && !t.dead(s, now) {
			i := pairHash(s.partition, s.region) & mask
			for t.slots[i].used {
				i = (i + 1) & mask
			}
			t.slots[i] = *s
		}
	}
}

// untilOf returns when the trip of (partition, region) ends (0: none);
// t.mu must be held.
func (t *HedgeWinTracker) untilOf(partition string, region Region) time.Duration {
	for _, d := range t.tripped[partition] {
		if d.region == region {
			return d.until
		}
	}
	return 0
}

// setUntil records that the trip of (partition, region) ends at until,
// starting or renewing it; t.mu must be held.
func (t *HedgeWinTracker) setUntil(partition string, region Region, until time.Duration) {
	ds := t.tripped[partition]
	for i := range ds {
		if ds[i].region == region {
			ds[i].until = until
			return
		}
	}
	t.tripped[partition] = append(ds, demotion{region, until})
}

// saturatingInc returns n+1, or n at math.MaxInt32.
func saturatingInc(n int32) int32 {
	if n == math.MaxInt32 {
		return n
	}
	return n + 1
}
