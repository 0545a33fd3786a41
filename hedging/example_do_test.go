package hedging_test

import (
	"context"
	"fmt"
	"time"

	"hedgelab/hedging"
)

// regionsTransport is a Transport for the example: West US answers 503,
// every other region 200 with a request charge of 1.5 RU.
type regionsTransport struct{}

func (regionsTransport) Send(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	if a.Endpoint.Region == "West US" {
		return hedging.Result{Status: hedging.Status{Code: 503}}
	}
	return hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 1.5}
}

// A client with two regions and a 200 ms threshold. The primary (West US)
// answers 503, which sends the alternate at once (spec §7.2.1); East US's
// 200 is returned. This is the example doc.go opens with.
func ExampleClient_Do() {
	c, err := hedging.NewClient(hedging.Config{
		Regions: []hedging.Endpoint{
			{Region: "West US", Key: "westus"},
			{Region: "East US", Key: "eastus"},
		},
		Strategy:  hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(200 * time.Millisecond))),
		Transport: regionsTransport{},
	})
	if err != nil {
		panic(err)
	}
	resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "0"})
	if err != nil {
		panic(err)
	}
	cause, _ := resp.Diagnostics.SpawnCause()
	fmt.Println(resp.Result.Status, resp.Region, resp.RequestCharge, resp.Diagnostics.TerminalState(), cause)
	// Output: 200 East US 1.5 AlternateWon 503
}
