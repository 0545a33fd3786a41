package hedginghttp_test

import (
	"log"
	"net/http"
	"time"

	"hedgelab/hedging/feed"
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

// Change-feed pages pinned to the region that served the previous page, and
// query pages pinned after an alternate won (the README's feeds section).
// The next page addresses resp.Request.URL's host: the region that served
// resp and issued its continuation.
func ExampleWithContinuation() {
	rt, err := hedginghttp.NewRoundTripper(http.DefaultTransport, []hedginghttp.Region{
		{Name: "westus", URL: "https://acct-westus.example.com"},
		{Name: "eastus", URL: "https://acct-eastus.example.com"},
	}, hedginghttp.WithThreshold(50*time.Millisecond),
		hedginghttp.WithContinuation(hedginghttp.ContinuationRules{Policy: feed.PinAfterHedgeWin}))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: rt}
	next, _ := http.NewRequest("GET", "https://acct-eastus.example.com/dbs/d/colls/c/docs", nil)
	next.Header.Set(hedginghttp.HeaderAIM, hedginghttp.IncrementalFeed)
	next.Header.Set(hedginghttp.HeaderIfNoneMatch, `"etag-of-the-previous-page"`)
	_ = client // client.Do(next) goes to eastus alone
}
