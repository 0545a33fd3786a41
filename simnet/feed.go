package simnet

// This file holds the feed model (spec §16 Phase 2, §17 Q9): queries,
// ReadMany calls and change-feed polls driven page by page through
// hedging/feed's Driver, which simnet drives as it drives the race core
// (Next and Deliver from the event loop; every page one race over the
// network model of network.go); the setup stages before the first page
// with per-instance metadata caches; replication lag per (region,
// partition) and consistency levels; and the commit log as the ground truth
// of what a change feed delivers.

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// evFeed is a feed event (kept apart from heap.go's kinds): event.sub is
// feedAdvance (id: the feed operation, whose driver is pumped), feedPoll
// (id: the poller, which starts its next poll) or feedDue.
//
// An event naming a feed operation carries the operation's generation
// (event.gen, feedOp.gen), which changes when the operation ends: an event
// queued for an operation that has since ended — two pages of one
// operation answered at the same instant each queue an advance, and the
// first ends it — is stale and ignored, whether the operation's slot is
// free or reused. [sim.queueAdvance] is the only way to queue one.
const evFeed evKind = 80

const (
	feedAdvance uint8 = iota
	feedPoll
	// feedDue is a whole-operation hedge's threshold: the operation is
	// advanced if it still runs.
	feedDue
)

// Purposes of the feed model's keyed draws (apart from engine.go's).
const (
	purposeFeedPages uint64 = 0x100 + iota
	purposeLag
	purposeRefresh
	purposeFeedPage
)

// feedRing is the commit times one partition's feed log keeps: a lag
// longer than feedRing commits is clamped to it.
const feedRing = 1 << 10

// MaxFeedPartitions bounds Workload.Partitions when Feed, Lag or a
// consistency level other than Session is set (each partition written to
// keeps feedRing commit times, 8 KB).
const MaxFeedPartitions = 10_000

// feedLog is one partition's commit log as the feed model sees it: the
// commit time of each of the latest feedRing LSNs, as a running maximum (a
// replica applies a prefix: LSN n is visible once it and every earlier one
// committed).
type feedLog struct {
	total int64
	ring  []time.Duration
}

func (l *feedLog) commit(at time.Duration) {
	if l.ring == nil {
		l.ring = make([]time.Duration, feedRing)
	}
	if l.total > 0 {
		at = max(at, l.ring[(l.total-1)%feedRing])
	}
	l.ring[l.total%feedRing] = at
	l.total++
}

// visible returns the LSN a replica lagging by lag has applied at now.
func (l *feedLog) visible(now, lag time.Duration) int64 {
	if lag <= 0 || l.total == 0 {
		return l.total
	}
	cut := now - lag
	lo := max(0, l.total-feedRing)
	k := sort.Search(int(l.total-lo), func(k int) bool { return l.ring[(lo+int64(k))%feedRing] > cut })
	return lo + int64(k)
}

// ivals is a set of LSNs as sorted, disjoint, non-adjacent inclusive
// ranges: what a partition's change-feed consumers were delivered.
type ivals [][2]int64

// add adds (lo, hi] and returns how many of those LSNs were in the set.
func (v *ivals) add(lo, hi int64) (dup int64) {
	lo++
	if hi < lo {
		return 0
	}
	s := *v
	i := sort.Search(len(s), func(i int) bool { return s[i][1] >= lo-1 })
	j, nlo, nhi := i, lo, hi
	for ; j < len(s) && s[j][0] <= hi+1; j++ {
		if a, b := max(s[j][0], lo), min(s[j][1], hi); b >= a {
			dup += b - a + 1
		}
		nlo, nhi = min(nlo, s[j][0]), max(nhi, s[j][1])
	}
	*v = slices.Replace(s, i, j, [2]int64{nlo, nhi})
	return dup
}

// holes returns the LSNs below the set's highest that it lacks.
func (v ivals) holes() int64 {
	if len(v) == 0 {
		return 0
	}
	n := v[len(v)-1][1]
	for _, r := range v {
		n -= r[1] - r[0] + 1
	}
	return n
}

// pageContent is what a replica served for one page attempt, kept until
// the race ends so the winner's can be recorded.
type pageContent struct {
	lo, hi      int64 // change feed: LSNs (lo, hi] delivered, global numbering
	applied     int64
	stale       bool // the replica had not applied every committed write (or metadata event)
	notModified bool
	cont        hedging.Continuation
}

// feedSlot ties an op slot running a page to its feed operation.
type feedSlot struct {
	live    bool
	setup   bool
	fo      int32
	page    feed.Page
	copy    hedging.Leg // the copy of a whole-operation hedge the page belongs to
	content [2]pageContent
}

// feedInst is one fleet instance's feed state: its metadata cache (the
// version it holds; -1 = cold) and its gates.
type feedInst struct {
	ver         int64
	gate, mgate *feed.Gate
}

// poller is one change-feed consumer: its partitions and where each
// resumes.
type poller struct {
	parts   []int32
	cursors []hedging.Continuation
	maxSeen []int64
	polls   uint64
}

