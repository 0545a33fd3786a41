package simnet

// This file holds the replica and network model: replicas with their
// servers, FIFO queues, episodes, fault rules, RU budgets and replication
// lag; the round trip between the client and a replica; and each
// request's arrival, service, cancellation and answer at its replica.

import (
	"math"
	"slices"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet/dist"
)

type queued struct {
	op   int32
	gen  uint32
	aseq uint32
	leg  uint8
}

type replicaRT struct {
	cfg     *Replica
	region  int
	servers int
	busy    []time.Duration
	queue   []queued
	qhead   int
	// wake: a server-free event is pending, at wakeAt (at most one per
	// replica; scheduleWake, wakeAt).
	wake     bool
	wakeAt   time.Duration
	service  [16]dist.Sampler
	rttMs    float64
	hubRTTMs float64
	lagNs    time.Duration
	episodes []*Episode
	faults   []*Fault
	capr     capReplica // capacity state (capacity.go)
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

// queueResponse schedules st's response to reach the client at at.
func (s *sim) queueResponse(slot int32, o *opState, st *attemptState, at time.Duration) {
	st.respAt, st.respQueued = at, true
	s.q.push(event{at: at, kind: evResponse, id: slot, gen: o.gen, aseq: st.a.Seq, sub: uint8(st.a.Leg)})
}

// episodeSlowdown returns the slow-down factor and added ms of rep at now
// for a request whose episode draw is u, and episodeFailure its fail rate
// and status (both small enough to inline: no episode, no call).
func (s *sim) episodeSlowdown(rep *replicaRT, u float64) (factor, addMs float64) {
	if len(rep.episodes) == 0 {
		return 1, 0
	}
	factor, addMs, _, _ = s.episodesAt(rep, u)
	return factor, addMs
}

func (s *sim) episodeFailure(rep *replicaRT, u float64) (failRate float64, fail hedging.Status) {
	if len(rep.episodes) == 0 {
		return 0, hedging.Status{}
	}
	_, _, failRate, fail = s.episodesAt(rep, u)
	return failRate, fail
}

// episodesAt returns the slow-down factor, added ms, fail rate and fail
// status of rep (with episodes) at now for a request whose episode draw
// is u.
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
	if s.removedAt(st) {
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
	if s.capa.on {
		s.capArrive(rep)
	}
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
	if failRate, fail := s.episodeFailure(rep, uEpisode); failRate > 0 {
		if u := s.draw(purposeEpisode, o.idx, uint64(ri), uint64(st.n)).Float64(); u < failRate {
			if fail.Code == 0 {
				fail = hedging.Status{Code: 503}
			}
			s.answer(ev, st, hedging.Result{Status: fail}, 0)
			return
		}
	}
	if s.capa.on && s.queueFull(rep) {
		rep.capr.st.RefusedClient++
		s.answer(ev, st, hedging.Result{Status: overflowStatus(rep)}, 0)
		return
	}
	if b := s.cfg.RUBudget; b != nil {
		bk := &s.budgets[int(o.part)*(len(s.budgets)/len(s.logs))+rep.region]
		if !bk.take(s.now, b.RUPerSec, b.Burst, s.ru[kind]) {
			s.answer(ev, st, hedging.Result{Status: hedging.Status{Code: 429, SubStatus: hedging.SubStatusRUBudgetExceeded}}, 0)
			return
		}
	}
	if s.fx != nil {
		if s.feedArrive(ev, o, st, ri, rep) {
			return
		}
	} else if !kind.IsWrite() && !st.a.HubRegionProcessingOnly && st.a.SessionLSN > s.logs[o.part].visible(s.now, rep.lagNs) {
		s.answer(ev, st, hedging.Result{Status: hedging.Status{Code: 404, SubStatus: hedging.SubStatusReadSessionNotAvailable}}, 0)
		return
	}
	if rep.servers == 0 {
		s.serve(ev.id, o, st, rep, -1, uEpisode)
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
	if s.capa.on {
		s.capQueued(rep, ev.id, st)
	}
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

// scheduleWake makes sure a server-free event wakes rep's queue when its
// first server frees up.
func (s *sim) scheduleWake(ri int32, rep *replicaRT) {
	next := rep.busy[0]
	for _, b := range rep.busy[1:] {
		next = min(next, b)
	}
	s.wakeAt(ri, rep, max(next, s.now))
}

// wakeAt makes sure a server-free event wakes rep's queue at or before
// at: a replica keeps at most one pending wake, so one already due by at
// suffices, and an earlier one replaces (makes stale) a later one.
// Several pending wakes would each, on firing with the queue still
// held, schedule the next: chains that never merge (the fuzzer's
// fuzz-serverfree-storm, issue 24).
func (s *sim) wakeAt(ri int32, rep *replicaRT, at time.Duration) {
	if rep.wake && rep.wakeAt <= at {
		return
	}
	rep.wake, rep.wakeAt = true, at
	s.q.push(event{at: at, kind: evServerFree, id: ri})
}

// serverFree handles a server-free event of replica ri: a stale one (a
// later wake replaced by an earlier one) is dropped.
func (s *sim) serverFree(ev event) {
	rep := &s.reps[ev.id]
	if !rep.wake || rep.wakeAt != ev.at {
		return
	}
	rep.wake = false
	s.drain(ev.id)
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
		if q.op < 0 { // a background request (background.go)
			rep.capr.waiting--
			id, at := bgArrival(q)
			s.bgServe(id, rep, k, at)
			continue
		}
		if s.capa.on {
			s.capDequeued(rep, q)
		}
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
	rep.busy[k] = s.serve(slot, o, st, rep, k, uEpisode)
}

// serve starts service of st on rep now (on server k; -1 for a replica
// without servers) and schedules its response; it returns when the server
// is free again (when service ends, or earlier when a cancellation aborts
// it, see capServe).
func (s *sim) serve(slot int32, o *opState, st *attemptState, rep *replicaRT, k int, uEpisode float64) time.Duration {
	kind := o.op.Kind
	base := rep.service[kind].Sample(s.draw(purposeService, o.idx, uint64(st.rep), uint64(st.n)))
	factor, addMs := s.episodeSlowdown(rep, uEpisode)
	ms := base*factor + addMs
	if st.a.HubRegionProcessingOnly && !kind.IsWrite() {
		ms += rep.hubRTTMs
	}
	finish := s.now + msDur(ms)
	charge := s.ru[kind]
	var fs *feedSlot
	if o.page {
		fs = s.fx.slotOf(slot) // nil: a loser served after its race ended
		charge = s.feedCharge(fs, o, st, rep)
	}
	free, billed := finish, charge
	if s.capa.on {
		free, billed = s.capServe(st, rep, k, finish, charge)
		if s.capa.tied && rep.cfg.Cancel == CancelOnStart {
			s.tieStart(slot, o, st)
		}
	}
	s.chargeRU(o, billed) // charged even if cancelled while in service (§14.2; pro rata when aborted)
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
	if s.fx != nil {
		s.feedResult(fs, o, st, rep, &res, finish)
	}
	st.res = res
	s.queueResponse(slot, o, st, finish+st.back)
	return free
}

// initReplicas builds the run's replicas from cfg (service times, RTTs from
// the client and to the hub, replication lag, episodes, fault rules) and
// the endpoint-to-replica index, and returns the number of physical
// regions the replicas are in. writeRegion is the account's write region
// (see [Config.ClientEndpoints]): its replica is the hub.
func (s *sim) initReplicas(cfg *Config, writeRegion hedging.Region) int {
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
			if ep := &cfg.Episodes[j]; r.Targeted(ep.Target) {
				rt.episodes = append(rt.episodes, ep)
			}
		}
		for j := range cfg.Faults {
			f := &cfg.Faults[j]
			if len(f.Targets) == 0 || slices.ContainsFunc(f.Targets, r.Targeted) {
				rt.faults = append(rt.faults, f)
			}
		}
		s.repByKey[r.Name] = int32(i)
		if r.Name == hubReplica {
			s.hub = int32(i)
		}
		s.capa.tied = s.capa.tied || r.Cancel == CancelOnStart
	}
	if s.capa.tied {
		s.capa.oneWay = make([][]time.Duration, len(cfg.Replicas))
		for i := range cfg.Replicas {
			s.capa.oneWay[i] = make([]time.Duration, len(cfg.Replicas))
			for j := range cfg.Replicas {
				s.capa.oneWay[i][j] = msDur(rtt(cfg.Replicas[i].Region, cfg.Replicas[j].Region)) / 2
			}
		}
	}

	for _, k := range s.epKeys {
		ri, ok := s.repByKey[k]
		if !ok {
			ri = -1
		}
		s.epReps = append(s.epReps, ri)
	}
	return len(regionIdx)
}
