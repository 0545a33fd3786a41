package simnet

// This file holds the client side: workload arrivals, each operation's
// slot and race, performing the race's effects (send, cancel, timers),
// and completing an operation.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"hedgelab/hedging"
)

type attemptState struct {
	a    hedging.Attempt
	res  hedging.Result
	back time.Duration // the response's way back (the other half of the RTT)
	// cancelAt is when the cancellation reaches the replica (it travels
	// behind the request, one way): a request queued then is removed.
	cancelAt time.Duration
	// respAt is when the attempt's response reaches the client; respQueued
	// is set while that response event is in the queue.
	respAt     time.Duration
	rep        int32
	n          uint16 // attempt number within the leg (CRN key)
	cancelled  bool
	respQueued bool
	sentAt     time.Duration // when the attempt was sent (for the Observer)
	cx         capAttempt    // state at a replica with capacity (capacity.go)
}

type opState struct {
	race   hedging.Race
	op     hedging.Operation
	gen    uint32
	idx    uint64 // operation index (CRN key)
	part   int32
	client int32 // closed-loop client, -1 in an open loop
	inst   int32 // fleet instance running the op (index in sim.clients)
	att    [2]attemptState
	// altUsed: att[hedging.Alternate] was written since the slot's last
	// reset (an alternate was sent); startOp clears it only then.
	altUsed bool
	// pending counts attempts still travelling to or queued at a replica;
	// the slot is reused only when the race is done and pending is 0, so a
	// cancelled request still reaches its replica and is served (and
	// charged) unless it is still queued when the cancellation arrives.
	pending int32
	done    bool
	// parked holds race timers kept out of the queue because a queued
	// response of this op (leg parkLeg, attempt parkSeq) comes first: when
	// that response has been handled they are queued if the race still
	// runs, and dropped if it is done (a done race ignores every timer).
	// See park.
	parked  [2]event
	nparked uint8
	parkLeg uint8
	parkSeq uint32
	// page: the race is a feed page or setup read (feed.go), whose
	// attempts are charged by the feed model even after the race ended;
	// poll: a change-feed poll's, whose RU counts apart (ru.go).
	page, poll bool
	// tiedStarted: leg tiedLeg started service at tiedStartAt on replica
	// tiedRep, whose mode is CancelOnStart (tied requests, capacity.go).
	tiedStarted bool
	tiedLeg     uint8
	tiedRep     int32
	tiedStartAt time.Duration
	// cancelled counts the op's attempts cancelled, by
	// hedging.CancelReason, when the run has an Observer.
	cancelled [4]uint8
}

func (s *sim) interarrival() time.Duration {
	return arrivalGap(&s.cfg.Workload, s.arr, s.now, s.cfg.Duration)
}

func (s *sim) acceptingArrivals(at time.Duration) bool {
	if s.cfg.MaxOps > 0 && s.nextIdx >= uint64(s.cfg.MaxOps) {
		return false
	}
	return s.cfg.Duration <= 0 || at < s.cfg.Duration
}

func (s *sim) arrival(ev event) {
	if !s.acceptingArrivals(s.now) {
		return
	}
	if ev.id < 0 {
		next := s.now + s.interarrival()
		if s.acceptingArrivals(next) && (s.cfg.MaxOps <= 0 || s.nextIdx+1 < uint64(s.cfg.MaxOps)) {
			s.q.push(event{at: next, kind: evArrival, id: -1})
		}
	}
	s.startOp(ev.id)
}

func (s *sim) startOp(client int32) {
	slot, o := s.newSlot(s.nextIdx, client)
	s.nextIdx++
	s.stats.Arrivals++
	s.lastStart = s.now
	// Operation attributes come from the sequential workload stream, so every
	// policy sees the same sequence.
	w := &s.cfg.Workload
	u := s.wl.Float64()
	kind := s.mixKind[len(s.mixKind)-1]
	for i, c := range s.mixCum {
		if u < c {
			kind = s.mixKind[i]
			break
		}
	}
	part := 0
	if s.zipf != nil {
		part = int(s.zipf.Uint64())
	} else if len(s.parts) > 1 {
		part = s.wl.IntN(len(s.parts))
	}
	exclude := w.ExcludeFraction > 0 && s.wl.Float64() < w.ExcludeFraction
	disabled := w.DisabledFraction > 0 && s.wl.Float64() < w.DisabledFraction
	o.part = int32(part)
	o.op = hedging.Operation{Kind: kind, Partition: s.parts[part], Timeout: s.cfg.OperationTimeout}
	if exclude {
		o.op.ExcludeRegions = s.excl
	}
	if disabled {
		o.op.Strategy = hedging.Disabled
	}
	if s.fx != nil && s.fx.f != nil && (kind == hedging.QueryPage || kind == hedging.ReadManyPage) {
		s.startFeedOp(slot, o, kind, part, client)
		return
	}
	o.inst = 0
	c := s.client0
	if s.instances > 1 {
		o.inst = s.instanceOf(o.idx, part, client)
		var err error
		if c, err = s.group.Client(int(o.inst)); err != nil { // s.instance, written out
			c = s.buildFailed(err)
		}
	}
	c.Begin(&s.eff, &o.race, s.now, &o.op)
	s.perform(slot, &s.eff)
}

