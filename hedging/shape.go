package hedging

// This file holds a client's shape: the immutable part of its
// configuration that every operation's Begin reads, shared by the clients
// of a group that have the same one.

// clientShape is what Begin reads of a client besides its hot counters:
// the preferred regions (a copy of Config.Regions, in order, that no
// caller holds) and the strategy an operation that overrides nothing runs
// (resolveStrategy's answer). It is 64 bytes, one cache line, and never
// modified after it is built.
type clientShape struct {
	regions     []Endpoint
	defStrategy HedgingStrategy
}

// shapeOf returns the shape of a client whose regions (owned by the
// client or its group) and default strategy def are given: shared when
// it is equal (the same regions slice, and a stateless def with the same
// threshold as shared's), otherwise a new one. A shape with a stateful
// strategy (a threshold policy or a Gate: its own windows or budget per
// client) is never shared. Sharing changes no result (a shape is
// immutable); it lets the clients of a group read one cache line of it
// instead of one each.
func shapeOf(shared *clientShape, regions []Endpoint, def HedgingStrategy) *clientShape {
	if shared != nil && def.stateless() && shared.defStrategy.stateless() &&
		shared.defStrategy.threshold == def.threshold && sameSlice(shared.regions, regions) {
		return shared
	}
	return &clientShape{regions: regions, defStrategy: def}
}

// sameSlice reports whether a and b are the same slice: the same length
// and, when not empty, the same first element.
func sameSlice(a, b []Endpoint) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
