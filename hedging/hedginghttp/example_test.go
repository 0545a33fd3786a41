package hedginghttp_test

import (
	"log"
	"net/http"
	"time"

	"hedgelab/hedging/hedginghttp"
)

// An http.Client whose reads to West US are hedged to East US after 50 ms
// (the README's ten lines).
func ExampleNewRoundTripper() {
	rt, err := hedginghttp.NewRoundTripper(http.DefaultTransport, []hedginghttp.Region{
		{Name: "westus", URL: "https://acct-westus.example.com"},
		{Name: "eastus", URL: "https://acct-eastus.example.com"},
	}, hedginghttp.WithThreshold(50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: rt}
	_ = client // client.Get("https://acct-westus.example.com/docs/1") is hedged
}
