// Package hedgingotel reports hedging to OpenTelemetry: an [Observer] for
// hedging.Config.Observer (or hedginghttp.WithObserver) that records every
// metric spec §10.4 reserves, under its exact name and instrument type, with
// the spec's labels and two more (marked +):
//
//	cosmos.hedge.operations_total            counter    result, +outcome
//	cosmos.hedge.alternate_spawned_total     counter    +cause
//	cosmos.hedge.first_response_latency_ms   histogram  was_hedge
//	cosmos.hedge.canceled_total              counter    reason
//	cosmos.hedge.ru_charge_winner            histogram  was_hedge
//	cosmos.hedge.ru_charge_total             histogram  winner_region
//	cosmos.hedge.consecutive_alternate_wins  gauge      partition, primary_region
//	+cosmos.hedge.attempt_latency_ms         histogram  region, leg, status
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
// answer: 503, 404/1002, 429/3092 or transport_error.
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

// Metric names of spec §10.4.
const (
	MetricOperations               = "cosmos.hedge.operations_total"
	MetricAlternateSpawned         = "cosmos.hedge.alternate_spawned_total"
	MetricFirstResponseLatency     = "cosmos.hedge.first_response_latency_ms"
	MetricCanceled                 = "cosmos.hedge.canceled_total"
	MetricRUChargeWinner           = "cosmos.hedge.ru_charge_winner"
	MetricRUChargeTotal            = "cosmos.hedge.ru_charge_total"
	MetricConsecutiveAlternateWins = "cosmos.hedge.consecutive_alternate_wins"
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
	once      sync.Once // init, for the zero value
	ops       metric.Int64Counter
	spawned   metric.Int64Counter
	latency   metric.Float64Histogram
	canceled  metric.Int64Counter
	ruWinner  metric.Float64Histogram
	ruTotal   metric.Float64Histogram
	consec    metric.Int64Gauge
	result    map[[2]string]metric.MeasurementOption // {result, outcome}
	cause     [8]metric.MeasurementOption            // by hedging.SpawnCause
	wasHedge  [2]metric.MeasurementOption
	reason    [4]metric.MeasurementOption
	regions   sync.Map // hedging.Region -> metric.MeasurementOption (winner_region)
	noWinner  metric.MeasurementOption
	partition sync.Map // [2]string{partition, primary} -> metric.MeasurementOption
	attempt   metric.Float64Histogram
	attempts  sync.Map // attemptKey -> metric.MeasurementOption
}

var _ hedging.Observer = (*Observer)(nil)

