package hedgingotel_test

import (
	"log"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"hedgelab/hedging/hedginghttp"
	"hedgelab/hedging/hedgingotel"
)

// The §10.4 metrics and the reserved log events of a hedged http.Client
// (the README's OTel wiring), labelled with the client's name.
func ExampleNew() {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())) // your exporter's reader
	otel.SetMeterProvider(mp)
	obs, err := hedgingotel.New(otel.GetMeterProvider(),
		hedgingotel.WithAttributes(attribute.String("client", "orders"))) // one label per client

	if err != nil {
		log.Fatal(err)
	}
	regions := []hedginghttp.Region{{Name: "westus", URL: "https://acct-westus.example.com"}, {Name: "eastus", URL: "https://acct-eastus.example.com"}}
	rt, err := hedginghttp.NewRoundTripper(http.DefaultTransport, regions, hedginghttp.WithThreshold(50*time.Millisecond),
		hedginghttp.WithObserver(obs), hedginghttp.WithLogger(slog.Default()))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: rt}
	_ = client
}