// feedOp is one feed operation in flight: a query, a ReadMany call or a
// change-feed poll.
type feedOp struct {
	kind         hedging.OperationKind
	idx          uint64
	start, first time.Duration
	paged        bool
	inst, client int32
	poller       int32
	part         int32
	leafPart     []int32
	leafPages    []int32
	leafMax      []int64
	drv          *feed.Driver
	// whole, when set, hedges the operation as a unit (Feed.HedgeUnit);
	// drv is then nil. due: its feedDue event is queued; copyRU is each
	// copy's returned RU (the winner's counts).
	whole *feed.Whole
	// gen is the operation's generation: it changes when the operation
	// ends, so an event queued for it before is stale (evFeed).
	gen      uint32
	due      bool
	copyRU   [2]float64
	stages   []feed.Resource
	stage    int
	md       *feed.Driver
	tmpl     hedging.Operation // the operation's per-page settings (the query plan's too)
	setupVer int64
	failed   bool
	// hedged: a page or setup read sent its alternate; onThreshold: one
	// sent it on the threshold (else every hedge was a failover, counted
	// in Stats.FailoverHedged); altWon: one's alternate won.
	hedged, onThreshold, altWon bool
}

// feedSim is the run's feed state; nil unless Config.Feed, Config.Lag or a
// consistency level other than Session is set, so runs without them take
// none of its paths.
type feedSim struct {
	f         *Feed // nil: only lag and consistency
	cons      Consistency
	bound     time.Duration
	sigma     float64
	hubRegion int
	lagEps    [][]*LagEpisode // per replica
	// applied is, per replica with lag episodes, the LSN it has applied
	// on each partition so far: a replica never un-applies a write, so
	// while an episode raises its lag it applies nothing new (visibleAt).
	applied   [][]int64
	logs      []feedLog
	ops       []feedOp
	freeOps   []int32
	slots     []feedSlot // per op slot
	inst      []feedInst
	pollers   []poller
	delivered []ivals // per partition
	evAt      []time.Duration
	evKind    []MetadataEventKind
	metaLag   []time.Duration // per physical region index
	blankIDs  []string
	// choice decides a hedged collection or partition-key-range read
	// (Setup.Latest); nil: the race's winner (feed.Fastest).
	choice *feed.Choice
	stats  *FeedStats
	// pageServers has bit i set when replica i served a data page that was
	// delivered (manyServers: a replica past the 64th did); peakLeaves and
	// peakPages are the most leaves one operation planned and the most
	// pages one query leaf ran (invariants.go).
	pageServers           uint64
	manyServers           bool
	peakLeaves, peakPages int
}

// feedOn reports whether cfg needs the feed model.
func (c *Config) feedOn() bool {
	return c.Feed != nil || c.Lag != nil || c.Consistency != Session
}

// HasFeedOperations reports whether the workload has feed operations
// that Feed.HedgeUnit applies to: Feed is set and the mix has queries or
// ReadMany calls.
func (c *Config) HasFeedOperations() bool {
	if c.Feed == nil {
		return false
	}
	for _, m := range c.Workload.Mix {
		if m.Weight > 0 && (m.Kind == hedging.QueryPage || m.Kind == hedging.ReadManyPage) {
			return true
		}
	}
	return false
}

// initFeed builds the feed state of a run that needs it.
func (s *sim) initFeed() {
	cfg := s.cfg
	if !cfg.feedOn() {
		return
	}
	fx := &feedSim{f: cfg.Feed, cons: cfg.Consistency, bound: cfg.StalenessBound, hubRegion: s.reps[s.hub].region,
		logs: make([]feedLog, len(s.parts)), lagEps: make([][]*LagEpisode, len(s.reps)), stats: newFeedStats()}
	if l := cfg.Lag; l != nil {
		fx.sigma = l.Sigma
		fx.applied = make([][]int64, len(s.reps))
		for ri := range s.reps {
			for j := range l.Episodes {
				if e := &l.Episodes[j]; s.reps[ri].cfg.Targeted(e.Target) {
					fx.lagEps[ri] = append(fx.lagEps[ri], e)
				}
			}
			if len(fx.lagEps[ri]) > 0 {
				fx.applied[ri] = make([]int64, len(s.parts))
				// What a replica has applied depends on the order of the
				// reads it serves: arrivals are handled in time order.
				s.delayLine = false
			}
		}
	}
	s.fx = fx
	f := cfg.Feed
	if f == nil {
		return
	}
	fx.inst = make([]feedInst, s.instances)
	for i := range fx.inst {
		fx.inst[i].ver = -1
		if f.GateCapacity > 0 {
			fx.inst[i].gate, _ = feed.NewGate(f.GateCapacity)
		}
		fx.inst[i].mgate, _ = feed.NewGate(cmp.Or(f.Setup.MetadataBudget, feed.DefaultMetadataBudget))
	}
	ev := slices.Clone(f.Setup.Events)
	slices.SortStableFunc(ev, func(a, b MetadataEvent) int { return int(a.At - b.At) })
	for _, e := range ev {
		fx.evAt = append(fx.evAt, e.At)
		fx.evKind = append(fx.evKind, e.Kind)
	}
	if len(ev) > 0 {
		// A stale-cache hit refreshes the instance's cache where the page
		// arrives: arrivals must be handled in time order, not at send time.
		s.delayLine = false
	}
	nreg := 0
	for i := range s.reps {
		nreg = max(nreg, s.reps[i].region+1)
	}
	fx.metaLag = make([]time.Duration, nreg)
	for i := range s.reps {
		fx.metaLag[s.reps[i].region] = msDur(f.Setup.MetadataLagMs[s.reps[i].cfg.Region])
	}
	fx.blankIDs = make([]string, f.readManyItems())
	if f.Setup.Latest {
		c, _ := feed.LatestWithGrace(f.Setup.Grace)
		fx.choice = &c
	}
	cf := f.ChangeFeed
	if cf.Pollers > 0 {
		fx.delivered = make([]ivals, len(s.parts))
		fx.pollers = make([]poller, cf.Pollers)
		for p := range s.parts {
			pl := &fx.pollers[p%cf.Pollers]
			pl.parts = append(pl.parts, int32(p))
			pl.cursors = append(pl.cursors, hedging.Continuation{Affinity: cf.Continuation})
			pl.maxSeen = append(pl.maxSeen, 0)
		}
		for j := range fx.pollers {
			if len(fx.pollers[j].parts) > 0 {
				s.q.push(event{at: cf.PollInterval * time.Duration(j) / time.Duration(cf.Pollers), kind: evFeed, id: int32(j), sub: feedPoll})
			}
		}
	}
}

