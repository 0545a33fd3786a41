package scenarios

import "hedgelab/simnet/dist"

// File is the decoded content of one scenario file, exactly as written
// (defaults are applied by [Scenario.Config], not here). Every field is
// documented with its unit and default in scenarios/README.md. Pointer
// fields distinguish an absent key (nil: take the default) from an explicit
// value, which must then be valid.
type File struct {
	Name        string `toml:"name"`        // required, [a-z0-9-]+ (no leading dash); names the output directory
	Description string `toml:"description"` // free text, shown by `hedgesim list`
	// Seed of the run, >= 0 (TOML integers are signed 64-bit).
	Seed int64 `toml:"seed"`
	// DurationS is the virtual time of arrivals in seconds; MaxOps caps the
	// number of operations. At least one must be > 0.
	DurationS float64 `toml:"duration_s"`
	MaxOps    int64   `toml:"max_ops"`
	// Replications is the number of independent replications, >= 1;
	// default 1.
	Replications *int `toml:"replications"`
	// TimelineWindowS is the width of one timeline window in seconds, > 0;
	// default max(L/120, 1) where L is the run's expected length:
	// duration_s, or less when max_ops is reached first (max_ops /
	// rate_per_s, or max_ops × mean think time / clients).
	TimelineWindowS *float64 `toml:"timeline_window_s"`

	Client            Client             `toml:"client"`
	Account           Account            `toml:"account"`
	Endpoints         []Endpoint         `toml:"endpoints"`
	Replicas          []Replica          `toml:"replicas"`
	Network           Network            `toml:"network"`
	Episodes          []Episode          `toml:"episodes"`
	Faults            []Fault            `toml:"faults"`
	Background        []Background       `toml:"background"`
	Workload          Workload           `toml:"workload"`
	RU                map[string]float64 `toml:"ru"` // RU charge per operation kind name, >= 0
	RUBudget          *TokenBucket       `toml:"ru_budget"`
	ThroughputControl *TokenBucket       `toml:"throughput_control"`
	Policies          []Policy           `toml:"policies"`
	Fleet             Fleet              `toml:"fleet"`
	Feed              *Feed              `toml:"feed"` // feed workloads (feed.go)
	Lag               *Lag               `toml:"lag"`  // replication lag per (region, partition) (feed.go)
}

// Fleet is the [fleet] table: the client instances the workload is spread
// over (simnet.Fleet).
type Fleet struct {
	Instances  *int   `toml:"instances"`  // 1..100000; default 1
	Assignment string `toml:"assignment"` // uniform (default) | partition
}

// Client is the [client] table: where the client runs and the hedging
// client's options. Zero values select the hedging package defaults.
type Client struct {
	Region                       string  `toml:"region"`                          // physical region of the client; required
	RequestTimeoutMs             float64 `toml:"request_timeout_ms"`              // ms, >= 0; 0 = unset
	OperationTimeoutMs           float64 `toml:"operation_timeout_ms"`            // ms, >= 0; 0 = no deadline
	ConsecutiveHedgeWinThreshold int     `toml:"consecutive_hedge_win_threshold"` // >= 0; 0 = default 5
	ProbeIntervalS               float64 `toml:"probe_interval_s"`                // s, >= 0; 0 = default 30
	HedgeWinMinSpanMs            float64 `toml:"hedge_win_min_span_ms"`           // ms; 0 = hedging.DefaultHedgeWinMinSpan (1000); negative = count only (spec §9.5)
	UnavailableForS              float64 `toml:"unavailable_for_s"`               // s, >= 0; 0 = default 5
	UnavailableAfter             int     `toml:"unavailable_after"`               // 0..1000; consecutive 503s that mark (partition, endpoint); 0 = default 1
	Phase                        int     `toml:"phase"`                           // 1, 2 or 3 (future); 0 = 1
	RetryMaxAttempts             int     `toml:"retry_max_attempts"`              // 0..100; 0 = default 3
	RetryThrottleBackoffMs       float64 `toml:"retry_throttle_backoff_ms"`       // ms, >= 0; 0 = default 5
}

