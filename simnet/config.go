package simnet

import (
	"errors"
	"fmt"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet/dist"
)

// Endpoint is one entry of the account's preferred read-region list as the
// client sees it: a region name and the physical replica it resolves to.
// Two endpoints naming the same Replica alias it (spec §6.4.1).
type Endpoint struct {
	Region  string // region name as listed in the preferred list and ExcludeRegions
	Replica string // name of the physical replica (Replica.Name)
}

// Replica is one physical replica of the account's data.
type Replica struct {
	Name string
	// Region is the physical region the replica is in: it selects the RTT
	// from the client and the replication lag.
	Region string
	// Servers is the number of concurrent requests it serves; 0 means
	// unlimited (no queueing). Beyond Servers, requests wait in FIFO order.
	Servers int
	// Service is the service time (ms) per operation kind; kinds without an
	// entry use Default.
	Service map[hedging.OperationKind]dist.Sampler
	// Default is the service time (ms) for kinds not in Service. Required.
	Default dist.Sampler
	// QueueLimit bounds the requests waiting beyond Servers (client
	// attempts and background requests alike; requests whose cancellation
	// has reached the replica do not count); 0 = unbounded. A request
	// arriving when all servers are busy and QueueLimit requests wait is
	// refused at once with OverflowStatus. Ignored when Servers is 0.
	QueueLimit int
	// OverflowStatus answers a request refused by a full queue; the zero
	// value means 503. How the client treats it is hedging's
	// classification.
	OverflowStatus hedging.Status
	// Cancel is what a client cancellation does when it reaches the
	// replica (default CancelQueued).
	Cancel CancelMode
}

// Targeted reports whether target — an episode's, fault rule's or
// background source's Target — selects r: target is r's name or its
// physical region (every replica in it).
func (r *Replica) Targeted(target string) bool { return target == r.Name || target == r.Region }

// Episode is a time window in which replicas get slower and/or fail.
type Episode struct {
	Label string
	// Target selects the replicas: a replica name, or a physical region name
	// (every replica in it).
	Target string
	// Start and End bound the episode in virtual time.
	Start, End time.Duration
	// RampUp and RampDown linearly ramp the effect in after Start and out
	// before End; 0 = instantaneous.
	RampUp, RampDown time.Duration
	// Factor multiplies the service time (1 = unchanged) and AddMs adds to it
	// (ms), both scaled by the ramp.
	Factor float64
	AddMs  float64
	// Fraction of requests affected (0 or 1 = all).
	Fraction float64
	// FailRate is the probability that an affected request fails with
	// FailStatus (default 503) instead of being served.
	FailRate   float64
	FailStatus hedging.Status
}

// Fault is a fault-injection rule evaluated when an attempt reaches a
// replica.
type Fault struct {
	Status      hedging.Status
	Probability float64
	// Targets are replica names or physical regions; empty = all replicas.
	Targets []string
	// Kinds restricts the rule to operation kinds; empty = all.
	Kinds []hedging.OperationKind
	// Start and End bound the rule in virtual time; End 0 = forever.
	Start, End time.Duration
	// LatencyMs is how long the replica takes to answer with the fault.
	LatencyMs float64
	// FirstAttemptOnly restricts the rule to the first attempt of each leg.
	FirstAttemptOnly bool
	// Partitions restricts the rule to these partition indexes (0 ..
	// Workload.Partitions-1; with Zipf keys 0 is the hottest); empty = all.
	Partitions []int
}

// MixEntry is one operation kind of the workload with its weight.
type MixEntry struct {
	Kind   hedging.OperationKind
	Weight float64
}

// Workload describes the operations the client issues.
type Workload struct {
	// RatePerSec > 0 selects open-loop Poisson arrivals at that rate.
	RatePerSec float64
	// RateChanges, with RatePerSec > 0, vary the open-loop rate over time
	// in steps and linear ramps (see [RateChange]); empty = constant.
	RateChanges []RateChange
	// Clients > 0 (with RatePerSec 0) selects a closed loop of that many
	// clients, each waiting Think (ms) between operations.
	Clients int
	Think   dist.Sampler
	// Mix is the operation mix (weights need not sum to 1). Empty = reads.
	Mix []MixEntry
	// Partitions is the number of partition key ranges (default 1); keys
	// are uniform, or Zipf with exponent ZipfS when ZipfS > 1.
	Partitions int
	ZipfS      float64
	// ExcludeFraction of operations carry ExcludeRegions = Exclude.
	ExcludeFraction float64
	Exclude         []string
	// DisabledFraction of operations set the per-operation Disabled strategy.
	DisabledFraction float64
}

