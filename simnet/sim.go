package simnet

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hedgelab/hedging"
	"hedgelab/simnet/dist"
)

// Purposes of keyed random draws (common random numbers).
const (
	purposeJitter uint64 = iota + 1
	purposeService
	purposeFault
	purposeEpisode
	purposeThink
)

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func key(purpose, a, b, c uint64) uint64 {
	return mix64(mix64(mix64(purpose^mix64(a))^b) ^ c)
}

// ReplicationSeed derives the seed of replication r from the scenario seed.
func ReplicationSeed(seed uint64, r int) uint64 {
	if r == 0 {
		return seed
	}
	return mix64(seed ^ mix64(uint64(r)))
}

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
}

type opState struct {
	race   hedging.Race
	op     hedging.Operation
	gen    uint32
	idx    uint64 // operation index (CRN key)
	part   int32
	client int32
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
}

type queued struct {
	op   int32
	gen  uint32
	aseq uint32
	leg  uint8
}

type replicaRT struct {
	cfg      *Replica
	region   int
	servers  int
	busy     []time.Duration
	queue    []queued
	qhead    int
	wake     bool
	service  [16]dist.Sampler
	rttMs    float64
	hubRTTMs float64
	lagNs    time.Duration
	episodes []*Episode
	faults   []*Fault
}

type bucket struct {
	tokens float64
	at     time.Duration
}

func (b *bucket) take(now time.Duration, rate, burst, n float64) bool {
	b.tokens = math.Min(burst, b.tokens+rate*(now-b.at).Seconds())
	b.at = now
	if b.tokens < n {
		return false
	}
	b.tokens -= n
	return true
}

type partitionLog struct {
	total   int64
	commits [64]time.Duration // ring of the latest commit times
}

// visible returns the LSN a replica lagging by lag has applied at now.
func (p *partitionLog) visible(now, lag time.Duration) int64 {
	if lag <= 0 {
		return p.total
	}
	cut := now - lag
	n := p.total
	for i := int64(0); i < int64(len(p.commits)) && n > 0; i++ {
		if p.commits[(n-1)%int64(len(p.commits))] <= cut {
			break
		}
		n--
	}
	return n
}

// RunOptions tune one run.
type RunOptions struct {
	// Progress, when set, is incremented once per finished operation.
	Progress *atomic.Int64
	// OnComplete, when set, is called with every finished operation's race
	// (valid only during the call) and the operation.
	OnComplete func(r *hedging.Race, op *hedging.Operation)
	// Context, when set, cancels the run: Run checks it every
	// cancelCheckEvents events and returns its error (the run's
	// measurements are discarded).
	Context context.Context
}

// cancelCheckEvents is how many events Run processes between checks of
// RunOptions.Context (a power of two; ~1 ms of simulation).
const cancelCheckEvents = 1 << 14

type sim struct {
	cfg    *Config
	seed   uint64
	client *hedging.Client
	now    time.Duration
	q      eventQueue
	// eff receives the effects of every call into a race (BeginTo,
	// RespondedTo, TimerFiredTo), performed before the next call: one
	// value reused, never cleared or copied whole.
	eff      hedging.Effects
	ops      []opState
	free     []int32
	reps     []replicaRT
	repByKey map[string]int32
	// epKeys are the client's endpoint keys and epReps their replicas (-1:
	// none), for replicaOf.
	epKeys     []string
	epReps     []int32
	hub        int32
	parts      []string
	logs       []partitionLog
	budgets    []bucket
	tc         bucket
	excl       []hedging.Region
	mixCum     []float64
	mixKind    []hedging.OperationKind
	ru         [16]float64
	pcg        rand.PCG
	rng        *rand.Rand
	arrPCG     rand.PCG
	arr        *rand.Rand
	wlPCG      rand.PCG
	wl         *rand.Rand
	zipf       *rand.Zipf
	nextIdx    uint64
	lastStart  time.Duration // start time of the latest operation
	maxWindows int           // bound on len(stats.Timeline)
	stats      *Stats
	progress   *atomic.Int64
	onComplete func(*hedging.Race, *hedging.Operation)
	// delayLine enables evaluating arrivals at unqueued replicas at send
	// time (see send): true when nothing at a replica depends on the order
	// of arrivals (no RU budget, no writes in the mix).
	delayLine bool
	// parking enables keeping provably dead timers out of the queue (see
	// park); always on except in the test that compares both paths.
	parking bool
	// deadEnd is the latest time of a dropped parked timer: the run ends
	// (Stats.End) when its last event, fired or not, falls due, as it did
	// when dead timers were queued and popped.
	deadEnd time.Duration
}