// feedSlotOf returns the feed state of op slot, nil when the slot runs no
// feed page.
func (fx *feedSim) slotOf(slot int32) *feedSlot {
	if int(slot) < len(fx.slots) && fx.slots[slot].live {
		return &fx.slots[slot]
	}
	return nil
}

// lag returns how far replica ri lags on partition part at now, as reads
// see it under the consistency level.
func (s *sim) lag(ri int32, part int32, now time.Duration) time.Duration {
	fx := s.fx
	rep := &s.reps[ri]
	if rep.region == fx.hubRegion || fx.cons == Strong {
		return 0
	}
	l := rep.lagNs
	if fx.sigma > 0 && l > 0 {
		z := s.draw(purposeLag, uint64(rep.region), uint64(part), 0).NormFloat64()
		l = msDur(float64(l) / float64(time.Millisecond) * math.Exp(fx.sigma*z))
	}
	for _, e := range fx.lagEps[ri] {
		if now >= e.Start && now < e.End && (len(e.Partitions) == 0 || slices.Contains(e.Partitions, int(part))) {
			l = max(l, msDur(e.LagMs))
		}
	}
	if fx.cons == BoundedStaleness {
		l = min(l, fx.bound)
	}
	return l
}

// visibleAt returns the LSN replica ri has applied on part at now: the
// log's prefix committed before now − its lag, and never less than it
// applied before (a replica whose lag an episode raises stops applying
// until the log catches up; it does not un-apply writes).
func (s *sim) visibleAt(ri int32, part int32) int64 {
	fx := s.fx
	v := fx.logs[part].visible(s.now, s.lag(ri, part, s.now))
	if fx.applied != nil && fx.applied[ri] != nil {
		a := &fx.applied[ri][part]
		v = max(v, *a)
		*a = v
	}
	return v
}

// metaVersion returns the metadata version physical region reg shows at
// now; metaTruth the version itself.
func (fx *feedSim) metaVersion(reg int, now time.Duration) int64 {
	return int64(sort.Search(len(fx.evAt), func(i int) bool { return fx.evAt[i]+fx.metaLag[reg] > now }))
}

func (fx *feedSim) metaTruth(now time.Duration) int64 {
	return int64(sort.Search(len(fx.evAt), func(i int) bool { return fx.evAt[i] > now }))
}

// feedArrive is the feed model's check of an attempt reaching replica ri
// (in place of the session check of replicaArrive): a feed page sent with
// a stale metadata cache is answered 410/1002 (split) or 410/1000
// (recreate) after the refresh the SDK makes before retrying, and a read
// under Session consistency whose token is ahead of the replica gets
// 404/1002. It reports whether it answered.
func (s *sim) feedArrive(ev event, o *opState, st *attemptState, ri int32, rep *replicaRT) bool {
	fx := s.fx
	kind := o.op.Kind
	fs := fx.slotOf(ev.id)
	if kind.IsWrite() || kind == hedging.MetadataRead || fs != nil && fs.setup {
		return false // a setup read (the query plan too) meets no stale cache nor session check
	}
	if fs != nil && (fx.f.Setup.Collection || fx.f.Setup.PKRanges) {
		in := &fx.inst[o.inst]
		if truth := fx.metaTruth(s.now); in.ver >= 0 && in.ver < truth {
			sub := 1002
			if fx.evKind[in.ver] == Recreate {
				sub = 1000
			}
			in.ver = truth
			fx.stats.StaleCacheHits++
			refresh := rep.service[hedging.MetadataRead].Sample(s.draw(purposeRefresh, o.idx, uint64(ri), uint64(st.n))) + rep.rttMs
			s.answer(ev, st, hedging.Result{Status: hedging.Status{Code: 410, SubStatus: sub}}, msDur(refresh))
			return true
		}
	}
	if fx.cons == Session && !st.a.HubRegionProcessingOnly && st.a.SessionLSN > s.visibleAt(ri, o.part) {
		s.answer(ev, st, hedging.Result{Status: hedging.Status{Code: 404, SubStatus: hedging.SubStatusReadSessionNotAvailable}}, 0)
		return true
	}
	return false
}