// New creates the instruments on a meter of mp named [ScopeName]. Errors:
// a nil mp; those of the meter's instrument constructors, joined.
func New(mp metric.MeterProvider) (*Observer, error) {
	if mp == nil {
		return nil, errors.New("hedgingotel: New: nil MeterProvider")
	}
	o := &Observer{}
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
	var errs [8]error
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
	o.attempt, errs[7] = m.Float64Histogram(MetricAttemptLatency, metric.WithUnit("ms"),
		metric.WithDescription("Latency of each transport attempt, from sending it to its answer or abandonment"),
		metric.WithExplicitBucketBoundaries(attemptBounds()...))
	if err := errors.Join(errs[:]...); err != nil {
		return err
	}
	o.result = map[[2]string]metric.MeasurementOption{}
	for _, r := range []string{"primary_won", "alternate_won", "both_transient", "disabled", "deadline_exceeded"} {
		for oc := hedging.OutcomeSuccess; oc <= hedging.OutcomeCanceled; oc++ {
			o.result[[2]string{r, oc.String()}] = attrs(attribute.String("result", r), attribute.String("outcome", oc.String()))
		}
	}
	for c := hedging.SpawnThreshold; c <= hedging.SpawnTransportError; c++ {
		o.cause[c] = attrs(attribute.String("cause", c.String()))
	}
	o.wasHedge[0] = attrs(attribute.Bool("was_hedge", false))
	o.wasHedge[1] = attrs(attribute.Bool("was_hedge", true))
	for r := hedging.CancelWinnerFound; r <= hedging.CancelAppCanceled; r++ {
		o.reason[r] = attrs(attribute.String("reason", r.String()))
	}
	o.noWinner = attrs(attribute.String("winner_region", "none"))
	return nil
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

func attrs(kv ...attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}

// ObserveAttempt implements hedging.Observer: it records the attempt's
// latency in attempt_latency_ms (an extension: §10.4 reserves no
// per-attempt metric).
func (o *Observer) ObserveAttempt(ctx context.Context, ev hedging.AttemptEvent) {
	if !o.ready() {
		return
	}
	k := attemptKey{region: ev.Attempt.Endpoint.Region, leg: ev.Attempt.Leg}
	switch {
	case ev.Abandoned, errors.Is(ev.Result.Err, context.Canceled), errors.Is(ev.Result.Err, context.DeadlineExceeded):
		// Cancelled before it answered, whether Do stopped waiting first
		// (Abandoned) or the transport returned the context's error first:
		// either way its latency is only a lower bound.
		k.status = "abandoned"
	case ev.Result.LocalThrottle:
		k.status = "local_throttle"
	case ev.Result.Err != nil:
		k.status = "transport_error"
	default:
		k.st = ev.Result.Status
	}
	o.attempt.Record(ctx, float64(ev.Latency)/float64(time.Millisecond), o.attemptOpt(k))
}

// attemptKey is the attribute set of one attempt_latency_ms series: the
// status is st unless status names a result without one.
type attemptKey struct {
	region hedging.Region
	leg    hedging.Leg
	st     hedging.Status
	status string
}

// attemptOpt returns the cached attribute option of k.
func (o *Observer) attemptOpt(k attemptKey) metric.MeasurementOption {
	if v, ok := o.attempts.Load(k); ok {
		return v.(metric.MeasurementOption)
	}
	status := k.status
	if status == "" {
		status = k.st.String()
	}
	v, _ := o.attempts.LoadOrStore(k, attrs(attribute.String("region", string(k.region)),
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
		o.ops.Add(ctx, 1, o.resultOpt("disabled", ev.Outcome))
		return
	}
	o.ops.Add(ctx, 1, o.resultOpt(resultOf(d.TerminalState()), ev.Outcome))
	if c, ok := d.SpawnCause(); ok {
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

// resultOpt returns the {result, outcome} attribute option.
func (o *Observer) resultOpt(result string, oc hedging.Outcome) metric.MeasurementOption {
	if v, ok := o.result[[2]string{result, oc.String()}]; ok {
		return v
	}
	return attrs(attribute.String("result", result), attribute.String("outcome", oc.String()))
}

// causeOpt returns the cause attribute option of c.
func (o *Observer) causeOpt(c hedging.SpawnCause) metric.MeasurementOption {
	if int(c) < len(o.cause) && o.cause[c] != nil {
		return o.cause[c]
	}
	return attrs(attribute.String("cause", c.String()))
}

// regionOpt returns the cached winner_region attribute option of r.
func (o *Observer) regionOpt(r hedging.Region) metric.MeasurementOption {
	if v, ok := o.regions.Load(r); ok {
		return v.(metric.MeasurementOption)
	}
	v, _ := o.regions.LoadOrStore(r, attrs(attribute.String("winner_region", string(r))))
	return v.(metric.MeasurementOption)
}

// pairOpt returns the cached (partition, primary_region) attribute option.
func (o *Observer) pairOpt(partition string, primary hedging.Region) metric.MeasurementOption {
	k := [2]string{partition, string(primary)}
	if v, ok := o.partition.Load(k); ok {
		return v.(metric.MeasurementOption)
	}
	v, _ := o.partition.LoadOrStore(k, attrs(attribute.String("partition", partition), attribute.String("primary_region", string(primary))))
	return v.(metric.MeasurementOption)
}
