package threshold

// The floor probe: how early the one probe in ten × Probe is sent.

import "time"

// recFloorProbe is the floor probe's threshold: sent with the primary
// (the least positive threshold; Threshold sends no hedge at 0), so the
// alternate has the primary's whole answer time to answer in. A probe
// is evidence of how fast the alternate is only if it can answer before
// the primary's answer cancels it, and an alternate can win only by
// answering sooner than the primary: a probe sent at the primary's own
// floor saw an alternate faster than the primary for no longer than the
// primary's spread past its floor (a narrow far primary, ~248 ms ± 5,
// cancelled every probe to an alternate 86 ms away a few ms after it
// left, so the alternate stayed "unknown, as far as the primary again"
// and was never hedged to: population seed 1796189285, member 15). It
// costs what the floor probe cost before, a hedge on one operation in
// 10 × Probe: at its floor nearly every primary was past it too.
const recFloorProbe = time.Duration(1)

// nearer reports whether the prior's shift (ms, from estimate) says the
// alternate region answered faster than the primary region ever did in
// the floors' windows: a negative difference of the pair's floors, each
// an observed answer (estimate's shift is never negative otherwise).
// choose then lifts the prior's half cap on the hedge rate: an alternate
// seen to answer before the primary's fastest answer wins a hedge sent at
// once whatever the shape of its tail, and a floor probe comes once in
// 10 × Probe operations (~5 s at 185 reads/s), so capping at half a
// primary whose every answer is near its floor — no threshold then hedges
// half the operations early enough to win — kept it unhedged until
// MinSamples of cancelled probes had gathered (member 15 above: 15 s of
// 19). check's ledger still answers for the hedges: MinSamples of them
// that lose stop them.
func nearer(shift float64) bool { return shift < 0 }
