package simnet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"hedgelab/hedging"
)

// RunOptions tune one run.
type RunOptions struct {
	// Progress, when set, is incremented once per finished operation.
	Progress *atomic.Int64
	// OnComplete, when set, is called with every finished operation's race
	// (valid only during the call) and the operation.
	OnComplete func(r *hedging.Race, op *hedging.Operation)
	// OnCompleteInstance, when set, is called like OnComplete, with the
	// fleet instance (0 .. Config.Fleet.Instances-1) that ran the
	// operation.
	OnCompleteInstance func(instance int, r *hedging.Race, op *hedging.Operation)
	// Observer, when set, receives what hedging.Client.Do would report to
	// its Observer for every point operation and its attempts (not feed
	// pages: a run with Config.Feed and an Observer is refused), each in
	// virtual-time order, with a context whose
	// [VirtualNow] is the virtual time of the event: an attempt when its
	// answer reaches the race, or when the race ends without it
	// (Abandoned, as a cancelled attempt is: its answer never reaches the
	// caller), the operation when its race is done. The Observer must not
	// keep the events' pointers beyond the call.
	Observer hedging.Observer
	// Context, when set, cancels the run: Run checks it every
	// cancelCheckEvents events and returns its error (the run's
	// measurements are discarded).
	Context context.Context
	// MaxWork, when in 1..MaxRunWork, is the run's hard cap on requests
	// sent (attempts and background tries, see [MaxRunWork]) in place of
	// MaxRunWork: a caller running many generated scenarios bounds each
	// one tighter. It is checked every cancelCheckEvents events.
	MaxWork int64
}

type sim struct {
	cfg  *Config
	seed uint64
	// client0 is the run's client, the fleet's instance 0; instances is
	// the number of fleet instances (1 without a fleet), group all of
	// them when there are more than one (see fleet.go), all built from
	// clientCfg. fleetErr is the first error building one, which fails
	// the run.
	client0   *hedging.Client
	instances int32
	group     *hedging.ClientGroup
	clientCfg hedging.Config
	fleetErr  error
	now       time.Duration
	q         eventQueue
	// eff receives the effects of every call into a race (Begin,
	// Responded, TimerFired), performed before the next call: one
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
	// onCompleteInstance is RunOptions.OnCompleteInstance.
	onCompleteInstance func(int, *hedging.Race, *hedging.Operation)
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
	// capa is the capacity model's state (capacity.go, background.go).
	capa capSim
	// fx is the feed model's state (feed.go); nil unless the run needs it.
	fx *feedSim
	// bgTries counts background requests' tries (arrivals and retries);
	// workLimit is the run's hard cap on requests and workErr the error
	// of a run it ended (work.go).
	bgTries, workLimit int64
	workErr            error
	// eventCap is the most events the run may process (the work
	// invariant, invariants.go); overrun: the run stopped there.
	eventCap int64
	overrun  bool
	// obs is RunOptions.Observer, obsCtx the context of its calls
	// (observe.go).
	obs    hedging.Observer
	obsCtx context.Context
}

// Run simulates cfg under policy p for replication number replication
// (0-based; the seed is ReplicationSeed(cfg.Seed, replication)) and returns
// its measurements. Errors: an invalid Config, a policy that fails to
// build, an error wrapping [ErrWorkLimit] when the run sends more than
// its hard cap (MaxRunWork, or opts.MaxWork) of requests, or
// opts.Context's error when it is cancelled during the run.
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
	if err := s.initFleet(p); err != nil {
		return nil, err
	}
	s.stats.Policy = p.Name
	s.progress = opts.Progress
	s.onComplete = opts.OnComplete
	s.onCompleteInstance = opts.OnCompleteInstance
	if opts.MaxWork > 0 && opts.MaxWork < MaxRunWork {
		s.workLimit = opts.MaxWork
	}
	if opts.Observer != nil {
		if cfg.Feed != nil {
			return nil, errors.New("simnet: RunOptions.Observer does not observe feed runs (Config.Feed)")
		}
		s.obs, s.obsCtx = opts.Observer, &clockCtx{Context: context.Background(), s: s}
	}
	var done <-chan struct{}
	if opts.Context != nil {
		if err := opts.Context.Err(); err != nil {
			return nil, err
		}
		done = opts.Context.Done()
	}
	if !s.run(done) {
		if s.workErr != nil {
			return nil, s.workErr
		}
		if s.overrun {
			return nil, &InvariantError{Invariant: "work", Policy: p.Name, Detail: fmt.Sprintf(
				"stopped after %d events, the most its configuration allows (%.3g units of work expected): something loops", s.stats.Events, cfg.ExpectedWork().Total())}
		}
		return nil, opts.Context.Err()
	}
	if s.fleetErr != nil {
		return nil, s.fleetErr
	}
	if err := s.check(strategy.String() == hedging.Disabled.String()); err != nil {
		return nil, err
	}
	return s.stats, nil
}

func newSim(cfg *Config, strategy hedging.AvailabilityStrategy, seed uint64) (*sim, error) {
	s := &sim{cfg: cfg, seed: seed, repByKey: map[string]int32{}, parking: true, workLimit: MaxRunWork}
	s.rng = rand.New(&s.pcg)
	s.arrPCG.Seed(seed, arrivalStream)
	s.arr = rand.New(&s.arrPCG)
	s.wlPCG.Seed(seed, 0x3017)
	s.wl = rand.New(&s.wlPCG)

	hedgeEndpoints, writeRegion := cfg.ClientEndpoints()
	nregions := s.initReplicas(cfg, writeRegion)
	s.initWorkload(cfg, nregions)

	hc := cfg.Client
	hc.Regions, hc.WriteRegion, hc.MultiMaster, hc.Strategy = hedgeEndpoints, writeRegion, cfg.MultiMaster, strategy
	client, err := hedging.NewClient(hc)
	if err != nil {
		return nil, err
	}
	s.client0, s.instances, s.clientCfg = client, 1, hc

	s.stats, s.maxWindows = newStats(cfg)
	s.eventCap = cfg.eventBound()
	return s, nil
}
