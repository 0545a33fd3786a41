package hedging

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"sync/atomic"
	"time"
)

// RetryOptions configure the per-leg retry layer (spec §8.4).
type RetryOptions struct {
	// MaxAttempts is the number of transport attempts one leg may make,
	// retries included; 1 disables retries. Default 3.
	MaxAttempts int
	// ThrottleBackoff is the pause before retrying a 429 when the response
	// carries no retry-after; default 5 ms.
	ThrottleBackoff time.Duration
	// MaxRetryAfter caps the wait before retrying a 429: the larger of its
	// retry-after and ThrottleBackoff. A 429 whose wait exceeds it, or
	// whose wait would not end before the operation's deadline (§9.4), is
	// not retried: the leg ends on that 429 at once. Default
	// [DefaultMaxRetryAfter].
	MaxRetryAfter time.Duration
}

// DefaultMaxRetryAfter is the default of RetryOptions.MaxRetryAfter: 30 s,
// the Cosmos DB SDKs' default for the time they wait on throttled requests
// (MaxRetryWaitTimeOnRateLimitedRequests).
const DefaultMaxRetryAfter = 30 * time.Second

func (o *RetryOptions) setDefaults() {
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 3
	}
	if o.ThrottleBackoff == 0 {
		o.ThrottleBackoff = 5 * time.Millisecond
	}
	if o.MaxRetryAfter == 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
}

// Config configures a [Client]: the account's regions, the client layer of
// the availability strategy and everything the race's shared state needs.
type Config struct {
	// Regions is the application's preferred read-region list in preference
	// order, each with the key of the physical endpoint it resolves to
	// (§5.2 precondition 2, §6.2). Required for hedging. NewClient copies
	// it: changing the slice afterwards changes no client.
	Regions []Endpoint
	// WriteRegion is the single-master account's write (hub) region, where
	// writes go; empty means writes follow Regions.
	WriteRegion Region
	// MultiMaster marks a multi-write account: writes follow Regions and the
	// hub-region latch is never wired (§9.6.3).
	MultiMaster bool
	// Strategy is the client (runtime) layer of the availability strategy
	// (§11.3.1 priority 2). The zero value defers to the driver default.
	Strategy AvailabilityStrategy
	// HedgingEnabled holds the Account and Runtime layers of the master
	// switch; the Env layers come from Env and the Operation layer from each
	// Operation.
	HedgingEnabled HedgingEnabledLayers
	// Env is the environment as read once at build time (see [LoadEnv]).
	Env EnvConfig
	// RequestTimeout feeds the driver default threshold (§5.2); 0 = unset.
	RequestTimeout time.Duration
	// Phase is the phase-allowed operation set (§5.1 row 3); 0 = Phase1.
	Phase PhaseSet
	// Retry configures each leg's local retries.
	Retry RetryOptions
	// ConsecutiveHedgeWinThreshold trips the partition breaker (§9.5); 0
	// takes Env, then DefaultConsecutiveHedgeWinThreshold.
	ConsecutiveHedgeWinThreshold int
	// ProbeInterval is how long a tripped primary stays demoted; 0 =
	// DefaultProbeInterval.
	ProbeInterval time.Duration
	// HedgeWinMinSpan adds a time condition to the breaker's trip rule
	// (§9.5): N consecutive alternate wins trip only once the pair has been
	// losing to the alternate for at least this long (from the first win of
	// the streak, or of the run of wins at most this far apart it belongs
	// to). A stop-the-world pause or a burst of jitter makes a hot
	// partition's alternate win several reads in a row within milliseconds;
	// a slow primary keeps losing for longer. 0 = DefaultHedgeWinMinSpan
	// (1 s); negative = none, the spec's count-only rule. §9.5 #3 leaves
	// the trip rule to PPCB, so this is an option of hedgelab's PPCB, not
	// a change of the hedging contract.
	HedgeWinMinSpan time.Duration
	// UnavailableFor is how long a 503 marks a (partition, endpoint); 0 =
	// DefaultUnavailableFor.
	UnavailableFor time.Duration
	// UnavailableAfter is how many consecutive 503s of a (partition,
	// endpoint) mark it unavailable (§6.5 #10); any other status of that
	// pair starts the count again. 0 = DefaultUnavailableAfter (1: every
	// 503 marks, the spec's rule). A larger value keeps random 503s from
	// benching a healthy region, at the price of that many more 503s per
	// partition before an outage is routed around (notebook 07).
	UnavailableAfter int
	// Logger receives the reserved cosmos.hedge.* events (§10.4); nil
	// disables logging.
	Logger *slog.Logger
	// Transport performs attempts for [Client.Do]; unused by simulations,
	// which drive [Race] themselves.
	Transport Transport
	// Observer, when set, receives every attempt and operation of
	// [Client.Do] (metrics, spec §10.4); nil costs nothing.
	Observer Observer
}

