// Package hedgingotel reports hedging to OpenTelemetry: an [Observer] for
// hedging.Config.Observer (or hedginghttp.WithObserver) that records every
// metric spec §10.4 reserves, under its exact name and instrument type, with
// the spec's labels and two more (marked +):
//
//	cosmos.hedge.operations_total            counter    result, +outcome, +cause
//	cosmos.hedge.alternate_spawned_total     counter    +cause
//	cosmos.hedge.first_response_latency_ms   histogram  was_hedge
//	cosmos.hedge.canceled_total              counter    reason
//	cosmos.hedge.ru_charge_winner            histogram  was_hedge
//	cosmos.hedge.ru_charge_total             histogram  winner_region
//	cosmos.hedge.consecutive_alternate_wins  gauge      partition, primary_region
//	+cosmos.hedge.attempts_total             counter    leg, outcome
//	+cosmos.hedge.attempt_latency_ms         histogram  region, leg, status
//
// Every data point also carries the attributes given to [New] with
// [WithAttributes]: give each client its own (for example
// attribute.String("client", "orders")) so that two clients recording to
// one MeterProvider stay apart, their breaker gauges included; without
// them their series merge and the last gauge value written wins.
//
// Label values: result is primary_won (PrimaryWonPreThreshold,
// PrimaryWonAfterHedge), alternate_won (AlternateWon), both_transient
// (BothTransient with or without the deadline, CancelledAwaitingPartner) or
// disabled (no hedging strategy active: every other metric skips such an
// operation); a hedged operation whose deadline passed before the threshold
// (DeadlineExceededPreThreshold) is counted with result deadline_exceeded,
// a value the spec's list does not name. was_hedge is "true" or "false";
// reason is winner_found, deadline or app_canceled; winner_region is the
// returned response's region, or "none" when the operation failed (its RU
// still counts). Latency is from the start of the operation to the winning
// response, in milliseconds; operations without a response record no
// latency and no winner RU. ru_charge_total includes a loser's RU when its
// answer reached the client before the operation returned, also when it
// landed as the race ended.
//
// Extensions of §10.4. result says which leg answered, not whether the
// operation succeeded: a primary answering 429 or 500 within the threshold
// is result=primary_won. outcome says what the caller got
// ([hedging.Outcome]): success (a final status below 400), final_error (a
// final 4xx such as 404 or 409), transient_error (the operation ended on a
// transient status: 408, 429, 500, 503, ...), transport_error (no
// response), deadline_exceeded or canceled; a success rate is
// outcome=success over all operations. cause is why the alternate was sent
// ([hedging.SpawnCause], as in the cosmos.hedge.alternate_spawned log
// event): threshold (the threshold elapsed), or a failover on the primary's
// answer: 503, 404/1002, 429/3092 or transport_error. operations_total
// carries it too for every operation whose alternate was sent (and no
// cause for one that sent none), so that "of the hedges sent at the
// threshold, how many helped" is
// operations_total{result="alternate_won",cause="threshold"} over
// alternate_spawned_total{cause="threshold"}.
//
// attempts_total counts every transport attempt by leg (primary, or
// alternate: the hedge) and outcome: success, final_error,
// transient_error, transport_error (no response: a dial error, or an
// attempt refused by a client-side rate limiter in the transport), canceled
// (the race cancelled it: a loser) or abandoned (still running when the
// operation returned). Hedges and local retries go through the transport
// like the first attempt, so they consume a client-side limiter's tokens;
// the attempts it refuses, which the caller never sees, are
// attempts_total{outcome="transport_error"}.
//
// Extension beyond §10.4: attempt_latency_ms is every transport attempt's
// latency (ms, from sending it to its answer, or to its abandonment), the
// per-region record that `hedgesim calibrate` fits a scenario from. region
// is the attempt's region, leg primary or alternate, and status the
// answer's status as
// "200" or "404/1002", transport_error (no response), local_throttle (the
// client's own throughput-control 429) or abandoned (cancelled before it
// answered: the race ended while it was still running, or its transport
// returned the context's error; its latency is only a lower bound, a
// censored observation). Its explicit bucket boundaries are 2^(i/32) ms
// from 1/16 ms to 2^17 ms (~131 s), the boundaries of an exponential
// histogram of scale 5: each bucket is 2.2% wide, so a quantile read from
// it by interpolation is within 1.1% of the recorded one. A View may
// replace them (an exponential histogram reads as well).
//
// The hedging package itself does not import OpenTelemetry.
package hedgingotel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"hedgelab/hedging"
)