// Account is the [account] table.
type Account struct {
	// WriteRegion is a region name from [[endpoints]]; empty = the first
	// endpoint.
	WriteRegion string `toml:"write_region"`
	MultiMaster bool   `toml:"multi_master"`
	// Consistency is the read consistency level: session (default),
	// eventual, consistent_prefix, bounded_staleness or strong.
	Consistency string `toml:"consistency"`
	// StalenessBoundMs clamps every replica's lag (ms, > 0); only and
	// required with bounded_staleness.
	StalenessBoundMs float64 `toml:"staleness_bound_ms"`
}

// Endpoint is one [[endpoints]] entry of the preferred read-region list.
type Endpoint struct {
	Region  string `toml:"region"`  // region name as the client sees it; unique
	Replica string `toml:"replica"` // a [[replicas]] name
}

// Replica is one [[replicas]] entry: a physical replica.
type Replica struct {
	Name    string `toml:"name"`    // unique, [A-Za-z0-9_-]+
	Region  string `toml:"region"`  // physical region
	Servers int    `toml:"servers"` // concurrent requests served, 0..1e6; 0 = unlimited
	// Service is the service time (ms) of every operation kind; required.
	Service *dist.Spec `toml:"service"`
	// ServiceByOp overrides Service per operation kind name.
	ServiceByOp map[string]dist.Spec `toml:"service_by_op"`
	// QueueLimit bounds the requests waiting beyond servers, 0..1e6;
	// 0 = unbounded. Needs servers > 0.
	QueueLimit int `toml:"queue_limit"`
	// OverflowStatus answers a request refused by a full queue: "503"
	// (default), "429/3200" or "408". Needs queue_limit > 0.
	OverflowStatus string `toml:"overflow_status"`
	// Cancel is what a cancellation does at the replica: "queued"
	// (default), "in_service", "none" or "on_start" (tied requests: a
	// copy starting service here cancels the other leg's copy).
	Cancel string `toml:"cancel"`
}

// Background is one [[background]] entry: load from other tenants (or
// failover traffic) at replicas, not hedged and not measured as the
// client's operations.
type Background struct {
	Target   string     `toml:"target"`     // replica name or physical region (every replica in it); required
	RatePerS float64    `toml:"rate_per_s"` // arrivals per second at each targeted replica, > 0; required
	Service  *dist.Spec `toml:"service"`    // service time (ms); absent = the replica's service
	StartS   float64    `toml:"start_s"`    // s, >= 0
	EndS     *float64   `toml:"end_s"`      // s, > start_s and <= duration_s; absent = the run's end
	// Retries is how many times a request refused by a full queue is
	// retried, 0..10 (default 0: dropped).
	Retries int `toml:"retries"`
	// RetryBackoffMs is the first retry's mean backoff (ms), > 0; absent
	// = 100; only with retries > 0.
	RetryBackoffMs *float64 `toml:"retry_backoff_ms"`
}

// Network is the [network] table.
type Network struct {
	// SameRegionRTTMs is the round trip within one physical region (ms),
	// >= 0; default 1.
	SameRegionRTTMs *float64 `toml:"same_region_rtt_ms"`
	// Jitter is added to every attempt's round trip (ms); absent = none.
	Jitter *dist.Spec `toml:"jitter"`
	// RTTMs[from][to] is the round trip between physical regions (ms);
	// a missing direction falls back to the other one.
	RTTMs map[string]map[string]float64 `toml:"rtt_ms"`
	// ReplicationLagMs is how far each physical region's replicas lag the
	// write region (ms).
	ReplicationLagMs map[string]float64 `toml:"replication_lag_ms"`
}

