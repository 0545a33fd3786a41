package simnet

// This file holds background load: requests from other tenants (or
// failover traffic) arriving at replicas, queued FIFO with the client's
// requests, subject to the queue limit, never hedged or cancelled, and not
// measured as the client's operations.

import (
	"math/rand/v2"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"hedgelab/simnet/dist"
)

// Background is one source of load from other tenants at a replica, or at
// every replica of a physical region.
//
// Each targeted replica gets its own Poisson stream of RatePerSec requests
// per second, from a PCG stream of its own (seeded from the run's seed,
// the source's index and the replica's), so the client's draws are the
// same with and without background load, and every policy compared sees
// the same background arrivals and service times (service draws are keyed
// by the request's arrival time). Background requests queue FIFO with the
// client's attempts and count against Replica.QueueLimit (a refused one is
// counted and dropped, or retried up to Retries times). Their service time is Service (Replica.Default
// when nil), slowed by the replica's episodes (Factor, AddMs, with the
// episode's Fraction) but not failed by episodes' FailRate or by fault
// rules, and charged no RU. Their latency is queue wait + service, recorded over the run
// and by timeline window of arrival (ReplicaStats.BackgroundWindows).
type Background struct {
	// Target is a replica name, or a physical region (every replica in it,
	// each with the full rate).
	Target string
	// RatePerSec is the arrival rate per targeted replica, > 0.
	RatePerSec float64
	// Service is the service time (ms); nil = the replica's Default.
	Service dist.Sampler
	// Start and End bound the arrivals; End 0 = the end of the client's
	// arrivals (Config.Duration, or when MaxOps is reached). Arrivals also
	// stop when the client's stop (retries of earlier arrivals do not).
	Start, End time.Duration
	// Retries is how many times a request refused by a full queue is
	// retried, 0..MaxBackgroundRetries (0: a refused request is dropped).
	// The k-th retry (k = 1..Retries) arrives RetryBackoff × 2^(k−1) × u
	// after the refusal, u uniform in [0.5, 1.5) drawn from the source's
	// own draws keyed by the request's first arrival and k (so the client's
	// draws, and every other background draw, are unchanged). A retried
	// request keeps its first arrival time: its latency, when served,
	// runs from it, it is counted in that arrival's timeline window, and
	// its service time is the one its first try would have had.
	Retries int
	// RetryBackoff is the first retry's mean backoff; 0 = 100 ms. Used
	// only with Retries > 0.
	RetryBackoff time.Duration
}

// MaxBackgroundRetries bounds Background.Retries.
const MaxBackgroundRetries = 10

// DefaultBackgroundRetryBackoff is Background.RetryBackoff's default.
const DefaultBackgroundRetryBackoff = 100 * time.Millisecond

// evBackground is a background arrival; event.id is the stream. (Kept
// apart from heap.go's kinds.) evBackgroundRetry is a retry of a refused
// background request: event.id is the stream, gen and aseq hold its first
// arrival (as bgQueued), sub the retry's number, 1..Retries.
const (
	evBackground      evKind = 64
	evBackgroundRetry evKind = 65
)

// purposeBackground keys background service draws.
const purposeBackground uint64 = 0xb6

// bgStream is one Background source at one replica.
type bgStream struct {
	rep  int32
	rate float64
	svc  dist.Sampler
	// start and end bound the arrivals.
	start, end time.Duration
	// retries and backoff are Background.Retries and RetryBackoff (its
	// default applied).
	retries int
	backoff time.Duration
	pcg     rand.PCG
	rng     *rand.Rand
}

// initBackground builds the run's background streams and queues their
// first arrivals.
func (s *sim) initBackground() {
	cfg := s.cfg
	for i := range cfg.Background {
		b := &cfg.Background[i]
		for ri := range cfg.Replicas {
			r := &cfg.Replicas[ri]
			if !r.Targeted(b.Target) {
				continue
			}
			end := b.End
			if end <= 0 || (cfg.Duration > 0 && end > cfg.Duration) {
				end = cfg.Duration
			}
			if end <= 0 {
				end = MaxDelay
			}
			svc := b.Service
			if svc == nil {
				svc = r.Default
			}
			if st := s.reps[ri].capr.st; st.BackgroundWindows == nil {
				st.BackgroundWindows = []*hdr.Histogram{}
			}
			backoff := b.RetryBackoff
			if backoff <= 0 {
				backoff = DefaultBackgroundRetryBackoff
			}
			bs := bgStream{rep: int32(ri), rate: b.RatePerSec, svc: svc, start: b.Start, end: end, retries: b.Retries, backoff: backoff}
			bs.pcg.Seed(s.seed, key(purposeBackground, uint64(i), uint64(ri), 0))
			s.capa.bg = append(s.capa.bg, bs)
		}
	}
	for k := range s.capa.bg {
		b := &s.capa.bg[k]
		b.rng = rand.New(&b.pcg)
		if at := b.start + b.gap(); at < b.end {
			s.q.push(event{at: at, kind: evBackground, id: int32(k)})
		}
	}
}