// ScopeName is the instrumentation scope of the meter [New] creates.
const ScopeName = "hedgelab/hedging"

// Option configures [New].
type Option func(*Observer)

// WithAttributes adds kv to every data point the Observer records: a
// label for the client (attribute.String("client", "orders")) keeps two
// clients on one MeterProvider apart, their
// cosmos.hedge.consecutive_alternate_wins gauges included. Keys must not
// be one of the metrics' own labels (result, outcome, cause, was_hedge,
// reason, winner_region, partition, primary_region, leg).
func WithAttributes(kv ...attribute.KeyValue) Option {
	return func(o *Observer) { o.extra = append(o.extra, kv...) }
}

// Metric names of spec §10.4.
const (
	MetricOperations               = "cosmos.hedge.operations_total"
	MetricAlternateSpawned         = "cosmos.hedge.alternate_spawned_total"
	MetricFirstResponseLatency     = "cosmos.hedge.first_response_latency_ms"
	MetricCanceled                 = "cosmos.hedge.canceled_total"
	MetricRUChargeWinner           = "cosmos.hedge.ru_charge_winner"
	MetricRUChargeTotal            = "cosmos.hedge.ru_charge_total"
	MetricConsecutiveAlternateWins = "cosmos.hedge.consecutive_alternate_wins"
	// MetricAttempts is hedgelab's, beyond §10.4: every transport attempt
	// by leg and outcome.
	MetricAttempts = "cosmos.hedge.attempts_total"
	// MetricAttemptLatency is an extension of §10.4: every attempt's
	// latency by region, leg and status (see the package doc).
	MetricAttemptLatency = "cosmos.hedge.attempt_latency_ms"
)

// Observer is a hedging.Observer that records the §10.4 metrics. Build it
// with [New]; the zero value is usable too and records to the global
// MeterProvider (otel.GetMeterProvider()), creating its instruments on first
// use. It is safe for concurrent use and must not be copied after first
// use. A nil *Observer is not usable: hedging.NewClient rejects it.
type Observer struct {
	once     sync.Once // init, for the zero value
	ops      metric.Int64Counter
	spawned  metric.Int64Counter
	latency  metric.Float64Histogram
	canceled metric.Int64Counter
	ruWinner metric.Float64Histogram
	ruTotal  metric.Float64Histogram
	consec   metric.Int64Gauge
	attempts metric.Int64Counter
	extra    []attribute.KeyValue                   // WithAttributes
	result   map[[3]string]metric.MeasurementOption // {result, outcome, cause}
	attempt  map[[2]string]metric.MeasurementOption // {leg, outcome}
	// attemptLatency is attempt_latency_ms, attemptLatencyOpts its
	// attribute options by attemptKey.
	attemptLatency     metric.Float64Histogram
	attemptLatencyOpts sync.Map                    // attemptKey -> metric.MeasurementOption
	cause              [8]metric.MeasurementOption // by hedging.SpawnCause
	wasHedge           [2]metric.MeasurementOption
	reason             [4]metric.MeasurementOption
	regions            sync.Map // hedging.Region -> metric.MeasurementOption (winner_region)
	noWinner           metric.MeasurementOption
	partition          sync.Map // [2]string{partition, primary} -> metric.MeasurementOption
}

var _ hedging.Observer = (*Observer)(nil)