// Client holds one account's hedging configuration and the state shared by
// all its operations: the location store, hedge-win tracker, session tokens
// and the threshold policy's observations. Safe for concurrent use. Drive a
// single operation with [Client.Do] (real time) or [Client.Begin] and the
// [Race] methods (any clock, e.g. a simulator).
type Client struct {
	// A client is one cache line: what every operation reads of it (spec
	// §6.5 #6: no per-hedge state on the happy path) — what counts in a
	// fleet of many clients, whose states do not all stay in cache. An
	// object of this size (64 bytes, holding pointers) has no allocator
	// header and starts on a line, and a [ClientGroup]'s clients lie side
	// by side, one line each (client_layout_test.go guards it). What
	// Begin adds, regions and defStrategy, is in the shape: one immutable
	// 64-byte object, one line, shared by the clients of a group that run
	// its Config's stateless strategy (shapeOf), so a fleet's Begins read
	// one line of it. The rest (stores, tracker, configuration) is in
	// the client's state, behind a pointer, off the happy path.
	hot hotCounters
	// phase and multiMaster are cfg's Phase and MultiMaster, copied here
	// once.
	phase       PhaseSet
	multiMaster bool
	// defResolved is resolveStrategy's answer for an operation that
	// overrides nothing (with shape's defStrategy), computed once.
	defResolved bool
	// inline: Config.Transport is [Cancellable] and returns on cancel, so
	// Do runs the primary's first attempt on the caller's goroutine.
	inline bool
	// logging: logger is set (a race notes it at Begin, and reads logger
	// only then).
	logging bool
	// built is set once the client is built: a group's client is zero
	// until its first use (ClientGroup.Client).
	built atomic.Bool
	// *clientShape's fields, regions and defStrategy, read as the
	// client's own (c.regions).
	*clientShape
	// *clientState's fields, read as the client's own (c.tracker).
	*clientState
}

// clientState is the part of a client that the happy path does not read:
// the shared stores, whose counters are in the client's hot (what a failed
// region or a won hedge needs, locks and maps, is off the happy path),
// and what writes, overrides, retries, logging and Do read.
type clientState struct {
	// tracker first: what a won hedge reads of it, its first 56 bytes,
	// are then on one cache line (see HedgeWinTracker).
	tracker  HedgeWinTracker
	logger   *slog.Logger
	sessions sessionTokens
	store    locationStore
	// write[0] is the hub (write region) endpoint; as a slice it is a
	// write's one candidate, which no race modifies.
	write  [1]Endpoint
	layers HedgingEnabledLayers
	cfg    Config
}

// NewClient validates cfg and returns a client. Errors: a region listed
// twice, an endpoint with an empty region or key, a negative duration or
// retry count, an Observer, Transport, or Strategy's threshold policy or
// Gate that is a nil pointer (or other nil value) inside a non-nil
// interface (a Gate set from a constructor whose error was ignored). For
// many clients of one Config (one per shard), see [NewClientGroup].
func NewClient(cfg Config) (*Client, error) {
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	cfg.Regions = slices.Clone(cfg.Regions)
	c := new(Client)
	c.init(&cfg, nil)
	return c, nil
}

// checkConfig validates cfg (NewClient's errors) and sets its defaults.
func checkConfig(cfg *Config) error {
	if isNil(cfg.Observer) {
		return fmt.Errorf("hedging: Config.Observer is a nil %T", cfg.Observer)
	}
	if isNil(cfg.Transport) {
		return fmt.Errorf("hedging: Config.Transport is a nil %T", cfg.Transport)
	}
	if err := checkStrategy(cfg.Strategy); err != nil {
		return err
	}
	seen := make(map[Region]bool, len(cfg.Regions))
	for i, e := range cfg.Regions {
		if e.Region == "" || e.Key == "" {
			return fmt.Errorf("hedging: Regions[%d]: region and endpoint key must be non-empty", i)
		}
		if seen[e.Region] {
			return fmt.Errorf("hedging: Regions[%d]: region %q listed twice", i, e.Region)
		}
		seen[e.Region] = true
	}
	if cfg.RequestTimeout < 0 || cfg.ProbeInterval < 0 || cfg.UnavailableFor < 0 || cfg.Retry.ThrottleBackoff < 0 ||
		cfg.Retry.MaxRetryAfter < 0 {
		return errors.New("hedging: durations must not be negative")
	}
	if cfg.Retry.MaxAttempts < 0 || cfg.ConsecutiveHedgeWinThreshold < 0 || cfg.UnavailableAfter < 0 {
		return errors.New("hedging: counts must not be negative")
	}
	cfg.Retry.setDefaults()
	if cfg.Phase == 0 {
		cfg.Phase = Phase1
	}
	return nil
}