// gap draws the time to the stream's next arrival.
func (b *bgStream) gap() time.Duration {
	return msDur(b.rng.ExpFloat64() / b.rate * 1000)
}

// backgroundArrive handles a background arrival: it queues the stream's
// next one and admits, queues or refuses this one at its replica.
func (s *sim) backgroundArrive(ev event) {
	b := &s.capa.bg[ev.id]
	if next := s.now + b.gap(); next < b.end && s.acceptingArrivals(next) {
		s.q.push(event{at: next, kind: evBackground, id: ev.id})
	}
	s.bgAdmit(ev.id, s.now, 0)
}

// backgroundRetry handles a retry of a refused background request.
func (s *sim) backgroundRetry(ev event) {
	id, first := bgArrival(queued{op: -1 - ev.id, gen: ev.gen, aseq: ev.aseq})
	s.bgAdmit(id, first, int(ev.sub))
}

// bgAdmit admits, queues or refuses at its replica try number try (0 =
// the first, k = the k-th retry) of a background request of stream id
// that first arrived at first.
func (s *sim) bgAdmit(id int32, first time.Duration, try int) {
	b := &s.capa.bg[id]
	rep := &s.reps[b.rep]
	s.bgTries++
	s.capArrive(rep)
	if rep.servers == 0 {
		s.bgServe(id, rep, -1, first)
		return
	}
	if s.wouldQueue(rep) {
		if s.queueFull(rep) {
			s.bgRefused(id, rep, first, try)
			return
		}
		rep.queue = append(rep.queue, bgQueued(id, first))
		s.capQueued(rep, 0, nil)
		s.scheduleWake(b.rep, rep)
		return
	}
	for k := range rep.busy {
		if rep.busy[k] <= s.now {
			s.bgServe(id, rep, k, first)
			return
		}
	}
}

// bgRefused counts a refused try of a background request and schedules
// its next retry, or counts it as given up after its last.
func (s *sim) bgRefused(id int32, rep *replicaRT, first time.Duration, try int) {
	b := &s.capa.bg[id]
	rs := rep.capr.st
	rs.RefusedBackground++
	if b.retries == 0 {
		return
	}
	if try >= b.retries {
		rs.BackgroundGaveUp++
		return
	}
	rs.BackgroundRetries++
	u := s.draw(purposeBackground, uint64(id), uint64(first), uint64(2+try)).Float64()
	wait := min(time.Duration(float64(b.backoff)*float64(uint64(1)<<try)*(0.5+u)), MaxDelay)
	q := bgQueued(id, first)
	s.q.push(event{at: s.now + wait, kind: evBackgroundRetry, id: id, gen: q.gen, aseq: q.aseq, sub: uint8(try + 1)})
}

// bgQueued is the queue entry of a background request of stream id that
// arrived at at: op is -1-id, gen and aseq hold at.
func bgQueued(id int32, at time.Duration) queued {
	return queued{op: -1 - id, gen: uint32(uint64(at) >> 32), aseq: uint32(uint64(at))}
}

// bgArrival decodes a background queue entry (op < 0): its stream and
// arrival time.
func bgArrival(q queued) (id int32, at time.Duration) {
	return -1 - q.op, time.Duration(uint64(q.gen)<<32 | uint64(q.aseq))
}

// bgServe starts service of a background request of stream id that
// arrived at arrived, on server k of rep (-1: a replica without servers),
// and records its latency.
func (s *sim) bgServe(id int32, rep *replicaRT, k int, arrived time.Duration) {
	b := &s.capa.bg[id]
	rng := s.draw(purposeBackground, uint64(id), uint64(arrived), 1)
	u := rng.Float64()
	base := b.svc.Sample(rng)
	factor, addMs := s.episodeSlowdown(rep, u)
	finish := s.now + msDur(base*factor+addMs)
	rs := rep.capr.st
	if k >= 0 {
		rep.busy[k] = finish
		s.addBusy(rs, s.now, finish, 1)
	}
	rs.BackgroundOps++
	us := latencyMicros(finish - arrived)
	_ = rs.BackgroundLatency.RecordValue(us)
	wi := min(int(arrived/s.stats.WindowWidth), s.maxWindows-1)
	for wi >= len(rs.BackgroundWindows) {
		rs.BackgroundWindows = append(rs.BackgroundWindows, newBackgroundWindow())
	}
	_ = rs.BackgroundWindows[wi].RecordValue(us)
}
