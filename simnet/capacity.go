package simnet

// This file holds the replica capacity model beyond servers and a FIFO
// queue: bounded queues (Replica.QueueLimit, refused requests answered with
// Replica.OverflowStatus), what a cancellation does at the replica
// (Replica.Cancel), and the per-replica measurements (CapacityStats:
// utilisation, queue length, refusals, background latency).
//
// Exact queue length. Cancelled requests are still removed lazily (a
// queued copy whose cancellation has reached the replica is skipped when it
// reaches the head of the queue, as before), but every replica with
// servers counts its live waiting requests exactly: a request entering
// the queue is counted; one leaving it (served or skipped) is uncounted;
// and a cancellation that reaches a queued copy uncounts it at that
// instant. The last is done without events: each cancellation of a queued
// attempt (or of one still travelling to a queue) is kept in the replica's
// heap of pending cancellation arrivals, and before the count is read (at
// every arrival at the replica) the arrivals due by then are applied. So
// the event stream, and the results, of a replica with an unbounded queue
// are unchanged; the count is what a bounded queue admits against and what
// the queue-length figure samples.

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hedgelab/hedging"
)

// CancelMode is what a client cancellation does when it reaches a replica
// (one way behind the request, spec §14.2).
type CancelMode uint8

const (
	// CancelQueued (the default) removes a copy still queued at the
	// replica; work in service runs to completion and is charged in full.
	CancelQueued CancelMode = iota
	// CancelInService also aborts work in service at the instant the
	// cancellation reaches the replica, freeing the server; the RU charge
	// is pro rata of the service time done. A request that starts service
	// after the cancellation was sent but before it arrived is aborted when
	// it arrives. On a replica without servers (0 = unlimited) only the
	// charge is pro rata. A write aborted in service still commits.
	CancelInService
	// CancelNone: cancellations do not reach the replica; queued copies
	// are served and charged (their answers are ignored by the client).
	CancelNone
	// CancelOnStart makes the replica take part in tied requests (Dean
	// and Barroso, "The Tail at Scale", CACM 2013): when an attempt starts
	// service here, the replica sends a cancellation to the replica of
	// the operation's other leg, which arrives one way later (half the
	// network RTT between the two replicas' regions, without jitter) and
	// removes that copy if it is still queued there, or drops it when it
	// arrives later (the replica remembers the cancellation); a copy
	// already in service runs on. A client cancellation here removes a
	// queued copy, as CancelQueued. The receiving replica honours the
	// peer cancellation whatever its mode, except CancelNone. Both copies
	// can run when they start within one cross-replica delay of each
	// other. The removed copy never answers: the race ends on the copy
	// that started.
	CancelOnStart
)

var cancelModeNames = [...]string{"queued", "in_service", "none", "on_start"}

// String returns the scenario-file name of m ("queued", "in_service",
// "none", "on_start").
func (m CancelMode) String() string {
	if int(m) < len(cancelModeNames) {
		return cancelModeNames[m]
	}
	return fmt.Sprintf("CancelMode(%d)", m)
}