// takeFree returns the index of a free element of *items: the last of
// *free, or a new zero element.
func takeFree[T any](items *[]T, free *[]int32) int32 {
	if n := len(*free); n > 0 {
		i := (*free)[n-1]
		*free = (*free)[:n-1]
		return i
	}
	if n := len(*items); n == cap(*items) {
		// Double: append's 1.25× growth of a large slice leaves about four
		// times its final size behind as garbage while it grows (the
		// memory bound, memory.go).
		*items = slices.Grow(*items, max(n, 16))
	}
	var zero T
	*items = append(*items, zero)
	return int32(len(*items) - 1)
}

// newSlot returns a free op slot, reset for an operation (or feed page)
// whose keyed draws use idx, started by closed-loop client (-1: none).
func (s *sim) newSlot(idx uint64, client int32) (int32, *opState) {
	slot := takeFree(&s.ops, &s.free)
	o := &s.ops[slot]
	o.idx = idx
	o.client = client
	o.att[hedging.Primary] = attemptState{}
	if o.altUsed {
		o.att[hedging.Alternate] = attemptState{}
		o.altUsed = false
	}
	o.pending, o.done, o.nparked, o.tiedStarted = 0, false, 0, false
	o.page, o.poll = false, false
	o.cancelled = [4]uint8{}
	return slot, o
}

func (s *sim) perform(slot int32, e *hedging.Effects) {
	o := &s.ops[slot]
	for i := 0; i < e.Len(); i++ {
		a := e.At(i)
		switch a.Kind {
		case hedging.ActSend:
			s.send(slot, o, &a.Attempt)
		case hedging.ActCancel:
			s.cancel(slot, o, a.Leg)
			if s.obs != nil {
				s.observeCancel(o, &o.att[a.Leg], a.Reason)
			}
		case hedging.ActTimer:
			if ev := (event{at: a.At, kind: evTimer, id: slot, gen: o.gen, sub: uint8(a.Timer)}); !s.park(o, &ev) {
				s.q.push(ev)
			}
		}
	}
	// A done race ignores every later event, but its slot (and so its
	// timers and responses) stays live while a cancelled attempt is still
	// travelling or queued: complete only on the call that ended the race,
	// or a stale timer (the threshold timer of a race that failed over
	// before it, say) would count the operation again.
	if o.race.Done() && !o.done {
		s.complete(slot, o)
	}
}

// park keeps timer ev of o out of the queue, and reports so, when a
// response of o already in the queue is due no later than the timer (at
// one instant responses come first), so that response is handled before
// the timer could fire: the timer is queued then, with the place in the
// order it has now, if the race still runs (unpark). In the common case —
// the primary's answer, known at send time on a delay-line replica, comes
// before the threshold — the race is done by then and the timer never
// enters the queue.
func (s *sim) park(o *opState, ev *event) bool {
	if !s.parking || int(o.nparked) == len(o.parked) {
		return false
	}
	for l := range o.att {
		st := &o.att[l]
		if !st.respQueued || st.respAt > ev.at {
			continue
		}
		if o.nparked > 0 && (o.parkLeg != uint8(l) || o.parkSeq != st.a.Seq) {
			return false
		}
		s.q.stamp(ev)
		o.parked[o.nparked] = *ev
		o.nparked++
		o.parkLeg, o.parkSeq = uint8(l), st.a.Seq
		return true
	}
	return false
}

// unpark queues o's parked timers if its race still runs, and drops them
// if it is done.
func (s *sim) unpark(o *opState) {
	parked := o.parked[:o.nparked]
	o.nparked = 0
	if o.race.Done() {
		// By index: only the times are read, no event copied.
		for i := range parked {
			s.deadEnd = max(s.deadEnd, parked[i].at)
		}
		return
	}
	for _, ev := range parked {
		s.q.pushStamped(ev)
	}
}

