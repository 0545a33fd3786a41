package simnet

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestIvalsMatchesModel checks the delivered-set bookkeeping against a
// plain per-LSN count: duplicates are the LSNs added again, holes the LSNs
// below the highest added that were never added.
func TestIvalsMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var v ivals
		seen := map[int64]int{}
		var dups int64
		for range 1 + r.IntN(40) {
			lo := int64(r.IntN(200))
			hi := lo + int64(r.IntN(30))
			var want int64
			for x := lo + 1; x <= hi; x++ {
				if seen[x] > 0 {
					want++
				}
				seen[x]++
			}
			got := v.add(lo, hi)
			if got != want {
				t.Fatalf("trial %d: add(%d, %d) = %d duplicates, want %d", trial, lo, hi, got, want)
			}
			dups += got
			for i := 1; i < len(v); i++ {
				if v[i-1][1]+1 >= v[i][0] {
					t.Fatalf("trial %d: ranges %v and %v overlap or touch", trial, v[i-1], v[i])
				}
			}
		}
		var top int64
		for x := range seen {
			top = max(top, x)
		}
		var holes int64
		for x := int64(1); x <= top; x++ {
			if seen[x] == 0 {
				holes++
			}
		}
		if got := v.holes(); got != holes {
			t.Fatalf("trial %d: holes = %d, want %d", trial, got, holes)
		}
	}
}

// TestFeedLogVisible checks the feed log's applied LSN against a scan of
// every commit: the longest prefix committed by now - lag.
func TestFeedLogVisible(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var l feedLog
	var times []time.Duration
	at := time.Duration(0)
	for range 3 * feedRing {
		at += time.Duration(r.IntN(5_000_000)) - 1_000_000 // commits may finish out of order
		l.commit(at)
		times = append(times, at)
	}
	for range 2000 {
		now := time.Duration(r.Int64N(int64(at) + int64(time.Second)))
		lag := time.Duration(r.Int64N(int64(200 * time.Millisecond)))
		var want int64
		var top time.Duration
		for i, c := range times {
			top = max(top, c)
			if top <= now-lag {
				want = int64(i + 1)
			}
		}
		want = max(want, l.total-feedRing) // a lag beyond the ring clamps
		if lag == 0 {
			want = l.total
		}
		if got := l.visible(now, lag); got != want {
			t.Fatalf("visible(%v, %v) = %d, want %d", now, lag, got, want)
		}
	}
}