// ParseCancelMode returns the mode named s ("queued", "in_service",
// "none", "on_start"); an error for any other name.
func ParseCancelMode(s string) (CancelMode, error) {
	for i, n := range cancelModeNames {
		if n == s {
			return CancelMode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown cancel mode %q (want queued, in_service, none or on_start)", s)
}

// CapacityStats are the per-replica capacity measurements of a run (or of
// several merged runs). They exist only when the run models capacity:
// some replica has servers, some replica's cancel mode is not the
// default, or there is background load ([Config.ModelsCapacity]).
type CapacityStats struct {
	// Span is the measured time, summed over the merged runs: for each run
	// min(Config.Duration, Stats.End) (the run end when there is no
	// Duration). Busy time is counted only within each run's span, so a
	// service still running when the run ends (background requests have no
	// event at their end) counts up to the span: utilisation is at most 1.
	Span time.Duration
	// Runs is the number of merged runs.
	Runs int
	// Replicas holds one entry per Config.Replicas entry, in order.
	Replicas []ReplicaStats
}

// ReplicaStats are one replica's capacity measurements.
type ReplicaStats struct {
	Name string
	// Servers and QueueLimit are the replica's configuration.
	Servers, QueueLimit int
	// Busy is the busy server-time (client attempts and background
	// requests in service) within the run's span (CapacityStats.Span);
	// BusyByWindow splits it by
	// timeline window (Stats.WindowWidth wide, as Stats.Timeline; work
	// past the last window counts in it). Both are 0/nil when Servers is 0.
	Busy         time.Duration
	BusyByWindow []time.Duration
	// QueueLen is the number of live waiting requests (client and
	// background, not counting those whose cancellation has reached the
	// replica), sampled at every arrival at the replica (2 significant
	// digits); nil when Servers is 0.
	QueueLen *hdr.Histogram
	// RefusedClient and RefusedBackground count requests refused by a full
	// queue (RefusedBackground every refused try, retries included).
	RefusedClient, RefusedBackground int64
	// BackgroundRetries counts the retries issued by background sources
	// with Retries > 0; BackgroundGaveUp their requests refused on every
	// try (after their last retry). Both are 0 without retries.
	BackgroundRetries, BackgroundGaveUp int64
	// ClientServed counts client attempts that started service;
	// AbortedInService those of them aborted in service by a cancellation
	// (CancelInService).
	ClientServed, AbortedInService int64
	// BackgroundOps counts background requests served; BackgroundLatency is
	// their latency (queue wait + service, µs, 3 significant digits).
	BackgroundOps     int64
	BackgroundLatency *hdr.Histogram
	// BackgroundWindows splits BackgroundLatency by timeline window of the
	// requests' arrival (Stats.WindowWidth wide, as Stats.Timeline;
	// arrivals past the last window count in it): µs, 2 significant
	// digits, one histogram per window (its TotalCount is the window's
	// background requests served), grown as requests arrive. Non-nil (maybe
	// empty) exactly for a replica that some Background source targets;
	// nil for the others, so a run without background keeps no windows.
	BackgroundWindows []*hdr.Histogram
}

// queueLenMax bounds the recorded queue length.
const queueLenMax = 1 << 40

func newReplicaStats(r *Replica) ReplicaStats {
	rs := ReplicaStats{Name: r.Name, Servers: r.Servers, QueueLimit: r.QueueLimit, BackgroundLatency: NewLatencyHistogram()}
	if r.Servers > 0 {
		rs.QueueLen = hdr.New(1, queueLenMax, 2)
	}
	return rs
}

// Utilisation returns replica i's busy server-time over its capacity
// (Servers × Span), 0..1; NaN when it has no servers or nothing was
// measured.
func (c *CapacityStats) Utilisation(i int) float64 {
	r := &c.Replicas[i]
	if r.Servers == 0 || c.Span <= 0 {
		return math.NaN()
	}
	return float64(r.Busy) / (float64(r.Servers) * float64(c.Span))
}

// WindowUtilisation returns replica i's utilisation per timeline window of
// width w (the runs' Stats.WindowWidth): busy server-time in the window
// over Servers × Runs × the window's measured length (the last window may
// be partial); nil when it has no servers.
func (c *CapacityStats) WindowUtilisation(i int, w time.Duration) []float64 {
	r := &c.Replicas[i]
	if r.Servers == 0 || c.Runs == 0 || w <= 0 {
		return nil
	}
	span := c.Span / time.Duration(c.Runs)
	out := make([]float64, len(r.BusyByWindow))
	for k, b := range r.BusyByWindow {
		from := time.Duration(k) * w
		length := min(w, span-from)
		if k == len(r.BusyByWindow)-1 && span-from > w {
			length = span - from // work past the last window counts in it
		}
		if length <= 0 {
			out[k] = math.NaN()
			continue
		}
		out[k] = float64(b) / (float64(r.Servers) * float64(c.Runs) * float64(length))
	}
	return out
}

// QueueQuantile returns replica i's sampled queue length at quantile q
// (0..1); NaN when it has no servers or no samples.
func (c *CapacityStats) QueueQuantile(i int, q float64) float64 {
	h := c.Replicas[i].QueueLen
	if h == nil || h.TotalCount() == 0 {
		return math.NaN()
	}
	return float64(h.ValueAtQuantile(q * 100))
}

// BackgroundQuantileMs returns replica i's background latency at quantile
// q (0..1) in ms; NaN when it served no background request.
func (c *CapacityStats) BackgroundQuantileMs(i int, q float64) float64 {
	h := c.Replicas[i].BackgroundLatency
	if h == nil || h.TotalCount() == 0 {
		return math.NaN()
	}
	return float64(h.ValueAtQuantile(q*100)) / 1000
}

// WindowBackground returns replica i's background requests served (ops)
// and their latency at quantile q (0..1, ms; NaN for a window without
// any) per timeline window of their arrival; nil, nil when no background
// source targets the replica.
func (c *CapacityStats) WindowBackground(i int, q float64) (ops []int64, ms []float64) {
	ws := c.Replicas[i].BackgroundWindows
	if ws == nil {
		return nil, nil
	}
	ops, ms = make([]int64, len(ws)), make([]float64, len(ws))
	for k, h := range ws {
		ops[k] = h.TotalCount()
		ms[k] = math.NaN()
		if ops[k] > 0 {
			ms[k] = float64(h.ValueAtQuantile(q*100)) / 1000
		}
	}
	return ops, ms
}

// newBackgroundWindow returns an empty per-window background latency
// histogram (µs, 2 significant digits, as the timeline's windows).
func newBackgroundWindow() *hdr.Histogram {
	return hdr.New(histMinMicros, histMaxMicros, windowHistDigit)
}

// merge adds o into c (nil c: a copy of o's shape is made first) and
// returns c.
func (c *CapacityStats) merge(o *CapacityStats) *CapacityStats {
	if o == nil {
		return c
	}
	if c == nil {
		c = &CapacityStats{}
		for _, r := range o.Replicas {
			rs := ReplicaStats{Name: r.Name, Servers: r.Servers, QueueLimit: r.QueueLimit, BackgroundLatency: NewLatencyHistogram()}
			if r.QueueLen != nil {
				rs.QueueLen = hdr.New(1, queueLenMax, 2)
			}
			c.Replicas = append(c.Replicas, rs)
		}
	}
	c.Span += o.Span
	c.Runs += o.Runs
	for i := range o.Replicas {
		r, x := &c.Replicas[i], &o.Replicas[i]
		r.Busy += x.Busy
		for k, b := range x.BusyByWindow {
			if k >= len(r.BusyByWindow) {
				r.BusyByWindow = append(r.BusyByWindow, 0)
			}
			r.BusyByWindow[k] += b
		}
		if x.QueueLen != nil && r.QueueLen != nil {
			r.QueueLen.Merge(x.QueueLen)
		}
		r.RefusedClient += x.RefusedClient
		r.RefusedBackground += x.RefusedBackground
		r.BackgroundRetries += x.BackgroundRetries
		r.BackgroundGaveUp += x.BackgroundGaveUp
		r.ClientServed += x.ClientServed
		r.AbortedInService += x.AbortedInService
		r.BackgroundOps += x.BackgroundOps
		r.BackgroundLatency.Merge(x.BackgroundLatency)
		if x.BackgroundWindows != nil && r.BackgroundWindows == nil {
			r.BackgroundWindows = []*hdr.Histogram{}
		}
		for k, h := range x.BackgroundWindows {
			for k >= len(r.BackgroundWindows) {
				r.BackgroundWindows = append(r.BackgroundWindows, newBackgroundWindow())
			}
			r.BackgroundWindows[k].Merge(h)
		}
	}
	return c
}

// ModelsCapacity reports whether the configuration models replica
// capacity: some replica has servers or a non-default cancel mode, or
// there is background load. Only then does a run measure CapacityStats.
func (c *Config) ModelsCapacity() bool {
	if len(c.Background) > 0 {
		return true
	}
	for i := range c.Replicas {
		if c.Replicas[i].Servers > 0 || c.Replicas[i].Cancel != CancelQueued {
			return true
		}
	}
	return false
}

// validateCapacity checks the capacity fields of the replicas and the
// background sources.
func (c *Config) validateCapacity() error {
	targets := map[string]bool{}
	for _, r := range c.Replicas {
		if r.QueueLimit < 0 {
			return fmt.Errorf("simnet: replica %q: QueueLimit must be >= 0", r.Name)
		}
		if r.Cancel > CancelOnStart {
			return fmt.Errorf("simnet: replica %q: unknown Cancel mode %d", r.Name, r.Cancel)
		}
		if s := r.OverflowStatus; s.Code != 0 && (s.Code < MinErrorStatus || s.Code > MaxErrorStatus) {
			return fmt.Errorf("simnet: replica %q: OverflowStatus %d is not an error status (%d..%d)", r.Name, s.Code, MinErrorStatus, MaxErrorStatus)
		}
		targets[r.Name], targets[r.Region] = true, true
	}
	for i, b := range c.Background {
		switch {
		case !targets[b.Target]:
			return fmt.Errorf("simnet: Background[%d]: unknown target %q", i, b.Target)
		case !(b.RatePerSec > 0) || math.IsInf(b.RatePerSec, 0):
			return fmt.Errorf("simnet: Background[%d]: RatePerSec must be > 0", i)
		case b.Start < 0:
			return fmt.Errorf("simnet: Background[%d]: Start must be >= 0", i)
		case b.End != 0 && b.End <= b.Start:
			return fmt.Errorf("simnet: Background[%d]: End must be 0 or > Start", i)
		case b.Retries < 0 || b.Retries > MaxBackgroundRetries:
			return fmt.Errorf("simnet: Background[%d]: Retries must be 0..%d", i, MaxBackgroundRetries)
		case b.RetryBackoff < 0:
			return fmt.Errorf("simnet: Background[%d]: RetryBackoff must be >= 0", i)
		}
	}
	return nil
}

// capAttempt is an attempt's state at a replica with capacity (reset by
// every send).
type capAttempt struct {
	// sent: the attempt went to a replica (st.rep is valid).
	sent bool
	// qlive: the attempt is counted in its replica's live waiting count.
	qlive bool
	// started: service began at start on server (-1: a replica without
	// servers) and frees it at end (earlier when aborted).
	started    bool
	server     int32
	start, end time.Duration
	// tied: a tied-request cancellation from the replica where the
	// operation's other leg started (CancelOnStart) reaches this
	// attempt's replica at tiedAt; the copy is removed if it is still
	// queued then, or dropped if it arrives later.
	tied   bool
	tiedAt time.Duration
}

// pendingCancel is a cancellation travelling to a queued attempt.
type pendingCancel struct {
	at   time.Duration
	slot int32
	gen  uint32
	aseq uint32
	leg  uint8
}

// cancelOf is the cancellation of attempt st (of the op in slot, of
// generation gen) reaching its replica at at.
func cancelOf(slot int32, gen uint32, st *attemptState, at time.Duration) pendingCancel {
	return pendingCancel{at: at, slot: slot, gen: gen, aseq: st.a.Seq, leg: uint8(st.a.Leg)}
}

// capReplica is a replica's capacity state.
type capReplica struct {
	// waiting is the number of live waiting requests (see the file
	// comment); cancels the pending cancellation arrivals of queued
	// attempts, a binary min-heap by at.
	waiting int
	cancels []pendingCancel
	// peakQueue is the largest physical queue (live and lazily removed
	// entries), for tests of memory under overload.
	peakQueue int
	// peakWaiting is the most live waiting requests at once (the memory
	// invariant: at most QueueLimit when set).
	peakWaiting int
	st          *ReplicaStats
}

// capSim is the run's capacity state.
type capSim struct {
	on bool
	// tied: some replica sends tied-request cancellations
	// (CancelOnStart); oneWay[i][j] is then the one-way network delay
	// from replica i to replica j (half the RTT between their regions).
	tied   bool
	oneWay [][]time.Duration
	// horizon is the end of the measured time (Config.Duration, or no end).
	horizon time.Duration
	bg      []bgStream
}

// initCapacity sets up the capacity model of a run that models capacity
// (see Config.ModelsCapacity); otherwise it does nothing and the model's
// hooks stay off.
func (s *sim) initCapacity() {
	cfg := s.cfg
	if !cfg.ModelsCapacity() {
		return
	}
	s.capa.on = true
	s.capa.horizon = time.Duration(math.MaxInt64)
	if cfg.Duration > 0 {
		s.capa.horizon = cfg.Duration
	}
	cs := &CapacityStats{Runs: 1, Replicas: make([]ReplicaStats, len(cfg.Replicas))}
	for i := range cfg.Replicas {
		cs.Replicas[i] = newReplicaStats(&cfg.Replicas[i])
		s.reps[i].capr.st = &cs.Replicas[i]
	}
	s.stats.Capacity = cs
	if s.capa.tied {
		s.delayLine = false // a copy's fate depends on the other leg's start
	}
	s.initBackground()
}

// finishCapacity records the measured span once the run has ended, and
// removes from the busy time what lies past it: a service (a background
// request's, or a cancelled attempt's whose answer is never awaited) may
// have started before the run's last event and end after it, with no
// event of its own. Services on one server follow one another, so only
// each server's last one, ending at rep.busy[k], can reach past the span.
func (s *sim) finishCapacity() {
	if !s.capa.on {
		return
	}
	span := min(s.capa.horizon, s.stats.End)
	s.stats.Capacity.Span = span
	for i := range s.reps {
		rep := &s.reps[i]
		for _, free := range rep.busy {
			if free > span {
				s.addBusy(rep.capr.st, span, free, -1)
			}
		}
	}
}

// addBusy adds (sign 1) or removes (sign -1) busy server-time [from, to)
// of a replica with servers, clipped to the measured horizon.
func (s *sim) addBusy(rs *ReplicaStats, from, to time.Duration, sign time.Duration) {
	to = min(to, s.capa.horizon)
	if to <= from {
		return
	}
	rs.Busy += sign * (to - from)
	w := s.stats.WindowWidth
	for from < to {
		k := int(from / w)
		end := min(to, time.Duration(k+1)*w)
		if k >= s.maxWindows {
			k, end = s.maxWindows-1, to
		}
		for len(rs.BusyByWindow) <= k {
			rs.BusyByWindow = append(rs.BusyByWindow, 0)
		}
		rs.BusyByWindow[k] += sign * (end - from)
		from = end
	}
}

// capArrive is called for every request arriving at rep: it applies the
// cancellations that have reached the replica by now and samples the live
// queue length.
func (s *sim) capArrive(rep *replicaRT) {
	if rep.servers == 0 {
		return
	}
	s.catchUpCancels(rep)
	_ = rep.capr.st.QueueLen.RecordValue(int64(rep.capr.waiting))
}

// catchUpCancels uncounts the queued attempts whose cancellation has
// reached rep by now.
func (s *sim) catchUpCancels(rep *replicaRT) {
	c := &rep.capr
	for len(c.cancels) > 0 && c.cancels[0].at <= s.now {
		p := c.cancels[0]
		c.popCancel()
		if o := &s.ops[p.slot]; o.gen == p.gen {
			if st := &o.att[p.leg]; st.a.Seq == p.aseq && st.cx.qlive {
				st.cx.qlive = false
				c.waiting--
			}
		}
	}
}

func (c *capReplica) pushCancel(p pendingCancel) {
	c.cancels = append(c.cancels, p)
	i := len(c.cancels) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if c.cancels[parent].at <= c.cancels[i].at {
			break
		}
		c.cancels[parent], c.cancels[i] = c.cancels[i], c.cancels[parent]
		i = parent
	}
}

func (c *capReplica) popCancel() {
	n := len(c.cancels) - 1
	c.cancels[0] = c.cancels[n]
	c.cancels = c.cancels[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && c.cancels[l].at < c.cancels[m].at {
			m = l
		}
		if r := l + 1; r < n && c.cancels[r].at < c.cancels[m].at {
			m = r
		}
		if m == i {
			return
		}
		c.cancels[i], c.cancels[m] = c.cancels[m], c.cancels[i]
		i = m
	}
}

// wouldQueue reports whether a request arriving at rep (with servers) now
// would wait: the queue holds entries or every server is busy.
func (s *sim) wouldQueue(rep *replicaRT) bool {
	if rep.qhead < len(rep.queue) {
		return true
	}
	for _, b := range rep.busy {
		if b <= s.now {
			return false
		}
	}
	return true
}

// queueFull reports whether a request arriving at rep now is refused: it
// would wait, and QueueLimit live requests already wait.
func (s *sim) queueFull(rep *replicaRT) bool {
	return rep.servers > 0 && rep.cfg.QueueLimit > 0 && rep.capr.waiting >= rep.cfg.QueueLimit && s.wouldQueue(rep)
}

// overflowStatus is the answer of rep's full queue.
func overflowStatus(rep *replicaRT) hedging.Status {
	if rep.cfg.OverflowStatus.Code == 0 {
		return hedging.Status{Code: 503}
	}
	return rep.cfg.OverflowStatus
}

// capQueued counts a request just appended to rep's queue (st nil for a
// background request) and, for an attempt whose cancellation is already
// on its way, notes when it arrives.
func (s *sim) capQueued(rep *replicaRT, slot int32, st *attemptState) {
	c := &rep.capr
	c.waiting++
	c.peakWaiting = max(c.peakWaiting, c.waiting)
	c.peakQueue = max(c.peakQueue, len(rep.queue)-rep.qhead)
	if st == nil {
		return
	}
	st.cx.qlive = true
	if rep.cfg.Cancel == CancelNone {
		return
	}
	if st.cancelled {
		c.pushCancel(cancelOf(slot, s.ops[slot].gen, st, st.cancelAt))
	}
	if st.cx.tied {
		c.pushCancel(cancelOf(slot, s.ops[slot].gen, st, st.cx.tiedAt))
	}
}

// removedAt reports whether a cancellation (the client's, or a tied
// request's from the other leg's replica) reaches st's replica by now, so
// that st, still queued there or arriving now, is removed.
func (s *sim) removedAt(st *attemptState) bool {
	if st.cancelled && s.now >= st.cancelAt {
		return true
	}
	return st.cx.tied && s.now >= st.cx.tiedAt && s.reps[st.rep].cfg.Cancel != CancelNone
}

// tieStart is called when st, of op o in slot, starts service on rep
// (whose mode is CancelOnStart): it sends the tied-request cancellation
// to the replica of o's other leg if that leg has been sent (see
// tieSent for one sent later).
func (s *sim) tieStart(slot int32, o *opState, st *attemptState) {
	o.tiedStarted, o.tiedLeg, o.tiedRep, o.tiedStartAt = true, uint8(st.a.Leg), st.rep, s.now
	other := &o.att[1-st.a.Leg]
	if !other.cx.sent || other.cx.started {
		return // not sent yet (tieSent), or already in service: it runs on
	}
	s.tie(slot, o, other)
}

// tieSent notes, for attempt st just sent to a replica, the tied-request
// cancellation of o's other leg if that leg has already started service
// on a CancelOnStart replica.
func (s *sim) tieSent(slot int32, o *opState, st *attemptState) {
	if o.tiedStarted && o.tiedLeg != uint8(st.a.Leg) {
		s.tie(slot, o, st)
	}
}

// tie sets the arrival of the tied-request cancellation at other's
// replica (sent when o's started leg started) and, when other is queued
// there, queues its arrival for the exact queue count.
func (s *sim) tie(slot int32, o *opState, other *attemptState) {
	at := o.tiedStartAt + s.capa.oneWay[o.tiedRep][other.rep]
	if other.cx.tied && other.cx.tiedAt <= at {
		return
	}
	other.cx.tied, other.cx.tiedAt = true, at
	rep := &s.reps[other.rep]
	if other.cx.qlive && rep.cfg.Cancel != CancelNone {
		rep.capr.pushCancel(cancelOf(slot, o.gen, other, at))
	}
}

// capDequeued uncounts the client entry q just taken off rep's queue, if
// it still counted.
func (s *sim) capDequeued(rep *replicaRT, q queued) {
	if o := &s.ops[q.op]; o.gen == q.gen {
		if st := &o.att[q.leg]; st.a.Seq == q.aseq && st.cx.qlive {
			st.cx.qlive = false
			rep.capr.waiting--
		}
	}
}

// capCancel applies rep's cancel mode to the cancellation of st just sent
// (st.cancelAt is when it reaches the replica).
func (s *sim) capCancel(slot int32, o *opState, st *attemptState) {
	if !st.cx.sent {
		return
	}
	rep := &s.reps[st.rep]
	switch rep.cfg.Cancel {
	case CancelNone:
		st.cancelAt = time.Duration(math.MaxInt64) // never reaches the replica
	case CancelInService:
		if st.cx.started && st.cx.end > st.cancelAt {
			s.abort(o, st, rep)
		}
	}
	if st.cx.qlive && rep.cfg.Cancel != CancelNone {
		rep.capr.pushCancel(cancelOf(slot, o.gen, st, st.cancelAt))
	}
}

// capServe notes that st starts service on rep now (server k, -1 without
// servers), ending at finish, with RU charge; it returns when the server
// is free and the RU billed: when rep aborts work in service and st's
// cancellation is on its way and arrives before finish, service is cut
// there and billed pro rata.
func (s *sim) capServe(st *attemptState, rep *replicaRT, k int, finish time.Duration, charge float64) (time.Duration, float64) {
	rs := rep.capr.st
	rs.ClientServed++
	st.cx.started, st.cx.server, st.cx.start, st.cx.end = true, int32(k), s.now, finish
	billed := charge
	if rep.cfg.Cancel == CancelInService && st.cancelled && st.cancelAt < finish {
		st.cx.end = max(st.cancelAt, s.now)
		billed = charge * float64(st.cx.end-s.now) / float64(finish-s.now)
		rs.AbortedInService++
	}
	if k >= 0 {
		s.addBusy(rs, s.now, st.cx.end, 1)
	}
	return st.cx.end, billed
}

// abort cuts st's service on rep at its cancellation's arrival: the RU
// not yet earned is refunded, the server freed.
func (s *sim) abort(o *opState, st *attemptState, rep *replicaRT) {
	rs := rep.capr.st
	rs.AbortedInService++
	cut, start, end := st.cancelAt, st.cx.start, st.cx.end
	s.chargeRU(o, -st.res.RequestCharge*float64(end-cut)/float64(end-start))
	st.cx.end = cut
	if k := st.cx.server; k >= 0 {
		s.addBusy(rs, cut, end, -1)
		rep.busy[k] = cut
		if rep.qhead < len(rep.queue) {
			// A wake may be due later: wake the queue when this server frees.
			s.wakeAt(st.rep, rep, cut)
		}
	}
}