// Episode is one [[episodes]] entry: a time window in which replicas get
// slower and/or fail.
type Episode struct {
	Label         string   `toml:"label"`          // shown in reports; default "episode <index>"
	Target        string   `toml:"target"`         // replica name or physical region; required
	StartS        float64  `toml:"start_s"`        // s, >= 0
	EndS          float64  `toml:"end_s"`          // s, > start_s
	RampUpS       float64  `toml:"ramp_up_s"`      // s, >= 0
	RampDownS     float64  `toml:"ramp_down_s"`    // s, >= 0; ramp_up_s + ramp_down_s <= end_s - start_s
	Factor        *float64 `toml:"factor"`         // service-time multiplier, >= 0; default 1 (0 also means unchanged)
	AddMs         float64  `toml:"add_ms"`         // ms added to the service time, >= 0
	Fraction      float64  `toml:"fraction"`       // share of requests affected, 0..1; 0 = all
	FailRate      float64  `toml:"fail_rate"`      // probability an affected request fails, 0..1
	FailStatus    int      `toml:"fail_status"`    // 400..599; default 503
	FailSubstatus int      `toml:"fail_substatus"` // >= 0
}

// Fault is one [[faults]] entry: a fault-injection rule.
type Fault struct {
	Status           int      `toml:"status"`             // 400..599; default 503
	Substatus        int      `toml:"substatus"`          // >= 0
	Probability      float64  `toml:"probability"`        // 0..1
	Targets          []string `toml:"targets"`            // replica names or physical regions; empty = all
	Operations       []string `toml:"operations"`         // operation kind names; empty = all
	StartS           float64  `toml:"start_s"`            // s, >= 0
	EndS             float64  `toml:"end_s"`              // s; 0 = forever, else > start_s
	LatencyMs        float64  `toml:"latency_ms"`         // ms until the fault answers, >= 0
	FirstAttemptOnly bool     `toml:"first_attempt_only"` // only the first attempt of each leg
	Partitions       []int    `toml:"partitions"`         // partition indexes 0..workload.partitions-1; empty = all
}

// Workload is the [workload] table.
type Workload struct {
	RatePerS         float64            `toml:"rate_per_s"`        // open loop: Poisson arrivals per second
	Clients          int                `toml:"clients"`           // closed loop: number of clients, 0..1e6
	Think            *dist.Spec         `toml:"think"`             // closed loop: think time (ms); required with clients
	Mix              map[string]float64 `toml:"mix"`               // kind name -> weight > 0; default all reads
	Partitions       int                `toml:"partitions"`        // 1..1e6; 0 = 1
	ZipfS            float64            `toml:"zipf_s"`            // 0 = uniform keys, else Zipf exponent > 1
	ExcludeFraction  float64            `toml:"exclude_fraction"`  // 0..1
	ExcludeRegions   []string           `toml:"exclude_regions"`   // endpoint region names
	DisabledFraction float64            `toml:"disabled_fraction"` // 0..1
	RateChanges      []RateChange       `toml:"rate_changes"`      // open loop: steps and ramps of rate_per_s
}

// RateChange is one [[workload.rate_changes]] entry: from at_s the
// open-loop rate moves linearly over ramp_s (0 = a step) to rate_per_s
// (simnet.RateChange). Entries are in time order and do not overlap.
type RateChange struct {
	AtS      float64 `toml:"at_s"`       // s, >= 0; required
	RampS    float64 `toml:"ramp_s"`     // s, >= 0; 0 = a step
	RatePerS float64 `toml:"rate_per_s"` // >= 0; the rate reached at at_s + ramp_s
}

// TokenBucket is the [ru_budget] or [throughput_control] table.
type TokenBucket struct {
	RUPerS float64 `toml:"ru_per_s"` // refill rate in RU/s, > 0
	Burst  float64 `toml:"burst"`    // bucket size in RU, >= 0; 0 = ru_per_s
}

