package calibrate

// This file exports a simulation's telemetry as OTLP JSON: the simulator
// drives hedgingotel's Observer, stamped with virtual time, so calibrate
// and whatif can be tried without a service (and the round trip tested).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"hedgelab/hedging"
	"hedgelab/hedging/hedgingotel"
	"hedgelab/simnet"
)

// MaxExports bounds the exports of one [ExportTelemetry] call: each is a
// whole cumulative snapshot (tens of KB), so an interval far below the
// run's length would otherwise grow the output without bound.
const MaxExports = 10_000

// ExportEpoch is the wall time virtual time 0 is exported at.
var ExportEpoch = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)

// ExportTelemetry runs cfg under policy p (replication 0) with
// hedgingotel's Observer on an OpenTelemetry SDK MeterProvider and, every
// interval of virtual time (> 0), writes its cumulative data to w with the
// stdoutmetric exporter (one JSON object per line), stamped with the
// virtual time from [ExportEpoch], and once more at the end of the run:
// the telemetry a client running the simulated workload would have
// exported, which [ReadOTLP] reads. attempts, when not nil, is also called
// with every attempt. Errors: the simulator's (a feed scenario is
// refused), the exporter's, and more than [MaxExports] exports (the run is
// finished but no more is written).
func ExportTelemetry(w io.Writer, cfg *simnet.Config, p simnet.Policy, interval time.Duration, attempts func(hedging.AttemptEvent)) (*simnet.Stats, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("calibrate: export interval %v, want > 0", interval)
	}
	reader := sdkmetric.NewManualReader()
	res := resource.NewSchemaless(attribute.String("cloud.region", cfg.ClientRegion), attribute.String("service.name", "simulated"))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
	obs, err := hedgingotel.New(mp)
	if err != nil {
		return nil, err
	}
	exp, err := stdoutmetric.New(stdoutmetric.WithEncoder(json.NewEncoder(w)))
	if err != nil {
		return nil, err
	}
	v := &virtualExporter{obs: obs, reader: reader, exp: exp, interval: interval, next: interval, attempts: attempts}
	st, err := simnet.Run(cfg, p, 0, simnet.RunOptions{Observer: v})
	if err != nil {
		return nil, err
	}
	if v.err == nil && st.End > v.next-v.interval {
		v.export(st.End) // the last window, to the end of the run
	}
	if v.err != nil {
		return nil, fmt.Errorf("calibrate: exporting telemetry: %w", v.err)
	}
	return st, nil
}

// virtualExporter is a hedging.Observer that forwards to hedgingotel's
// Observer and exports its data every interval of virtual time.
type virtualExporter struct {
	obs      *hedgingotel.Observer
	reader   *sdkmetric.ManualReader
	exp      sdkmetric.Exporter
	interval time.Duration
	next     time.Duration
	attempts func(hedging.AttemptEvent)
	exports  int   // exports written
	err      error // the first export error; later exports are skipped
}

func (v *virtualExporter) tick(ctx context.Context) {
	now, ok := simnet.VirtualNow(ctx)
	if !ok {
		v.fail(errors.New("an Observer call without a virtual time"))
		return
	}
	for now >= v.next && v.err == nil {
		v.export(v.next)
		v.next += v.interval
	}
}

// export collects and writes the data as of virtual time at, unless
// MaxExports are written.
func (v *virtualExporter) export(at time.Duration) {
	if v.exports == MaxExports {
		v.fail(fmt.Errorf("more than %d exports (one every %v of virtual time); raise the interval", MaxExports, v.interval))
		return
	}
	v.exports++
	v.write(at)
}

func (v *virtualExporter) fail(err error) {
	if v.err == nil {
		v.err = err
	}
}

// write collects and writes the data as of virtual time at.
func (v *virtualExporter) write(at time.Duration) {
	var rm metricdata.ResourceMetrics
	if err := v.reader.Collect(context.Background(), &rm); err != nil {
		v.fail(err)
		return
	}
	start, end := ExportEpoch, ExportEpoch.Add(at)
	for i := range rm.ScopeMetrics {
		for j := range rm.ScopeMetrics[i].Metrics {
			stamp(&rm.ScopeMetrics[i].Metrics[j], start, end)
		}
	}
	if err := v.exp.Export(context.Background(), &rm); err != nil {
		v.fail(err)
	}
}

// stamp sets every data point's start and time (cumulative: from the
// start of the run).
func stamp(m *metricdata.Metrics, start, end time.Time) {
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for k := range d.DataPoints {
			d.DataPoints[k].StartTime, d.DataPoints[k].Time = start, end
		}
	case metricdata.Sum[float64]:
		for k := range d.DataPoints {
			d.DataPoints[k].StartTime, d.DataPoints[k].Time = start, end
		}
	case metricdata.Gauge[int64]:
		for k := range d.DataPoints {
			d.DataPoints[k].StartTime, d.DataPoints[k].Time = start, end
		}
	case metricdata.Gauge[float64]:
		for k := range d.DataPoints {
			d.DataPoints[k].StartTime, d.DataPoints[k].Time = start, end
		}
	case metricdata.Histogram[float64]:
		for k := range d.DataPoints {
			d.DataPoints[k].StartTime, d.DataPoints[k].Time = start, end
		}
	case metricdata.ExponentialHistogram[float64]:
		for k := range d.DataPoints {
			d.DataPoints[k].StartTime, d.DataPoints[k].Time = start, end
		}
	}
}

func (v *virtualExporter) ObserveAttempt(ctx context.Context, ev hedging.AttemptEvent) {
	v.tick(ctx)
	v.obs.ObserveAttempt(ctx, ev)
	if v.attempts != nil {
		v.attempts(ev)
	}
}

func (v *virtualExporter) ObserveOperation(ctx context.Context, ev hedging.OperationEvent) {
	v.tick(ctx)
	v.obs.ObserveOperation(ctx, ev)
}