// feedCharge computes, at service start, what page attempt st of feed
// slot fs gets from rep (into fs.content) and returns its RU charge. fs
// is nil for a loser that reaches service after its race ended: it is
// charged as the page it is (the same rule), and its content is dropped.
func (s *sim) feedCharge(fs *feedSlot, o *opState, st *attemptState, rep *replicaRT) float64 {
	fx := s.fx
	f := fx.f
	kind := o.op.Kind
	var lost pageContent
	c := &lost
	if fs != nil {
		c = &fs.content[st.a.Leg]
		*c = pageContent{}
	}
	region := st.a.Endpoint.Region
	if kind == hedging.MetadataRead { // a setup read
		c.applied = fx.metaVersion(rep.region, s.now)
		c.stale = c.applied < fx.metaTruth(s.now)
		return s.ru[kind]
	}
	c.applied = fx.logs[o.part].total // processed at the hub (§9.6 header)
	if !st.a.HubRegionProcessingOnly {
		c.applied = s.visibleAt(st.rep, o.part)
	}
	c.stale = c.applied < fx.logs[o.part].total
	items := 0
	switch kind {
	case hedging.QueryPage:
		items = f.itemsPerPage()
		if fs == nil {
			break
		}
		cur, _ := strconv.Atoi(o.op.Continuation.Token)
		if next := cur + 1; next < int(fx.ops[fs.fo].leafPages[fs.page.Leaf]) {
			c.cont = hedging.Continuation{Token: strconv.Itoa(next), Affinity: f.QueryContinuation, IssuedBy: region}
		}
	case hedging.ReadManyPage:
		ids, _ := o.op.Request.([]string)
		items = len(ids)
	case hedging.PointRead:
		return s.ru[kind]
	case hedging.ChangeFeedPage:
		cf := &f.ChangeFeed
		off := func(reg int) int64 {
			if cf.Scope == CursorRegionLocal {
				return cf.RegionOffset * int64(reg)
			}
			return 0
		}
		in := o.op.Continuation
		tok, _ := strconv.ParseInt(in.Token, 10, 64)
		g := tok
		if !in.Cold() {
			g = max(0, tok-off(rep.region))
		}
		if c.applied > g {
			n := min(c.applied-g, int64(f.itemsPerPage()))
			c.lo, c.hi, items = g, g+n, int(n)
			c.cont = hedging.Continuation{Token: strconv.FormatInt(g+n+off(rep.region), 10), Affinity: cf.Continuation, IssuedBy: region}
		} else {
			c.notModified = true
			c.cont = in
			if cf.On304 == On304ServerCurrent || in.Cold() {
				c.cont = hedging.Continuation{Token: strconv.FormatInt(c.applied+off(rep.region), 10), Affinity: cf.Continuation, IssuedBy: region}
			}
		}
	}
	if f.RUCover == 0 && f.RUPerItem == 0 {
		return s.ru[kind]
	}
	return f.RUCover + f.RUPerItem*float64(items)
}

// feedResult completes a served attempt's result in the feed model: a
// write commits to the feed log, a read reports the LSN its replica
// applied, and a page carries its page information (a change-feed page
// with nothing new answers 304).
func (s *sim) feedResult(fs *feedSlot, o *opState, st *attemptState, rep *replicaRT, res *hedging.Result, finish time.Duration) {
	fx := s.fx
	kind := o.op.Kind
	switch {
	case kind.IsWrite():
		fx.logs[o.part].commit(finish)
		return
	case !st.a.HubRegionProcessingOnly && fs == nil:
		res.SessionLSN = s.visibleAt(st.rep, o.part)
	}
	if fs == nil {
		return
	}
	c := &fs.content[st.a.Leg]
	res.Page = &hedging.PageInfo{Continuation: c.cont, ServedBy: st.a.Endpoint.Region, AppliedLSN: c.applied}
	if !fs.setup {
		res.SessionLSN = c.applied
	}
	if c.notModified {
		res.Status.Code = 304
	}
}

