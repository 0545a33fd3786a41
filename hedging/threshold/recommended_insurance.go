package threshold

// The backstop under a deadline: insurance is not a hedge rate.

// insurance reports whether the threshold Threshold is about to send is
// a warm key's insurance — the backstop or the held threshold, used
// where choose found none that pays — rather than a threshold that pays,
// the cold prior or a probe. §5.2's half of the time left is a cap on a
// threshold meant to hedge while the alternate is unknown; applied to
// insurance it lowers a backstop that would fire after the deadline
// (Backstop × an unhedged quantile the deadline caps is twice the time
// left) to half of it, inside the primary's tail, and the insurance
// becomes a hedge rate of every read slower than that, sent to an
// alternate no evidence says answers in time (population seed
// 1796189285, member 50: a 64 ms operation timeout, the backstop at
// 128 ms sent at 32 ms on ~1599 races of three replications, none won).
// Insurance keeps its own threshold, and none is sent at or past the
// time left, where it could not fire.
func insurance(s *recState, a *recAlt, probing bool) bool {
	return s.warmed && !a.pays && !probing
}
