package calibrate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
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

// epoch is the wall time virtual time 0 is exported at.
var epoch = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)

// virtualExporter is a hedging.Observer that forwards to a real
// hedgingotel.Observer on an OpenTelemetry SDK MeterProvider and, every
// interval of virtual time, collects its reader and exports the data with
// the real stdoutmetric exporter, stamped with the virtual time: the
// telemetry a client running the simulated workload would have exported.
type virtualExporter struct {
	t        testing.TB
	obs      *hedgingotel.Observer
	reader   *sdkmetric.ManualReader
	exp      sdkmetric.Exporter
	interval time.Duration
	next     time.Duration
	attempts func(hedging.AttemptEvent) // also called with every attempt, when set
}

func newVirtualExporter(t testing.TB, out *bytes.Buffer, clientRegion string, interval time.Duration) *virtualExporter {
	reader := sdkmetric.NewManualReader()
	res := resource.NewSchemaless(attribute.String("cloud.region", clientRegion), attribute.String("service.name", "simulated"))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
	obs, err := hedgingotel.New(mp)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := stdoutmetric.New(stdoutmetric.WithEncoder(json.NewEncoder(out)))
	if err != nil {
		t.Fatal(err)
	}
	return &virtualExporter{t: t, obs: obs, reader: reader, exp: exp, interval: interval, next: interval}
}

func (v *virtualExporter) tick(ctx context.Context) {
	now, ok := simnet.VirtualNow(ctx)
	if !ok {
		v.t.Fatal("no virtual time")
	}
	for now >= v.next {
		v.export(v.next)
		v.next += v.interval
	}
}

// export collects and writes the data as of virtual time at.
func (v *virtualExporter) export(at time.Duration) {
	var rm metricdata.ResourceMetrics
	if err := v.reader.Collect(context.Background(), &rm); err != nil {
		v.t.Fatal(err)
	}
	start, end := epoch, epoch.Add(at)
	for i := range rm.ScopeMetrics {
		for j := range rm.ScopeMetrics[i].Metrics {
			stamp(&rm.ScopeMetrics[i].Metrics[j], start, end)
		}
	}
	if err := v.exp.Export(context.Background(), &rm); err != nil {
		v.t.Fatal(err)
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

// simulateTelemetry runs cfg under policy p with a virtual exporter and
// returns the OTLP JSON it wrote and the run's stats.
func simulateTelemetry(t testing.TB, cfg *simnet.Config, p simnet.Policy, interval time.Duration, attempts func(hedging.AttemptEvent)) ([]byte, *simnet.Stats) {
	var out bytes.Buffer
	v := newVirtualExporter(t, &out, cfg.ClientRegion, interval)
	v.attempts = attempts
	st, err := simnet.Run(cfg, p, 0, simnet.RunOptions{Observer: v})
	if err != nil {
		t.Fatal(err)
	}
	if st.End > v.next-v.interval {
		v.export(st.End) // the last window, to the end of the run
	}
	return out.Bytes(), st
}