// startFeedOp turns the operation just drawn in slot into a feed
// operation of kind on partition part (the slot is released; its index
// keys the operation's draws).
func (s *sim) startFeedOp(slot int32, o *opState, kind hedging.OperationKind, part int, client int32) {
	fx := s.fx
	f := fx.f
	idx, tmpl := o.idx, o.op
	inst := int32(0)
	if s.instances > 1 {
		inst = s.instanceOf(idx, part, client)
	}
	o.done = true
	s.maybeFree(slot, o)
	fo := fx.newOp(s.now, kind, idx, inst, client, -1, int32(part))
	op := &fx.ops[fo]
	nparts := len(s.parts)
	var leaves []feed.Leaf
	if kind == hedging.QueryPage {
		k := max(f.FanOut, 1)
		for i := range k {
			p := (part + i) % nparts
			leaves = append(leaves, feed.Leaf{Partition: s.parts[p], Kind: hedging.QueryPage})
			op.leafPart = append(op.leafPart, int32(p))
			pages := 1
			if f.Pages != nil {
				x := math.Round(f.Pages.Sample(s.draw(purposeFeedPages, idx, uint64(i), 0)))
				pages = int(max(1, min(x, float64(f.maxPages()))))
			}
			op.leafPages = append(op.leafPages, int32(pages))
		}
	} else {
		n := len(fx.blankIDs)
		groups := make([]feed.Group, min(n, nparts))
		for g := range groups {
			groups[g] = feed.Group{Partition: s.parts[(part+g)%nparts], IDs: fx.blankIDs[:(n-g+len(groups)-1)/len(groups)]}
		}
		leaves, _ = feed.ReadManyPlan(groups)
		for _, l := range leaves {
			p, _ := strconv.Atoi(l.Partition)
			op.leafPart = append(op.leafPart, int32(p))
			op.leafPages = append(op.leafPages, 1)
		}
	}
	tmpl.Kind, tmpl.Partition = 0, ""
	s.openFeedOp(fo, leaves, tmpl)
}

// newOp returns a fresh feed operation's index.
func (fx *feedSim) newOp(now time.Duration, kind hedging.OperationKind, idx uint64, inst, client, pol, part int32) int32 {
	fo := takeFree(&fx.ops, &fx.freeOps)
	op := &fx.ops[fo]
	*op = feedOp{kind: kind, idx: idx, start: now, inst: inst, client: client, poller: pol, part: part, gen: op.gen + 1,
		leafPart: op.leafPart[:0], leafPages: op.leafPages[:0], leafMax: op.leafMax[:0], stages: op.stages[:0], setupVer: math.MaxInt64}
	return fo
}

// openFeedOp builds operation fo's driver over leaves and its setup stages,
// and schedules its first step.
func (s *sim) openFeedOp(fo int32, leaves []feed.Leaf, tmpl hedging.Operation) {
	fx := s.fx
	f := fx.f
	op := &fx.ops[fo]
	in := &fx.inst[op.inst]
	op.tmpl = tmpl
	cfg := feed.Config{Template: tmpl, Affinity: f.Affinity, MaxConcurrency: f.MaxConcurrency, MaxFanOut: f.fanOutCap(), Gate: in.gate}
	var err error
	nmax := len(leaves)
	if f.HedgeUnit == feed.UnitOperation && op.poller < 0 {
		op.whole, err = feed.NewWhole(s.client(op.inst), leaves, cfg)
		nmax *= 2 // each copy sees its own replicas
	} else {
		op.drv, err = feed.New(s.client(op.inst), leaves, cfg)
	}
	if err != nil {
		op.failed = true
	}
	fx.peakLeaves = max(fx.peakLeaves, nmax)
	op.leafMax = slices.Grow(op.leafMax[:0], nmax)[:nmax]
	clear(op.leafMax)
	if in.ver < 0 {
		if f.Setup.Collection {
			op.stages = append(op.stages, feed.Collection)
		}
		if f.Setup.PKRanges {
			op.stages = append(op.stages, feed.PartitionKeyRanges)
		}
	}
	if f.Setup.QueryPlan && op.kind == hedging.QueryPage {
		op.stages = append(op.stages, feed.QueryPlan)
	}
	s.queueAdvance(fo, s.now)
}

// queueAdvance queues an advance of operation fo at at, stamped with its
// generation so that it is ignored if fo has ended by then.
func (s *sim) queueAdvance(fo int32, at time.Duration) {
	s.q.push(event{at: at, kind: evFeed, id: fo, gen: s.fx.ops[fo].gen, sub: feedAdvance})
}

// client returns fleet instance i's client.
func (s *sim) client(i int32) *hedging.Client {
	if s.instances == 1 {
		return s.client0
	}
	return s.instance(i)
}

// feedEvent handles an evFeed event.
func (s *sim) feedEvent(ev event) {
	switch ev.sub {
	case feedPoll:
		s.startPoll(ev.id)
		return
	}
	op := &s.fx.ops[ev.id]
	if op.gen != ev.gen {
		return // stale: the operation ended
	}
	if ev.sub == feedDue {
		op.due = false
	}
	s.advance(ev.id)
}