// Run simulates cfg under policy p for replication number replication
// (0-based; the seed is ReplicationSeed(cfg.Seed, replication)) and returns
// its measurements. Errors: an invalid Config, a policy that fails to
// build, or opts.Context's error when it is cancelled during the run.
func Run(cfg *Config, p Policy, replication int, opts RunOptions) (*Stats, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	strategy, err := p.New()
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", p.Name, err)
	}
	s, err := newSim(cfg, strategy, ReplicationSeed(cfg.Seed, replication))
	if err != nil {
		return nil, err
	}
	s.stats.Policy = p.Name
	s.progress = opts.Progress
	s.onComplete = opts.OnComplete
	var done <-chan struct{}
	if opts.Context != nil {
		if err := opts.Context.Err(); err != nil {
			return nil, err
		}
		done = opts.Context.Done()
	}
	if !s.run(done) {
		return nil, opts.Context.Err()
	}
	return s.stats, nil
}

func newSim(cfg *Config, strategy hedging.AvailabilityStrategy, seed uint64) (*sim, error) {
	s := &sim{cfg: cfg, seed: seed, repByKey: map[string]int32{}, parking: true}
	s.rng = rand.New(&s.pcg)
	s.arrPCG.Seed(seed, 0xa77)
	s.arr = rand.New(&s.arrPCG)
	s.wlPCG.Seed(seed, 0x3017)
	s.wl = rand.New(&s.wlPCG)

	regionIdx := map[string]int{}
	physIdx := func(name string) int {
		if i, ok := regionIdx[name]; ok {
			return i
		}
		regionIdx[name] = len(regionIdx)
		return regionIdx[name]
	}
	rtt := func(from, to string) float64 {
		if v, ok := cfg.RTTMs[from][to]; ok {
			return v
		}
		if from == to {
			return cfg.SameRegionRTTMs
		}
		if v, ok := cfg.RTTMs[to][from]; ok {
			return v
		}
		return cfg.SameRegionRTTMs
	}
	var hubReplica string
	hedgeEndpoints, writeRegion := cfg.ClientEndpoints()
	for _, e := range cfg.Endpoints {
		s.epKeys = append(s.epKeys, e.Replica)
		if hedging.Region(e.Region) == writeRegion {
			hubReplica = e.Replica
		}
	}
	var hubRegion string
	for i := range cfg.Replicas {
		if cfg.Replicas[i].Name == hubReplica {
			hubRegion = cfg.Replicas[i].Region
		}
	}
	s.reps = make([]replicaRT, len(cfg.Replicas))
	for i := range cfg.Replicas {
		r := &cfg.Replicas[i]
		rt := &s.reps[i]
		rt.cfg = r
		rt.region = physIdx(r.Region)
		rt.servers = r.Servers
		rt.busy = make([]time.Duration, r.Servers)
		for k := range rt.service {
			rt.service[k] = r.Default
		}
		for k, d := range r.Service {
			rt.service[k] = d
		}
		rt.rttMs = rtt(cfg.ClientRegion, r.Region)
		rt.hubRTTMs = rtt(r.Region, hubRegion)
		if r.Region != hubRegion {
			rt.lagNs = msDur(cfg.ReplicationLagMs[r.Region])
		}
		for j := range cfg.Episodes {
			if ep := &cfg.Episodes[j]; ep.Target == r.Name || ep.Target == r.Region {
				rt.episodes = append(rt.episodes, ep)
			}
		}
		for j := range cfg.Faults {
			f := &cfg.Faults[j]
			if len(f.Targets) == 0 || slices.Contains(f.Targets, r.Name) || slices.Contains(f.Targets, r.Region) {
				rt.faults = append(rt.faults, f)
			}
		}
		s.repByKey[r.Name] = int32(i)
		if r.Name == hubReplica {
			s.hub = int32(i)
		}
	}

	for _, k := range s.epKeys {
		ri, ok := s.repByKey[k]
		if !ok {
			ri = -1
		}
		s.epReps = append(s.epReps, ri)
	}

	w := cfg.Workload
	nparts := max(w.Partitions, 1)
	s.parts = make([]string, nparts)
	for i := range s.parts {
		s.parts[i] = fmt.Sprintf("%d", i)
	}
	s.logs = make([]partitionLog, nparts)
	if cfg.RUBudget != nil {
		s.budgets = make([]bucket, nparts*len(regionIdx))
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

	hc := cfg.Client
	hc.Regions, hc.WriteRegion, hc.MultiMaster, hc.Strategy = hedgeEndpoints, writeRegion, cfg.MultiMaster, strategy
	client, err := hedging.NewClient(hc)
	if err != nil {
		return nil, err
	}
	s.client = client

	s.stats, s.maxWindows = newStats(cfg)
	return s, nil
}

// MaxGrownWindows bounds the timeline of a run without a Duration, which
// grows as operations start (each window holds a ~40 kB histogram):
// operations starting later count in the last window. With a Duration the
// bound is ceil(Duration/TimelineWindow).
const MaxGrownWindows = 1000

// MaxDelay caps every sampled delay (service time, network, think time,
// interarrival gap) so that virtual time can never overflow, whatever a
// distribution draws: 1000 hours. Latencies are recorded up to the same
// bound.
const MaxDelay = 1000 * time.Hour

// replicaOf returns the replica an endpoint key names. The attempts' keys
// are the client's endpoint strings, so a scan of those few keys (string
// comparison short-cuts on the shared pointer) finds them without hashing;
// any other key goes to the map.
func (s *sim) replicaOf(key string) (int32, bool) {
	for i, k := range s.epKeys {
		if k == key {
			return s.epReps[i], s.epReps[i] >= 0
		}
	}
	ri, ok := s.repByKey[key]
	return ri, ok
}

// msDur converts a sampled delay in ms to a duration in [0, MaxDelay].
func msDur(ms float64) time.Duration {
	d := ms * float64(time.Millisecond)
	if !(d > 0) { // negative, zero or NaN
		return 0
	}
	if d >= float64(MaxDelay) {
		return MaxDelay
	}
	return time.Duration(d)
}

// draw reseeds the shared generator for one keyed draw.
func (s *sim) draw(purpose, a, b, c uint64) *rand.Rand {
	s.pcg.Seed(s.seed, key(purpose, a, b, c))
	return s.rng
}

// run simulates until the event queue is empty and returns true, or
// returns false as soon as it sees done closed (checked every
// cancelCheckEvents events; nil never closes).
func (s *sim) run(done <-chan struct{}) bool {
	w := &s.cfg.Workload
	if w.RatePerSec > 0 {
		s.q.push(event{at: s.interarrival(), kind: evArrival, id: -1})
	} else {
		for c := 0; c < w.Clients; c++ {
			think := msDur(w.Think.Sample(s.draw(purposeThink, uint64(c), 0, 0)))
			s.q.push(event{at: think, kind: evArrival, id: int32(c)})
		}
	}
	for s.q.Len() > 0 {
		ev := s.q.pop()
		s.now = ev.at
		s.stats.Events++
		if done != nil && s.stats.Events&(cancelCheckEvents-1) == 0 {
			select {
			case <-done:
				return false
			default:
			}
		}
		switch ev.kind {
		case evArrival:
			s.arrival(ev)
		case evReplicaArrive:
			s.replicaArrive(ev)
		case evResponse:
			if o := &s.ops[ev.id]; o.gen == ev.gen {
				if st := &o.att[ev.sub]; st.a.Seq == ev.aseq {
					st.respQueued = false
					if !st.cancelled {
						o.race.RespondedTo(&s.eff, s.now, &st.a, &st.res)
						s.perform(ev.id, &s.eff)
					}
				}
				if o.nparked > 0 && o.parkLeg == ev.sub && o.parkSeq == ev.aseq {
					s.unpark(o)
				}
			}
		case evTimer:
			if o := &s.ops[ev.id]; o.gen == ev.gen {
				o.race.TimerFiredTo(&s.eff, s.now, hedging.TimerKind(ev.sub))
				s.perform(ev.id, &s.eff)
			}
		case evServerFree:
			s.reps[ev.id].wake = false
			s.drain(ev.id)
		}
	}
	s.stats.End = max(s.now, s.deadEnd)
	s.stats.ArrivalsEnd = s.lastStart
	if s.cfg.Duration > 0 && (s.cfg.MaxOps <= 0 || s.nextIdx < uint64(s.cfg.MaxOps)) {
		s.stats.ArrivalsEnd = s.cfg.Duration // arrivals ran until Duration
	}
	return true
}

func (s *sim) interarrival() time.Duration {
	return msDur(s.arr.ExpFloat64() / s.cfg.Workload.RatePerSec * 1000)
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
	var slot int32
	if n := len(s.free); n > 0 {
		slot = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		s.ops = append(s.ops, opState{})
		slot = int32(len(s.ops) - 1)
	}
	o := &s.ops[slot]
	o.idx = s.nextIdx
	s.nextIdx++
	s.lastStart = s.now
	o.client = client
	o.att[hedging.Primary] = attemptState{}
	if o.altUsed {
		o.att[hedging.Alternate] = attemptState{}
		o.altUsed = false
	}
	o.pending, o.done, o.nparked = 0, false, 0
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
	s.client.BeginTo(&s.eff, &o.race, s.now, &o.op)
	s.perform(slot, &s.eff)
}

func (s *sim) perform(slot int32, e *hedging.Effects) {
	o := &s.ops[slot]
	for i := 0; i < e.Len(); i++ {
		a := e.At(i)
		switch a.Kind {
		case hedging.ActSend:
			s.send(slot, o, &a.Attempt)
		case hedging.ActCancel:
			s.cancel(o, a.Leg)
		case hedging.ActTimer:
			if ev := (event{at: a.At, kind: evTimer, id: slot, gen: o.gen, sub: uint8(a.Timer)}); !s.park(o, &ev) {
				s.q.push(ev)
			}
		}
	}
	if o.race.Done() {
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
	for _, ev := range o.parked[:o.nparked] {
		if o.race.Done() {
			s.deadEnd = max(s.deadEnd, ev.at)
		} else {
			s.q.pushStamped(ev)
		}
	}
	o.nparked = 0
}

// queueResponse schedules st's response to reach the client at at.
func (s *sim) queueResponse(slot int32, o *opState, st *attemptState, at time.Duration) {
	st.respAt, st.respQueued = at, true
	s.q.push(event{at: at, kind: evResponse, id: slot, gen: o.gen, aseq: st.a.Seq, sub: uint8(st.a.Leg)})
}

func (s *sim) send(slot int32, o *opState, a *hedging.Attempt) {
	st := &o.att[a.Leg]
	st.a = *a
	o.altUsed = o.altUsed || a.Leg == hedging.Alternate
	st.cancelled = false
	st.respQueued = false
	st.n++
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
	s.stats.ReplicaAttempts[ri]++
	rttMs := rep.rttMs
	if s.cfg.Jitter != nil {
		rttMs += s.cfg.Jitter.Sample(s.draw(purposeJitter, o.idx, uint64(ri), uint64(st.n)))
	}
	rtt := msDur(rttMs)
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

func (s *sim) cancel(o *opState, leg hedging.Leg) {
	st := &o.att[leg]
	st.cancelled = true
	st.cancelAt = s.now + st.back
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

// episodeEffect returns the slow-down factor, added ms and fail rate of rep
// at now for a request whose episode draw is u.
func (s *sim) episodeEffect(rep *replicaRT, u float64) (factor, addMs, failRate float64, fail hedging.Status) {
	if len(rep.episodes) == 0 { // small enough to inline: no episode, no call
		return 1, 0, 0, hedging.Status{}
	}
	return s.episodesAt(rep, u)
}

// episodesAt is episodeEffect for a replica with episodes.
func (s *sim) episodesAt(rep *replicaRT, u float64) (factor, addMs, failRate float64, fail hedging.Status) {
	factor = 1
	for _, ep := range rep.episodes {
		if s.now < ep.Start || s.now >= ep.End {
			continue
		}
		if ep.Fraction > 0 && ep.Fraction < 1 && u >= ep.Fraction {
			continue
		}
		ramp := 1.0
		if ep.RampUp > 0 && s.now < ep.Start+ep.RampUp {
			ramp = float64(s.now-ep.Start) / float64(ep.RampUp)
		}
		if ep.RampDown > 0 && s.now > ep.End-ep.RampDown {
			ramp = math.Min(ramp, float64(ep.End-s.now)/float64(ep.RampDown))
		}
		if ep.Factor > 0 {
			factor *= 1 + (ep.Factor-1)*ramp
		}
		addMs += ep.AddMs * ramp
		if ep.FailRate > 0 {
			failRate = math.Max(failRate, ep.FailRate*ramp)
			fail = ep.FailStatus
		}
	}
	return
}

// reach is the one check of an attempt arriving at its replica, by event
// or from the replica's queue, and the one place its keyed draws there are
// made. It returns nil when the event or queue entry is stale (the op slot
// was reused, or the leg has sent a newer attempt), and nil with cancelled
// set when the attempt's cancellation got there first (the attempt is then
// settled). Otherwise it returns the attempt's state and its fault and
// episode draws, in that order (zero when the replica has no fault rule and
// no episode to read them: keyed draws need not be made to keep others in
// step).
func (s *sim) reach(slot int32, gen uint32, leg uint8, aseq uint32) (st *attemptState, uFault, uEpisode float64, cancelled bool) {
	o := &s.ops[slot]
	if o.gen != gen {
		return nil, 0, 0, false
	}
	st = &o.att[leg]
	if st.a.Seq != aseq {
		return nil, 0, 0, false
	}
	if st.cancelled && s.now >= st.cancelAt {
		s.settle(slot, o)
		return nil, 0, 0, true
	}
	if rep := &s.reps[st.rep]; len(rep.faults) == 0 && len(rep.episodes) == 0 {
		return st, 0, 0, false // no fault rule or episode reads the draws
	}
	rng := s.draw(purposeFault, o.idx, uint64(st.rep), uint64(st.n))
	uFault = rng.Float64()
	return st, uFault, rng.Float64(), false
}

func (s *sim) replicaArrive(ev event) {
	st, uFault, uEpisode, _ := s.reach(ev.id, ev.gen, ev.sub, ev.aseq)
	if st == nil {
		return
	}
	o := &s.ops[ev.id]
	ri := st.rep
	rep := &s.reps[ri]
	kind := o.op.Kind
	// Fault rules, in order; the first that fires answers.
	for _, f := range rep.faults {
		if s.now < f.Start || (f.End > 0 && s.now >= f.End) || (len(f.Kinds) > 0 && !slices.Contains(f.Kinds, kind)) {
			continue
		}
		if f.FirstAttemptOnly && st.n > 1 {
			continue
		}
		if len(f.Partitions) > 0 && !slices.Contains(f.Partitions, int(o.part)) {
			continue
		}
		if f.Status.Code == 404 && f.Status.SubStatus == hedging.SubStatusReadSessionNotAvailable && st.a.HubRegionProcessingOnly {
			continue // the hub always has the session
		}
		if uFault < f.Probability {
			s.stats.Faults++
			s.answer(ev, st, hedging.Result{Status: f.Status}, msDur(f.LatencyMs))
			return
		}
		uFault = (uFault - f.Probability) / (1 - f.Probability) // reuse the draw for the next rule
	}
	if _, _, failRate, fail := s.episodeEffect(rep, uEpisode); failRate > 0 {
		if u := s.draw(purposeEpisode, o.idx, uint64(ri), uint64(st.n)).Float64(); u < failRate {
			if fail.Code == 0 {
				fail = hedging.Status{Code: 503}
			}
			s.answer(ev, st, hedging.Result{Status: fail}, 0)
			return
		}
	}
	if b := s.cfg.RUBudget; b != nil {
		bk := &s.budgets[int(o.part)*(len(s.budgets)/len(s.logs))+rep.region]
		if !bk.take(s.now, b.RUPerSec, b.Burst, s.ru[kind]) {
			s.answer(ev, st, hedging.Result{Status: hedging.Status{Code: 429, SubStatus: hedging.SubStatusRUBudgetExceeded}}, 0)
			return
		}
	}
	if !kind.IsWrite() && !st.a.HubRegionProcessingOnly && st.a.SessionLSN > s.logs[o.part].visible(s.now, rep.lagNs) {
		s.answer(ev, st, hedging.Result{Status: hedging.Status{Code: 404, SubStatus: hedging.SubStatusReadSessionNotAvailable}}, 0)
		return
	}
	if rep.servers == 0 {
		s.serve(ev.id, o, st, rep, uEpisode)
		s.settle(ev.id, o)
		return
	}
	for k := range rep.busy {
		if rep.busy[k] <= s.now && rep.qhead == len(rep.queue) {
			s.serveOn(ev.id, o, st, rep, k, uEpisode)
			s.settle(ev.id, o)
			return
		}
	}
	rep.queue = append(rep.queue, queued{op: ev.id, gen: ev.gen, aseq: ev.aseq, leg: ev.sub})
	s.scheduleWake(ri, rep)
}

func (s *sim) answer(ev event, st *attemptState, res hedging.Result, after time.Duration) {
	defer s.settle(ev.id, &s.ops[ev.id])
	if res.Status.Code == 404 && res.Status.SubStatus == hedging.SubStatusReadSessionNotAvailable {
		s.stats.SessionNotAvailable++
	}
	st.res = res
	s.queueResponse(ev.id, &s.ops[ev.id], st, s.now+after+st.back)
}

func (s *sim) scheduleWake(ri int32, rep *replicaRT) {
	if rep.wake {
		return
	}
	next := rep.busy[0]
	for _, b := range rep.busy[1:] {
		next = min(next, b)
	}
	rep.wake = true
	s.q.push(event{at: max(next, s.now), kind: evServerFree, id: ri})
}

// drain starts queued requests on every free server of rep.
func (s *sim) drain(ri int32) {
	rep := &s.reps[ri]
	for rep.qhead < len(rep.queue) {
		k := -1
		for i, b := range rep.busy {
			if b <= s.now {
				k = i
				break
			}
		}
		if k < 0 {
			break
		}
		q := rep.queue[rep.qhead]
		rep.qhead++
		st, _, uEpisode, cancelled := s.reach(q.op, q.gen, q.leg, q.aseq)
		if st == nil {
			if cancelled {
				s.stats.Removed++ // removed by cancellation (§14.2)
			}
			continue
		}
		o := &s.ops[q.op]
		s.serveOn(q.op, o, st, rep, k, uEpisode)
		s.settle(q.op, o)
	}
	if rep.qhead == len(rep.queue) {
		rep.queue, rep.qhead = rep.queue[:0], 0
	} else if rep.qhead > 1024 && rep.qhead*2 > len(rep.queue) {
		n := copy(rep.queue, rep.queue[rep.qhead:])
		rep.queue, rep.qhead = rep.queue[:n], 0
	}
	if rep.qhead < len(rep.queue) {
		s.scheduleWake(ri, rep)
	}
}

func (s *sim) serveOn(slot int32, o *opState, st *attemptState, rep *replicaRT, k int, uEpisode float64) {
	finish := s.serve(slot, o, st, rep, uEpisode)
	rep.busy[k] = finish
}

// serve starts service of st on rep now and schedules its response; it
// returns when service ends.
func (s *sim) serve(slot int32, o *opState, st *attemptState, rep *replicaRT, uEpisode float64) time.Duration {
	kind := o.op.Kind
	base := rep.service[kind].Sample(s.draw(purposeService, o.idx, uint64(st.rep), uint64(st.n)))
	factor, addMs, _, _ := s.episodeEffect(rep, uEpisode)
	ms := base*factor + addMs
	if st.a.HubRegionProcessingOnly && !kind.IsWrite() {
		ms += rep.hubRTTMs
	}
	finish := s.now + msDur(ms)
	charge := s.ru[kind]
	s.stats.RUCharged += charge // charged even if cancelled while in service (§14.2)
	res := hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: charge}
	log := &s.logs[o.part]
	switch {
	case kind.IsWrite():
		log.total++
		log.commits[(log.total-1)%int64(len(log.commits))] = finish
		res.SessionLSN = log.total
		if kind == hedging.Create {
			res.Status.Code = 201
		}
	case st.a.HubRegionProcessingOnly:
		res.SessionLSN = log.total
	default:
		res.SessionLSN = log.visible(s.now, rep.lagNs)
	}
	st.res = res
	s.queueResponse(slot, o, st, finish+st.back)
	return finish
}

func (s *sim) complete(slot int32, o *opState) {
	r := &o.race
	s.record(r)
	if s.progress != nil {
		s.progress.Add(1)
	}
	if s.onComplete != nil {
		s.onComplete(r, &o.op)
	}
	client := o.client
	o.done = true
	s.maybeFree(slot, o)
	if client >= 0 {
		w := &s.cfg.Workload
		think := msDur(w.Think.Sample(s.draw(purposeThink, uint64(client), s.nextIdx, 1)))
		if s.acceptingArrivals(s.now + think) {
			s.q.push(event{at: s.now + think, kind: evArrival, id: client})
		}
	}
}

// newStats returns the empty measurements of one run of cfg (timeline
// windows of cfg.TimelineWindow, default Duration/120 and at least 1 s) and
// the bound on the number of timeline windows the run may grow to.
func newStats(cfg *Config) (*Stats, int) {
	width := cfg.TimelineWindow
	if width <= 0 {
		width = max(cfg.Duration/120, time.Second)
	}
	// A run with a Duration has at most ceil(Duration/width) windows; one
	// without grows its timeline up to MaxGrownWindows. A run that MaxOps
	// may end early starts with one window and grows as operations start.
	maxWindows := MaxGrownWindows
	if cfg.Duration > 0 {
		maxWindows = int((cfg.Duration + width - 1) / width)
	}
	nwin := 1
	if cfg.Duration > 0 && cfg.MaxOps <= 0 {
		nwin = maxWindows
	}
	st := &Stats{Latency: NewLatencyHistogram(), WindowWidth: width, Timeline: make([]Window, nwin),
		ReplicaAttempts: make([]int64, len(cfg.Replicas)), ReplicaAnswers: make([]int64, len(cfg.Replicas))}
	for _, r := range cfg.Replicas {
		st.Replicas = append(st.Replicas, r.Name)
	}
	for i := range st.Timeline {
		st.Timeline[i].Latency = hdr.New(histMinMicros, histMaxMicros, windowHistDigit)
	}
	return st, maxWindows
}

// record adds the finished race r to the run's measurements: latency
// histogram, counters, terminal state and its timeline window (by start).
func (s *sim) record(r *hedging.Race) {
	st := s.stats
	lat := r.DoneAt() - r.Start()
	us := max(int64(lat/time.Microsecond), histMinMicros)
	us = min(us, histMaxMicros)
	_ = st.Latency.RecordValue(us)
	st.Ops++
	wi := int(r.Start() / st.WindowWidth)
	for wi >= len(st.Timeline) && len(st.Timeline) < s.maxWindows {
		st.Timeline = append(st.Timeline, Window{Latency: hdr.New(histMinMicros, histMaxMicros, windowHistDigit)})
	}
	wi = max(min(wi, len(st.Timeline)-1), 0)
	win := &st.Timeline[wi]
	win.Ops++
	_ = win.Latency.RecordValue(us)
	if r.Err() != nil {
		st.Errors++
		win.Errors++
	} else {
		if r.Status().Code >= 400 {
			st.FinalErrorResponses++
		}
		if w, ok := r.Winner(); ok {
			if ri, ok := s.replicaOf(r.Endpoint(w).Key); ok {
				st.ReplicaAnswers[ri]++
			}
		}
	}
	if r.AlternateSpawned() {
		st.Hedged++
		win.Hedged++
	}
	if d, ok := r.Diagnostics(); ok {
		if c, ok := d.SpawnCause(); ok && c.Failover() {
			st.FailoverHedged++
		}
		ts := d.TerminalState()
		st.Terminal[ts]++
		if ts == hedging.AlternateWon {
			st.AlternateWins++
		}
		win.ThresholdSumMs += float64(r.Threshold().Get()) / float64(time.Millisecond)
		win.ThresholdOps++
	} else {
		st.Terminal[0]++
	}
	if r.TrippedBreaker() {
		st.BreakerTrips++
	}
	st.RUReturned += r.RequestCharge()
}