// New creates the instruments on a meter of mp named [ScopeName]. Errors:
// a nil mp or option; those of the meter's instrument constructors,
// joined.
func New(mp metric.MeterProvider, opts ...Option) (*Observer, error) {
	if mp == nil {
		return nil, errors.New("hedgingotel: New: nil MeterProvider")
	}
	o := &Observer{}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("hedgingotel: New: opts[%d] is nil", i)
		}
		opt(o)
	}
	var err error
	o.once.Do(func() { err = o.init(mp) })
	if err != nil {
		return nil, err
	}
	return o, nil
}

// init creates the instruments and the attribute sets.
func (o *Observer) init(mp metric.MeterProvider) error {
	m := mp.Meter(ScopeName)
	var errs [9]error
	o.ops, errs[0] = m.Int64Counter(MetricOperations,
		metric.WithDescription("Hedging-eligible operations grouped by outcome"))
	o.spawned, errs[1] = m.Int64Counter(MetricAlternateSpawned,
		metric.WithDescription("Total alternate hedges spawned"))
	o.latency, errs[2] = m.Float64Histogram(MetricFirstResponseLatency, metric.WithUnit("ms"),
		metric.WithDescription("Latency from the start of the operation to the winning response"))
	o.canceled, errs[3] = m.Int64Counter(MetricCanceled,
		metric.WithDescription("Pipelines canceled before completion"))
	o.ruWinner, errs[4] = m.Float64Histogram(MetricRUChargeWinner, metric.WithUnit("RU"),
		metric.WithDescription("RU of the winning response; the caller-visible RU charge"))
	o.ruTotal, errs[5] = m.Float64Histogram(MetricRUChargeTotal, metric.WithUnit("RU"),
		metric.WithDescription("Total RU consumed across primary + alternate, including the loser"))
	o.consec, errs[6] = m.Int64Gauge(MetricConsecutiveAlternateWins,
		metric.WithDescription("Current consecutive alternate wins for a (partition, primary region) pair"))
	o.attempts, errs[7] = m.Int64Counter(MetricAttempts,
		metric.WithDescription("Transport attempts by leg and outcome, hedges and local retries included"))
	o.attemptLatency, errs[8] = m.Float64Histogram(MetricAttemptLatency, metric.WithUnit("ms"),
		metric.WithDescription("Latency of each transport attempt, from sending it to its answer or abandonment"),
		metric.WithExplicitBucketBoundaries(attemptBounds()...))
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	o.result = map[[3]string]metric.MeasurementOption{}
	for _, r := range []string{"primary_won", "alternate_won", "both_transient", "disabled", "deadline_exceeded"} {
		for oc := hedging.OutcomeSuccess; oc <= hedging.OutcomeCanceled; oc++ {
			for c := noSpawn; c <= hedging.SpawnTransportError; c++ {
				o.result[[3]string{r, oc.String(), c.String()}] = o.resultSet(r, oc.String(), c)
			}
		}
	}
	o.attempt = map[[2]string]metric.MeasurementOption{}
	for _, l := range []hedging.Leg{hedging.Primary, hedging.Alternate} {
		for _, oc := range attemptOutcomes {
			o.attempt[[2]string{l.String(), oc}] = o.attrs(attribute.String("leg", l.String()), attribute.String("outcome", oc))
		}
	}
	for c := hedging.SpawnThreshold; c <= hedging.SpawnTransportError; c++ {
		o.cause[c] = o.attrs(attribute.String("cause", c.String()))
	}
	o.wasHedge[0] = o.attrs(attribute.Bool("was_hedge", false))
	o.wasHedge[1] = o.attrs(attribute.Bool("was_hedge", true))
	for r := hedging.CancelWinnerFound; r <= hedging.CancelAppCanceled; r++ {
		o.reason[r] = o.attrs(attribute.String("reason", r.String()))
	}
	o.noWinner = o.attrs(attribute.String("winner_region", "none"))
	return nil
}