// advance runs operation fo's next steps: its setup stages in order, one
// metadata driver each, then its pages; it ends the operation when its
// driver is done.
func (s *sim) advance(fo int32) {
	fx := s.fx
	op := &fx.ops[fo]
	if op.failed {
		s.finishFeedOp(fo)
		return
	}
	for op.stage < len(op.stages) {
		if op.md == nil {
			leaf := feed.MetadataLeaf(op.stages[op.stage], s.parts[op.part], "", "")
			cfg := feed.MetadataConfig(fx.inst[op.inst].mgate)
			if leaf.Kind == hedging.QueryPlan {
				// A data-plane read: the query's own strategy and gate.
				cfg = feed.Config{Template: op.tmpl, Gate: fx.inst[op.inst].gate}
			}
			op.md, _ = feed.New(s.client(op.inst), []feed.Leaf{leaf}, cfg)
		}
		if !op.md.Done() {
			s.pump(fo, op.md, true)
			return
		}
		if op.md.Err() != nil {
			fx.stats.SetupErrors++
			op.failed = true
			s.finishFeedOp(fo)
			return
		}
		op.stage++
		op.md = nil
		if op.stage == len(op.stages) && op.setupVer != math.MaxInt64 {
			fx.inst[op.inst].ver = max(fx.inst[op.inst].ver, op.setupVer)
		}
	}
	if !op.paged {
		op.paged, op.first = true, s.now
	}
	if op.whole != nil {
		s.advanceWhole(fo)
		return
	}
	if !op.drv.Done() {
		s.pump(fo, op.drv, false)
	}
	if op := &fx.ops[fo]; op.drv.Done() {
		s.finishFeedOp(fo)
	}
}

// advanceWhole runs a whole-operation hedge's next steps: it starts every
// page either copy may start now and queues the threshold; once a copy
// won it cancels the other copy's pages in flight (their RU stays
// charged) and ends the operation.
func (s *sim) advanceWhole(fo int32) {
	fx := s.fx
	op := &fx.ops[fo]
	w := op.whole
	for {
		leg, p, ok := w.Next(s.now)
		if !ok {
			break
		}
		s.startPage(fo, p, false, leg)
		op = &fx.ops[fo]
	}
	if at, ok := w.Due(); ok && !op.due {
		op.due = true
		s.q.push(event{at: at, kind: evFeed, id: fo, gen: op.gen, sub: feedDue})
	}
	if !w.Done() {
		return
	}
	if lost, ok := w.Winner(); ok {
		lost ^= 1
		for slot := range fx.slots {
			if fs := &fx.slots[slot]; fs.live && !fs.setup && fs.fo == fo && fs.copy == lost {
				o := &s.ops[slot]
				eff := o.race.Cancel(s.now, feed.ErrCopyLost)
				s.perform(int32(slot), &eff)
			}
		}
	}
	s.finishFeedOp(fo)
}

// pump starts every page drv lets start now.
func (s *sim) pump(fo int32, drv *feed.Driver, setup bool) {
	for {
		p, ok := drv.Next(s.now)
		if !ok {
			return
		}
		s.startPage(fo, p, setup, hedging.Primary)
	}
}

// startPage runs page p of operation fo (of its copy copy, when hedged as
// a whole) as one race in a fresh op slot. Its keyed draws are those of
// (operation, leaf, epoch, page), so every policy sees the same base
// latencies for the same page; the alternate copy of a whole-operation
// hedge draws its own.
func (s *sim) startPage(fo int32, p feed.Page, setup bool, copy hedging.Leg) {
	fx := s.fx
	op := &fx.ops[fo]
	st := uint64(p.Leaf)<<40 | uint64(p.Epoch)<<32 | uint64(p.Seq)
	if setup {
		st |= 1<<63 | uint64(op.stage)<<48
	}
	if copy == hedging.Alternate {
		st |= 1 << 62
	}
	slot, o := s.newSlot(key(purposeFeedPage, op.idx, st, 0)|1<<63, -1)
	o.part = op.part
	if !setup {
		o.part = op.leafPart[p.Leaf]
	}
	o.op = p.Op
	o.inst = op.inst
	o.page, o.poll = true, op.poller >= 0
	for int(slot) >= len(fx.slots) {
		fx.slots = append(fx.slots, feedSlot{})
	}
	fx.slots[slot] = feedSlot{live: true, setup: setup, fo: fo, page: p, copy: copy}
	s.client(op.inst).Begin(&s.eff, &o.race, s.now, &o.op)
	s.perform(slot, &s.eff)
}