func (s *sim) send(slot int32, o *opState, a *hedging.Attempt) {
	st := &o.att[a.Leg]
	st.a = *a
	o.altUsed = o.altUsed || a.Leg == hedging.Alternate
	st.cancelled = false
	st.respQueued = false
	st.cx = capAttempt{}
	st.sentAt = s.now
	st.n++
	if st.n == 1 {
		s.stats.legs++
	}
	s.stats.Attempts++
	if a.HubRegionProcessingOnly {
		s.stats.HubHeaderAttempts++
	}
	kind := o.op.Kind
	if tc := s.cfg.ThroughputControl; tc != nil && !s.tc.take(s.now, tc.RUPerSec, tc.Burst, s.ru[kind]) {
		s.stats.LocalThrottles++
		st.res = hedging.Result{Status: hedging.Status{Code: 429}, LocalThrottle: true}
		s.queueResponse(slot, o, st, s.now)
		return
	}
	ri, ok := s.replicaOf(a.Endpoint.Key)
	if !ok {
		st.res = hedging.Result{Err: fmt.Errorf("simnet: no replica for endpoint %q", a.Endpoint.Key)}
		s.queueResponse(slot, o, st, s.now)
		return
	}
	rep := &s.reps[ri]
	st.rep = ri
	st.cx.sent = true
	if s.capa.tied {
		s.tieSent(slot, o, st)
	}
	s.stats.ReplicaAttempts[ri]++
	rttMs := rep.rttMs
	if s.cfg.Jitter != nil {
		rttMs += s.cfg.Jitter.Sample(s.draw(purposeJitter, o.idx, uint64(ri), uint64(st.n)))
	}
	rtt := msDur(rttMs)
	if st.n > 1 {
		rtt = max(rtt, 2*minOneWay) // a retry: see minOneWay
	}
	st.back = rtt - rtt/2
	o.pending++
	ev := event{at: s.now + rtt/2, kind: evReplicaArrive, id: slot, gen: o.gen, aseq: a.Seq, sub: uint8(a.Leg)}
	if rep.servers == 0 && s.delayLine {
		// A replica without a queue is a pure delay line: what happens at
		// its arrival time depends only on that time (no RU budget, no write
		// whose commit could land in between), so it is evaluated now, at
		// the arrival instant, without a heap round trip. The outcome is
		// identical to the event path (TestDelayLineMatchesEventPath).
		now := s.now
		s.now = ev.at
		s.replicaArrive(ev)
		s.now = now
		return
	}
	s.q.push(ev)
}

func (s *sim) cancel(slot int32, o *opState, leg hedging.Leg) {
	st := &o.att[leg]
	st.cancelled = true
	st.cancelAt = s.now + st.back
	if s.capa.on {
		s.capCancel(slot, o, st)
	}
}

// settle notes that one of o's attempts left the travelling/queued state
// and frees the slot once the race is done and nothing is pending.
func (s *sim) settle(slot int32, o *opState) {
	o.pending--
	s.maybeFree(slot, o)
}

func (s *sim) maybeFree(slot int32, o *opState) {
	if o.done && o.pending == 0 {
		o.gen++
		s.free = append(s.free, slot)
	}
}

func (s *sim) complete(slot int32, o *opState) {
	if s.fx != nil && s.fx.slotOf(slot) != nil {
		s.feedPageDone(slot, o)
		return
	}
	r := &o.race
	s.record(o)
	if s.progress != nil {
		s.progress.Add(1)
	}
	if s.onComplete != nil {
		s.onComplete(r, &o.op)
	}
	if s.obs != nil {
		s.observeOperation(o)
	}
	if s.onCompleteInstance != nil {
		s.onCompleteInstance(int(o.inst), r, &o.op)
	}
	client := o.client
	o.done = true
	s.maybeFree(slot, o)
	if client >= 0 {
		s.think(client)
	}
}

// think schedules closed-loop client's next operation after its think time.
func (s *sim) think(client int32) {
	think := msDur(s.cfg.Workload.Think.Sample(s.draw(purposeThink, uint64(client), s.nextIdx, 1)))
	if s.acceptingArrivals(s.now + think) {
		s.q.push(event{at: s.now + think, kind: evArrival, id: client})
	}
}

// initWorkload builds the run's partitions (keys, commit logs, RU budgets
// per partition and physical region, of which there are nregions), the
// throughput-control gate, the operation mix and RU charges.
func (s *sim) initWorkload(cfg *Config, nregions int) {
	w := cfg.Workload
	nparts := max(w.Partitions, 1)
	s.parts = make([]string, nparts)
	for i := range s.parts {
		s.parts[i] = fmt.Sprintf("%d", i)
	}
	s.logs = make([]partitionLog, nparts)
	if cfg.RUBudget != nil {
		s.budgets = make([]bucket, nparts*nregions)
		for i := range s.budgets {
			s.budgets[i].tokens = cfg.RUBudget.Burst
		}
	}
	if cfg.ThroughputControl != nil {
		s.tc.tokens = cfg.ThroughputControl.Burst
	}
	if w.ZipfS > 1 && nparts > 1 {
		s.zipf = rand.NewZipf(s.wl, w.ZipfS, 1, uint64(nparts-1))
	}
	for _, r := range w.Exclude {
		s.excl = append(s.excl, hedging.Region(r))
	}
	mix := w.Mix
	if len(mix) == 0 {
		mix = []MixEntry{{Kind: hedging.PointRead, Weight: 1}}
	}
	total := 0.0
	for _, m := range mix {
		total += m.Weight
		s.mixCum = append(s.mixCum, total)
		s.mixKind = append(s.mixKind, m.Kind)
	}
	for i := range s.mixCum {
		s.mixCum[i] /= total
	}
	for k := range s.ru {
		kind := hedging.OperationKind(k)
		switch {
		case kind.IsWrite():
			s.ru[k] = 5
		case kind == hedging.QueryPage || kind == hedging.ReadManyPage || kind == hedging.ChangeFeedPage:
			s.ru[k] = 10
		default:
			s.ru[k] = 1
		}
	}
	for k, v := range cfg.RU {
		s.ru[k] = v
	}
	s.delayLine = cfg.RUBudget == nil
	for _, m := range mix {
		if m.Kind.IsWrite() {
			s.delayLine = false
		}
	}
}