// RUBudget is a provisioned-throughput budget per partition and physical
// region: a token bucket of RUPerSec (burst Burst RU); a request arriving
// when the bucket holds less than its charge gets 429/3200.
type RUBudget struct {
	RUPerSec float64
	Burst    float64
}

// ThroughputControl is the client's local throughput-control gate: a token
// bucket of RUPerSec (burst Burst RU); an attempt sent when the bucket holds
// less than its charge gets a local 429 at once, never reaching the network
// (spec §9.3).
type ThroughputControl struct {
	RUPerSec float64
	Burst    float64
}

// Policy is one threshold policy under comparison. New builds a fresh
// client-layer strategy for each run (policies keep state).
type Policy struct {
	Name string
	New  func() (hedging.AvailabilityStrategy, error)
}

// Config is one simulated scenario, without the policies.
type Config struct {
	Seed uint64
	// Duration is the virtual time during which operations arrive; MaxOps
	// caps the number of operations. At least one is required; the run ends
	// when arrivals have stopped and every operation has finished.
	Duration time.Duration
	MaxOps   int64
	// ClientRegion is the physical region of the client.
	ClientRegion string
	// Endpoints is the preferred read-region list in order.
	Endpoints []Endpoint
	// WriteRegion is the single-master write (hub) region: a region name in
	// Endpoints. Empty with MultiMaster false means the first endpoint.
	WriteRegion string
	MultiMaster bool
	Replicas    []Replica
	// RTTMs[from][to] is the round-trip time in ms between physical
	// regions; the client uses RTTMs[ClientRegion][replica.Region], the hub
	// forwarding RTTMs[replica.Region][hub]. Same-region pairs default to
	// SameRegionRTTMs. A retry's round trip (with Jitter) shorter than
	// 2 µs is taken as 2 µs (1 µs each way), so a retry never reaches the
	// replica at the instant it refused the attempt before.
	RTTMs           map[string]map[string]float64
	SameRegionRTTMs float64
	// Jitter is added to every attempt's round trip (ms); nil = none.
	Jitter dist.Sampler
	// ReplicationLagMs is how far behind the hub each physical region's
	// replicas apply writes (ms).
	ReplicationLagMs map[string]float64
	Episodes         []Episode
	Faults           []Fault
	// Background is load from other tenants (or failover traffic) at the
	// replicas: not hedged, not the client's operations (see Background).
	Background []Background
	Workload   Workload
	// RU is the charge per operation kind (default 1 RU for reads, 5 for
	// writes, 10 for query pages).
	RU                map[hedging.OperationKind]float64
	RUBudget          *RUBudget
	ThroughputControl *ThroughputControl
	// OperationTimeout is each operation's end-to-end deadline (0 = none).
	OperationTimeout time.Duration
	// Client holds the hedging client's settings (request timeout, phase,
	// retries, breaker, location marks, ...), passed unchanged to
	// hedging.NewClient for every client of the run; zero fields take
	// hedging's defaults. The run sets its Regions, WriteRegion and
	// MultiMaster from Endpoints, WriteRegion and MultiMaster above (see
	// [Config.ClientEndpoints]) and its Strategy from the policy under
	// comparison; whatever Client holds in those four fields is ignored.
	Client hedging.Config
	// TimelineWindow is the width of one timeline bucket (default
	// Duration/120, at least 1 s).
	TimelineWindow time.Duration
	// Fleet is the number of client instances the workload is spread over
	// and how operations are assigned to them; the zero value is one
	// instance.
	Fleet Fleet
	// Feed, when set, runs queries and ReadMany calls page by page and adds
	// change-feed pollers (feed.go); nil keeps every operation one race.
	Feed *Feed
	// Consistency is the read consistency level (default Session, the
	// model of runs without it); StalenessBound clamps every replica's lag
	// under BoundedStaleness.
	Consistency    Consistency
	StalenessBound time.Duration
	// Lag, when set, makes replication lag a process per (region,
	// partition) with episodes; nil = ReplicationLagMs, constant.
	Lag *LagProcess
}