// noSpawn is the zero hedging.SpawnCause: no alternate was sent (no
// cause attribute).
const noSpawn hedging.SpawnCause = 0

// resultSet is the operations_total attribute set of result, outcome and
// spawn cause c (none for noSpawn).
func (o *Observer) resultSet(result, outcome string, c hedging.SpawnCause) metric.MeasurementOption {
	if c == noSpawn {
		return o.attrs(attribute.String("result", result), attribute.String("outcome", outcome))
	}
	return o.attrs(attribute.String("result", result), attribute.String("outcome", outcome), attribute.String("cause", c.String()))
}

// attemptOutcomes are the outcome values of attempts_total.
var attemptOutcomes = []string{"success", "final_error", "transient_error", "transport_error", "canceled", "abandoned"}

// attemptOutcome classifies one attempt for attempts_total.
func attemptOutcome(ev hedging.AttemptEvent) string {
	switch res := ev.Result; {
	case ev.Abandoned:
		return "abandoned"
	case res.Err != nil && (errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded)):
		return "canceled"
	case res.Err != nil:
		return "transport_error"
	case !res.Final():
		return "transient_error"
	case res.Status.Code >= 400:
		return "final_error"
	}
	return "success"
}

// ready initialises a zero Observer from the global MeterProvider, and
// reports whether the instruments exist (an error is handed to otel.Handle).
func (o *Observer) ready() bool {
	o.once.Do(func() {
		if err := o.init(otel.GetMeterProvider()); err != nil {
			otel.Handle(err)
		}
	})
	return o.result != nil
}

// attrs is the attribute set of kv and the Observer's own attributes.
func (o *Observer) attrs(kv ...attribute.KeyValue) metric.MeasurementOption {
	if len(o.extra) > 0 {
		kv = append(append([]attribute.KeyValue(nil), kv...), o.extra...)
	}
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}

// ObserveAttempt implements hedging.Observer: it counts the attempt in
// attempts_total and records its latency in attempt_latency_ms (both
// extensions: §10.4 reserves no per-attempt metric).
func (o *Observer) ObserveAttempt(ctx context.Context, ev hedging.AttemptEvent) {
	if !o.ready() {
		return
	}
	k := [2]string{ev.Attempt.Leg.String(), attemptOutcome(ev)}
	o.attempts.Add(ctx, 1, o.attempt[k])
	lk := attemptKey{region: ev.Attempt.Endpoint.Region, leg: ev.Attempt.Leg}
	switch {
	case ev.Abandoned, errors.Is(ev.Result.Err, context.Canceled), errors.Is(ev.Result.Err, context.DeadlineExceeded):
		// Cancelled before it answered, whether Do stopped waiting first
		// (Abandoned) or the transport returned the context's error first:
		// either way its latency is only a lower bound.
		lk.status = "abandoned"
	case ev.Result.LocalThrottle:
		lk.status = "local_throttle"
	case ev.Result.Err != nil:
		lk.status = "transport_error"
	default:
		lk.st = ev.Result.Status
	}
	o.attemptLatency.Record(ctx, float64(ev.Latency)/float64(time.Millisecond), o.attemptLatencyOpt(lk))
}

// attemptKey is the attribute set of one attempt_latency_ms series: the
// status is st unless status names a result without one.
type attemptKey struct {
	region hedging.Region
	leg    hedging.Leg
	st     hedging.Status
	status string
}

// attemptLatencyOpt returns the cached attribute option of k.
func (o *Observer) attemptLatencyOpt(k attemptKey) metric.MeasurementOption {
	if v, ok := o.attemptLatencyOpts.Load(k); ok {
		return v.(metric.MeasurementOption)
	}
	status := k.status
	if status == "" {
		status = k.st.String()
	}
	v, _ := o.attemptLatencyOpts.LoadOrStore(k, o.attrs(attribute.String("region", string(k.region)),
		attribute.String("leg", k.leg.String()), attribute.String("status", status)))
	return v.(metric.MeasurementOption)
}