// feedPageDone hands a finished page race to its driver (in place of
// complete's recording) and schedules the operation's next step.
func (s *sim) feedPageDone(slot int32, o *opState) {
	fx := s.fx
	fs := &fx.slots[slot]
	out := feed.FromRace(&o.race)
	var c pageContent
	if w, ok := o.race.Winner(); ok {
		c = fs.content[w]
	}
	fo, p, setup := fs.fo, fs.page, fs.setup
	var lose loser
	if setup && out.Err == nil && o.race.AlternateSpawned() {
		l := hedging.Alternate
		if out.Leg == hedging.Alternate {
			l = hedging.Primary
		}
		a := &o.att[l]
		lose = loser{sent: true, leg: l, known: a.respQueued, at: a.respAt, res: a.res, content: fs.content[l]}
	}
	fs.live = false
	st := fx.stats
	us := latencyMicros(o.race.DoneAt() - o.race.Start())
	d, hedgingOn := s.stats.countRace(&o.race)
	st.Races++
	op := &fx.ops[fo]
	switch {
	case out.Err != nil:
	case op.whole != nil && !setup:
		op.copyRU[fs.copy] += o.race.RequestCharge() // the winner's is returned
	default:
		s.returnRU(o, o.race.RequestCharge())
	}
	if out.Err == nil {
		if ri, ok := s.replicaOf(o.race.Endpoint(out.Leg).Key); ok {
			s.stats.ReplicaAnswers[ri]++
		}
	}
	o.done = true
	s.maybeFree(slot, o)
	op.hedged = op.hedged || out.Legs > 1
	op.onThreshold = op.onThreshold || out.Legs > 1 && !(hedgingOn && failoverSpawn(d))
	op.altWon = op.altWon || out.Err == nil && out.Leg == hedging.Alternate
	if setup {
		st.SetupReads++
		if out.Legs > 1 {
			st.SetupReadsHedged++
			if hedgingOn && failoverSpawn(d) {
				st.SetupReadsFailover++
			}
		}
		if op.whole != nil {
			op.whole.NoteSetup(out)
		} else if op.drv != nil {
			op.drv.NoteSetup(out)
		}
		at := s.now
		if del, err := op.md.Deliver(s.now, p, out); err == nil && del.OK && op.stages[op.stage] != feed.QueryPlan {
			if fx.choice != nil && lose.sent {
				c, at = fx.latest(s.now, out.Leg, c, lose)
			}
			if c.stale {
				st.StaleSetupReads++
				if !lose.sent || !lose.known || lose.content.applied <= c.applied {
					st.StaleSetupNoNewer++
				}
			}
			op.setupVer = min(op.setupVer, c.applied)
		}
		s.queueAdvance(fo, at)
		return
	}
	var del feed.Delivery
	var err error
	leaf := p.Leaf
	if op.whole != nil {
		if del, err = op.whole.Deliver(s.now, fs.copy, p, out); err != nil {
			return // a page of the copy that lost, cancelled
		}
		leaf += int(fs.copy) * len(op.leafPart)
	} else {
		del, err = op.drv.Deliver(s.now, p, out)
	}
	_ = st.PageLatency.RecordValue(us)
	if err == nil && del.OK {
		if ri, ok := s.replicaOf(o.race.Endpoint(out.Leg).Key); ok {
			if ri < 64 {
				fx.pageServers |= 1 << ri
			} else {
				fx.manyServers = true
			}
		}
		if op.kind == hedging.QueryPage {
			fx.peakPages = max(fx.peakPages, p.Seq+1)
		}
		if c.stale {
			st.StalePages++
		}
		if c.notModified {
			st.NotModified++
		}
		maxSeen := &op.leafMax[leaf]
		if op.poller >= 0 {
			maxSeen = &fx.pollers[op.poller].maxSeen[p.Leaf]
		}
		if c.applied < *maxSeen {
			st.MonotonicViolations++
		}
		*maxSeen = max(*maxSeen, c.applied)
		if c.hi > c.lo {
			part := op.leafPart[p.Leaf]
			st.Delivered += c.hi - c.lo
			st.Duplicates += fx.delivered[part].add(c.lo, c.hi)
		}
	}
	s.queueAdvance(fo, s.now)
}

// loser is what the simulator knows of the losing leg of a hedged setup
// read: whether its replica served it (known), and then when its answer
// reaches the client and what it says.
type loser struct {
	sent, known bool
	leg         hedging.Leg
	at          time.Duration
	res         hedging.Result
	content     pageContent
}

// latest applies the metadata choice (feed.Choice.Decide) to the winner's
// answer at now (on leg, content c) and the loser's clean answer: it
// returns the chosen content and when the choice is made (the loser's clean
// answer within the grace decides at its arrival; otherwise the grace runs
// out, the loser being pending as far as the client knows).
func (fx *feedSim) latest(now time.Duration, leg hedging.Leg, c pageContent, l loser) (pageContent, time.Duration) {
	answers := []feed.Answer{{At: now, Leg: leg, Result: hedging.Result{Status: hedging.Status{Code: 200}, Page: &hedging.PageInfo{AppliedLSN: c.applied}}}}
	at := now + fx.f.Setup.Grace
	if l.known && l.at <= at && l.res.Err == nil && l.res.Final() && l.res.Status.Code < 400 {
		r := l.res
		r.Page = &hedging.PageInfo{AppliedLSN: l.content.applied}
		answers = append(answers, feed.Answer{At: l.at, Leg: l.leg, Result: r})
		at = max(now, l.at)
	}
	if i, ok := fx.choice.Decide(at, answers, false); ok && i == 1 {
		c = l.content
	}
	return c, at
}