// checkStrategy returns the error of a strategy whose threshold policy or
// Gate is a nil value inside a non-nil interface.
func checkStrategy(s AvailabilityStrategy) error {
	if hs, ok := s.HedgingStrategy(); ok {
		if isNil(hs.policy) {
			return fmt.Errorf("hedging: Config.Strategy's threshold policy is a nil %T", hs.policy)
		}
		if isNil(hs.Gate) {
			return fmt.Errorf("hedging: Config.Strategy's Gate is a nil %T", hs.Gate)
		}
	}
	return nil
}

// init makes the zero client c a client of cfg (checked by checkConfig).
// Its shape is shared when given and equal to the one c would build (the
// group's regions, and a stateless default strategy with the same
// threshold: see clientShape), otherwise c's own, holding regions (which
// the caller owns no longer: NewClient's and the group's own copy).
func (c *Client) init(cfg *Config, shared *clientShape) {
	n := cfg.ConsecutiveHedgeWinThreshold
	if n == 0 {
		n = cfg.Env.ConsecutiveHedgeWinThreshold
	}
	span := cmp.Or(cfg.HedgeWinMinSpan, DefaultHedgeWinMinSpan)
	c.clientState = &clientState{cfg: *cfg}
	c.phase = cfg.Phase
	c.multiMaster = cfg.MultiMaster
	c.logger = cfg.Logger
	c.logging = cfg.Logger != nil
	c.tracker.init(n, cfg.ProbeInterval, max(span, 0), &c.hot)
	c.store.init(cfg.UnavailableFor, cfg.UnavailableAfter, &c.hot)
	c.sessions.init(&c.hot)
	if ct, ok := cfg.Transport.(Cancellable); ok {
		c.inline = ct.ReturnsOnCancel()
	}
	c.layers = cfg.HedgingEnabled
	c.layers.Env = cfg.Env.HedgingEnabled
	c.layers.EnvOverride = cfg.Env.HedgingEnabledOverride
	var def HedgingStrategy
	def, c.defResolved = resolveStrategy(c.layers.effective(), AvailabilityStrategy{}, cfg.Strategy, cfg.RequestTimeout)
	c.clientShape = shapeOf(shared, cfg.Regions, def)
	if !cfg.MultiMaster && cfg.WriteRegion != "" {
		c.write[0] = Endpoint{Region: cfg.WriteRegion, Key: string(cfg.WriteRegion)}
		for _, e := range cfg.Regions {
			if e.Region == cfg.WriteRegion {
				c.write[0] = e
			}
		}
	}
	c.built.Store(true)
}

// HedgeWinTracker returns the client's consecutive-hedge-win tracker (§9.5).
func (c *Client) HedgeWinTracker() *HedgeWinTracker { return &c.tracker }

// HarvestWindow bounds how long a race waits, after the deadline fired
// mid-race, for in-flight legs to report for diagnostics (spec §6.5 #7).
const HarvestWindow = 50 * time.Millisecond

// ErrTransient is the cause of an [Error] for an operation that ended on a
// transient response (spec §14.1): errors.Is(err, ErrTransient).
var ErrTransient = errors.New("transient outcome")

// ErrNoRegion is returned when an operation has no applicable region at all
// (every region excluded, or none configured).
var ErrNoRegion = errors.New("hedging: no applicable region")

// Error is the error of an operation that produced no final response: both
// legs transient (§14.1), a deadline or application cancellation (§6.5 #7),
// or a single transient result. errors.Is works on Cause:
// context.DeadlineExceeded, context.Canceled, [ErrTransient], or the
// transport's error.
type Error struct {
	// Status is the most recent transient status (zero when none arrived).
	Status Status
	// Cause is what ended the operation.
	Cause error
	// Diagnostics are the race's hedge diagnostics, or nil when no hedging
	// strategy was active (attachment contract, §10.1).
	Diagnostics *HedgeDiagnostics
	// Body is the body of the most recent transient response (the one
	// whose Status is reported), when [Client.Do]'s transport returned one;
	// nil otherwise. The caller owns it and must close it.
	Body io.ReadCloser
}

// Error describes the outcome, the last status and the terminal state.
func (e *Error) Error() string {
	msg := "hedging: " + e.Cause.Error()
	if e.Status != (Status{}) {
		msg += " (last status " + e.Status.String() + ")"
	}
	if e.Diagnostics != nil {
		msg += " [" + e.Diagnostics.TerminalState().String() + "]"
	}
	return msg
}

// Unwrap returns Cause.
func (e *Error) Unwrap() error { return e.Cause }

// logEnabled and log log the race's slog events with its context: the
// caller's for Client.Do, context.Background for other drivers.
func (r *Race) logEnabled(level slog.Level) bool {
	return r.logging && r.c.logger.Enabled(r.ctx, level)
}

func (r *Race) log(level slog.Level, event string, attrs ...slog.Attr) {
	r.c.logger.LogAttrs(r.ctx, level, event, attrs...)
}

// isNil reports whether v is a non-nil interface holding a nil pointer, map,
// slice, channel or function: a value whose methods would panic on use.
func isNil(v any) bool {
	if v == nil {
		return false
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func:
		return r.IsNil()
	}
	return false
}