// attemptBounds returns the explicit bucket boundaries of
// attempt_latency_ms: 2^(i/32) ms for i = -128 .. 544.
func attemptBounds() []float64 {
	b := make([]float64, 0, 673)
	for i := -128; i <= 544; i++ {
		b = append(b, math.Exp2(float64(i)/32))
	}
	return b
}

// ObserveOperation implements hedging.Observer: it records one operation.
func (o *Observer) ObserveOperation(ctx context.Context, ev hedging.OperationEvent) {
	if !o.ready() {
		return
	}
	d := ev.Diagnostics
	if d == nil {
		o.ops.Add(ctx, 1, o.resultOpt("disabled", ev.Outcome, noSpawn))
		return
	}
	c, spawned := d.SpawnCause()
	if !spawned {
		c = noSpawn
	}
	o.ops.Add(ctx, 1, o.resultOpt(resultOf(d.TerminalState()), ev.Outcome, c))
	if spawned {
		o.spawned.Add(ctx, 1, o.causeOpt(c))
	}
	for r := hedging.CancelWinnerFound; r <= hedging.CancelAppCanceled; r++ {
		if n := ev.Cancelled[r]; n > 0 {
			o.canceled.Add(ctx, int64(n), o.reason[r])
		}
	}
	region := o.noWinner
	if ev.Err == nil {
		wh := o.wasHedge[0]
		if d.TerminalState().WasHedge() {
			wh = o.wasHedge[1]
		}
		o.latency.Record(ctx, float64(ev.Elapsed)/float64(time.Millisecond), wh)
		o.ruWinner.Record(ctx, ev.RequestCharge, wh)
		region = o.regionOpt(ev.WinnerRegion)
	}
	o.ruTotal.Record(ctx, ev.TotalRequestCharge, region)
	o.consec.Record(ctx, int64(ev.ConsecutiveAlternateWins), o.pairOpt(ev.Operation.Partition, d.PrimaryRegion()))
}

func resultOf(ts hedging.TerminalState) string {
	switch ts {
	case hedging.PrimaryWonPreThreshold, hedging.PrimaryWonAfterHedge:
		return "primary_won"
	case hedging.AlternateWon:
		return "alternate_won"
	case hedging.DeadlineExceededPreThreshold:
		return "deadline_exceeded"
	}
	return "both_transient"
}

// resultOpt returns the {result, outcome, cause} attribute option.
func (o *Observer) resultOpt(result string, oc hedging.Outcome, c hedging.SpawnCause) metric.MeasurementOption {
	if v, ok := o.result[[3]string{result, oc.String(), c.String()}]; ok {
		return v
	}
	return o.resultSet(result, oc.String(), c)
}

// causeOpt returns the cause attribute option of c.
func (o *Observer) causeOpt(c hedging.SpawnCause) metric.MeasurementOption {
	if int(c) < len(o.cause) && o.cause[c] != nil {
		return o.cause[c]
	}
	return o.attrs(attribute.String("cause", c.String()))
}

// regionOpt returns the cached winner_region attribute option of r.
func (o *Observer) regionOpt(r hedging.Region) metric.MeasurementOption {
	if v, ok := o.regions.Load(r); ok {
		return v.(metric.MeasurementOption)
	}
	v, _ := o.regions.LoadOrStore(r, o.attrs(attribute.String("winner_region", string(r))))
	return v.(metric.MeasurementOption)
}

// pairOpt returns the cached (partition, primary_region) attribute option.
func (o *Observer) pairOpt(partition string, primary hedging.Region) metric.MeasurementOption {
	k := [2]string{partition, string(primary)}
	if v, ok := o.partition.Load(k); ok {
		return v.(metric.MeasurementOption)
	}
	v, _ := o.partition.LoadOrStore(k, o.attrs(attribute.String("partition", partition), attribute.String("primary_region", string(primary))))
	return v.(metric.MeasurementOption)
}
