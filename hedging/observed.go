package hedging

// OperationEventOf returns the [OperationEvent] of the finished race r of
// operation op, as [Client.Do] reports it to its Observer, for drivers
// other than Do (the simulator) that feed an Observer themselves: the same
// outcome classification, winner region, RU and breaker counter (read from
// c's hedge-win tracker; c may be nil, then 0). Elapsed is r.DoneAt() -
// r.Start(). The driver fills Cancelled and Abandoned, which only it
// knows. r must be Done; the event points at op, which must stay unchanged
// during the Observer's call.
func OperationEventOf(r *Race, op *Operation, c *Client) OperationEvent {
	ev := OperationEvent{
		Operation:          op,
		Err:                r.err,
		Outcome:            outcomeOf(r.Status(), r.err),
		Elapsed:            r.DoneAt() - r.Start(),
		RequestCharge:      r.RequestCharge(),
		TotalRequestCharge: r.totalCharge,
	}
	if w, ok := r.Winner(); ok {
		ev.WinnerRegion = r.Endpoint(w).Region
	}
	if d, ok := r.Diagnostics(); ok {
		ev.Diagnostics = d
		if c != nil {
			ev.ConsecutiveAlternateWins = c.tracker.Consecutive(op.Partition, d.PrimaryRegion())
		}
	}
	return ev
}