// MinErrorStatus and MaxErrorStatus bound the statuses an injected fault,
// an episode's failure or a full queue may answer with: error statuses.
const (
	MinErrorStatus = 400
	MaxErrorStatus = 599
)

// MaxOpsLimit is the largest number of operations one run may simulate
// (resource guard); a Config asking for more, directly or through
// Duration × rate, is refused.
const MaxOpsLimit = 2_000_000_000

// Validate checks the configuration and returns the first problem, naming
// the field. Scenario files are validated with file and line before they
// get here; this guards programmatic use.
func (c *Config) Validate() error {
	if c.Duration <= 0 && c.MaxOps <= 0 {
		return errors.New("simnet: need Duration or MaxOps")
	}
	if len(c.Endpoints) == 0 {
		return errors.New("simnet: Endpoints is empty")
	}
	reps := map[string]bool{}
	for i, r := range c.Replicas {
		if r.Name == "" || r.Region == "" {
			return fmt.Errorf("simnet: Replicas[%d]: name and region required", i)
		}
		if reps[r.Name] {
			return fmt.Errorf("simnet: Replicas[%d]: duplicate replica %q", i, r.Name)
		}
		if r.Default == nil {
			return fmt.Errorf("simnet: replica %q: Default service time required", r.Name)
		}
		if r.Servers < 0 {
			return fmt.Errorf("simnet: replica %q: Servers must be >= 0", r.Name)
		}
		reps[r.Name] = true
	}
	regions := map[string]bool{}
	for i, e := range c.Endpoints {
		if !reps[e.Replica] {
			return fmt.Errorf("simnet: Endpoints[%d] (%s): unknown replica %q", i, e.Region, e.Replica)
		}
		if regions[e.Region] {
			return fmt.Errorf("simnet: Endpoints[%d]: region %q listed twice", i, e.Region)
		}
		regions[e.Region] = true
	}
	if c.WriteRegion != "" && !regions[c.WriteRegion] {
		return fmt.Errorf("simnet: WriteRegion %q is not in Endpoints", c.WriteRegion)
	}
	w := c.Workload
	if w.RatePerSec <= 0 && w.Clients <= 0 {
		return errors.New("simnet: Workload needs RatePerSec or Clients")
	}
	if err := w.validateRateChanges(); err != nil {
		return err
	}
	if c.endless() {
		return errors.New("simnet: Workload.RateChanges end at rate 0 and there is no Duration: MaxOps is never reached")
	}
	if w.RatePerSec > 0 && c.Duration > 0 && c.MaxOps <= 0 {
		if n := w.maxRate() * c.Duration.Seconds(); n > MaxOpsLimit {
			return fmt.Errorf("simnet: %.3g operations (rate × duration) exceeds the limit of %d", n, int64(MaxOpsLimit))
		}
	}
	if c.MaxOps > MaxOpsLimit {
		return fmt.Errorf("simnet: MaxOps %d exceeds the limit of %d", c.MaxOps, int64(MaxOpsLimit))
	}
	if w.Clients > 0 && w.Think == nil {
		return errors.New("simnet: a closed-loop workload needs Think")
	}
	if err := c.validateCapacity(); err != nil {
		return err
	}
	if err := c.validateFeed(); err != nil {
		return err
	}
	if err := c.Fleet.validate(); err != nil {
		return err
	}
	if err := c.validateRU(); err != nil {
		return err
	}
	return c.validateWork()
}

// ClientEndpoints returns the client's preferred read regions as
// hedging endpoints (region and replica key, in preference order) and the
// account's write region (WriteRegion, or the first endpoint's region when
// unset), as every client of the run is configured with them. It needs at
// least one endpoint (Validate checks that).
func (c *Config) ClientEndpoints() ([]hedging.Endpoint, hedging.Region) {
	eps := make([]hedging.Endpoint, len(c.Endpoints))
	for i, e := range c.Endpoints {
		eps[i] = hedging.Endpoint{Region: hedging.Region(e.Region), Key: e.Replica}
	}
	write := c.WriteRegion
	if write == "" && len(c.Endpoints) > 0 {
		write = c.Endpoints[0].Region
	}
	return eps, hedging.Region(write)
}