// finishFeedOp records operation fo and releases it; a poll saves its
// cursors and schedules the next, a closed-loop client thinks.
func (s *sim) finishFeedOp(fo int32) {
	fx := s.fx
	op := &fx.ops[fo]
	st := fx.stats
	ks := &st.Kinds[feedKindIndex(op.kind)]
	ks.Ops++
	lat := s.now - op.start
	var le *feed.LeafError
	drvs := [2]*feed.Driver{op.drv}
	var opErr error
	switch w := op.whole; {
	case w != nil:
		drvs = [2]*feed.Driver{w.Copy(hedging.Primary), w.Copy(hedging.Alternate)}
		opErr = w.Err()
		// The operation's setup reads raced on their own (feedPageDone):
		// what they did is kept, and the copies' hedge added to it.
		op.hedged = op.hedged || w.Spawned()
		op.onThreshold = op.onThreshold || w.Spawned() // the second copy starts at the threshold
		if leg, ok := w.Winner(); ok {
			op.altWon = op.altWon || leg == hedging.Alternate
			s.stats.RUReturned += op.copyRU[leg]
		}
	case op.drv != nil:
		opErr = op.drv.Err()
	}
	failed := op.failed || drvs[0] == nil || opErr != nil
	if failed {
		ks.Errors++
	}
	if op.poller < 0 { // a workload operation; a poll is background
		win := s.recordOp(op.kind, op.start, lat)
		switch {
		case !failed:
		case errors.As(opErr, &le) && le.Err == nil:
			s.stats.finalError(le.Status) // a leaf's page ended with a final status >= 400
			s.recordFailed(op.kind, win)
		default:
			s.stats.Errors++
			s.recordFailed(op.kind, win)
		}
		if op.hedged {
			s.stats.Hedged++
			win.Hedged++
			if !op.onThreshold {
				s.stats.FailoverHedged++
			}
		}
		if op.altWon {
			s.stats.AlternateWins++
		}
		if s.progress != nil {
			s.progress.Add(1)
		}
	}
	setup := lat
	if op.paged {
		setup = op.first - op.start
	}
	ks.TotalSum += lat
	ks.SetupSum += setup
	_ = ks.Latency.RecordValue(latencyMicros(lat))
	for _, drv := range drvs {
		if drv == nil {
			continue
		}
		d := drv.Diagnostics()
		st.Pages += int64(d.Pages)
		st.PagesHedged += int64(d.PagesHedged)
		st.AlternateWins += int64(d.AlternateWins)
		st.RegionSwitches += int64(d.RegionSwitches)
		st.PagesPinned += int64(d.PagesPinned)
		st.PagesGated += int64(d.PagesGated)
		st.ColdRestarts += int64(d.ColdRestarts)
		st.Resumes += int64(d.Resumes)
		st.SetupContacts += int64(d.SetupContacts)
	}
	if pi := op.poller; pi >= 0 {
		pl := &fx.pollers[pi]
		if op.drv != nil {
			for i := range pl.cursors {
				pl.cursors[i] = op.drv.Continuation(i)
			}
		}
		if next := s.now + s.cfg.Feed.ChangeFeed.PollInterval; s.acceptingArrivals(next) {
			s.q.push(event{at: next, kind: evFeed, id: pi, sub: feedPoll})
		}
	}
	client := op.client
	op.drv, op.md, op.whole, op.tmpl = nil, nil, nil, hedging.Operation{}
	op.gen++ // every event still queued for it is stale
	fx.freeOps = append(fx.freeOps, fo)
	if client >= 0 {
		s.think(client)
	}
}

// startPoll starts poller pi's next poll: one change-feed operation over
// its partitions, each leaf resuming at its cursor.
func (s *sim) startPoll(pi int32) {
	fx := s.fx
	pl := &fx.pollers[pi]
	if !s.acceptingArrivals(s.now) {
		return
	}
	idx := 1<<62 | uint64(pi)<<32 | pl.polls
	pl.polls++
	inst := pi % s.instances
	fo := fx.newOp(s.now, hedging.ChangeFeedPage, idx, inst, -1, pi, pl.parts[0])
	op := &fx.ops[fo]
	leaves := make([]feed.Leaf, len(pl.parts))
	for i, p := range pl.parts {
		leaves[i] = feed.Leaf{Partition: s.parts[p], Kind: hedging.ChangeFeedPage, Start: pl.cursors[i]}
		op.leafPart = append(op.leafPart, p)
		op.leafPages = append(op.leafPages, 0)
	}
	s.openFeedOp(fo, leaves, hedging.Operation{Timeout: s.cfg.OperationTimeout})
}

// finishFeed completes the run's feed measurements: the changes committed
// on the polled partitions and the skips (LSNs below a partition's
// highest delivered that no poll delivered).
func (s *sim) finishFeed() {
	fx := s.fx
	st := fx.stats
	if fx.f != nil && len(fx.pollers) > 0 {
		for p := range fx.delivered {
			st.Changes += fx.logs[p].total
			st.Skips += fx.delivered[p].holes()
		}
	}
	for _, in := range fx.inst {
		if in.gate != nil {
			st.PeakLegsInFlight = max(st.PeakLegsInFlight, int64(in.gate.Peak()))
		}
	}
	s.stats.Feed = st
}

// feedKindIndex maps a feed operation's kind to its FeedStats.Kinds index.
func feedKindIndex(k hedging.OperationKind) int {
	switch k {
	case hedging.QueryPage:
		return FeedQuery
	case hedging.ReadManyPage:
		return FeedReadMany
	}
	return FeedChangeFeed
}