// Policy is one [[policies]] entry: a threshold policy under comparison.
// Which optional keys apply to which type is the table policyTypes in
// build.go; scenarios/README.md documents every key with its unit and
// default. Absent keys (nil) take the type's default.
type Policy struct {
	Name string `toml:"name"` // unique, [A-Za-z0-9_-]+
	// Type is disabled | static | driver_default | p99_dynamic |
	// capped_quantile | backup_requests | retry_throttle.
	Type string `toml:"type"`

	ThresholdMs *float64 `toml:"threshold_ms"` // static, retry_throttle: ms, > 0; required

	// The quantile family (p99_dynamic, capped_quantile, backup_requests).
	Quantile         *float64 `toml:"quantile"`          // (0,1); default 0.99
	WindowS          *float64 `toml:"window_s"`          // s, > 0; default 60
	Buckets          *int     `toml:"buckets"`           // 1..1000; default 6
	MinMs            *float64 `toml:"min_ms"`            // ms, > 0; default 50
	MaxMs            *float64 `toml:"max_ms"`            // ms, >= min_ms; default 4000
	InitialMs        *float64 `toml:"initial_ms"`        // ms, > 0; default min_ms (1000 with preset tps_literal)
	MinSamples       *int     `toml:"min_samples"`       // >= 1; default 100
	RefreshS         *float64 `toml:"refresh_s"`         // s, > 0; default 1
	RelativeAccuracy *float64 `toml:"relative_accuracy"` // (0,1); default 0.01
	// Preset "tps_literal" selects TPS §4.2 as written for initial_ms (1 s)
	// and the five options below; an explicit key overrides it.
	Preset        *string  `toml:"preset"`
	Rounding      *string  `toml:"rounding"`       // upper_edge (default) | value
	ThinWindow    *string  `toml:"thin_window"`    // keep_last (default) | initial
	Warmup        *string  `toml:"warmup"`         // max_observed (default) | initial
	Censored      *string  `toml:"censored"`       // lower_bound (default) | ignore
	Ceiling       *string  `toml:"ceiling"`        // median (default) | none
	CeilingFactor *float64 `toml:"ceiling_factor"` // >= 1; default 2.5

	CapMs          *float64 `toml:"cap_ms"`            // capped_quantile: ms, > 0; required
	MaxExtraLoad   *float64 `toml:"max_extra_load"`    // backup_requests: (0,1); default 0.05
	MinBackupsPerS *float64 `toml:"min_backups_per_s"` // backup_requests: >= 0; default 1
	MaxTokens      *float64 `toml:"max_tokens"`        // retry_throttle: [2, 1000]; default 10
	TokenRatio     *float64 `toml:"token_ratio"`       // retry_throttle: (0,1]; default 0.1

	// HedgeBudget caps the hedge rate of static, driver_default, p99_dynamic
	// and capped_quantile with a token bucket (threshold.Budget, the
	// strategy's gate beside the policy): at most this many latency hedges
	// per operation over time, (0,1]; absent = no budget. The budget gates each hedge when its threshold fires
	// (admitted and charged at once); a spent budget sends none.
	// HedgeBudgetBurst is the bucket size in tokens (> 0, fractional
	// allowed, default 100; also backup_requests' bucket);
	// HedgeBudgetBurstS instead sizes it in seconds of the instance's own
	// budget (> 0; the bucket starts empty), which bounds a fleet's burst
	// at any fleet size. HedgeBudgetChargeFailover (default false)
	// makes failover alternates spend tokens too; HedgeBudgetDebt (default
	// false) lets those charges push the balance below zero, as before
	// issue 9.
	HedgeBudget               *float64 `toml:"hedge_budget"`
	HedgeBudgetBurst          *float64 `toml:"hedge_budget_burst"`
	HedgeBudgetBurstS         *float64 `toml:"hedge_budget_burst_s"`
	HedgeBudgetChargeFailover *bool    `toml:"hedge_budget_charge_failover"`
	HedgeBudgetDebt           *bool    `toml:"hedge_budget_debt"`
}
