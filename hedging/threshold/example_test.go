package threshold_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/hedginghttp"
	"hedgelab/hedging/threshold"
)

// okTransport answers every attempt 200 at once.
type okTransport struct{}

func (okTransport) Send(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
	return hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 1}
}

// A client whose threshold the recommended policy chooses, with a hedge
// budget beside it as the strategy's gate: at most ~5% of operations hedge,
// and the bucket holds 2 s of the instance's own budget (the fleet-safe
// sizing). Before its first answer the policy's threshold is its cold-start
// prior, Initial (350 ms).
func ExampleNewRecommended() {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{MaxHedgeRate: 0.05})
	if err != nil {
		log.Fatal(err)
	}
	s := hedging.NewPolicyStrategy(p)
	if s.Gate, err = threshold.NewBudget(threshold.BudgetConfig{Ratio: 0.05, BurstSeconds: 2}); err != nil {
		log.Fatal(err)
	}
	c, err := hedging.NewClient(hedging.Config{
		Regions: []hedging.Endpoint{
			{Region: "West US", Key: "westus"},
			{Region: "East US", Key: "eastus"},
		},
		Strategy:  hedging.Hedging(s),
		Transport: okTransport{},
	})
	if err != nil {
		log.Fatal(err)
	}
	t, _ := p.Threshold(0, hedging.ThresholdQuery{Primary: "West US", Alternate: "East US", Kind: hedging.PointRead})
	fmt.Println(hedging.Hedging(s), t)
	resp, err := c.Do(context.Background(), &hedging.Operation{Kind: hedging.PointRead, Partition: "0"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Region, resp.Diagnostics.TerminalState())
	// Output:
	// hedging(recommended+budget(0.05)) 350ms
	// West US PrimaryWonPreThreshold
}

// The same pair through HTTP: WithPolicy chooses the threshold, WithHedgeGate
// sets the budget beside it (it admits each hedge when its threshold fires,
// and each read a tripped partition breaker moves to the second region).
func ExampleNewBudget() {
	p, err := threshold.NewRecommended(threshold.RecommendedConfig{MaxHedgeRate: 0.05})
	if err != nil {
		log.Fatal(err)
	}
	b, err := threshold.NewBudget(threshold.BudgetConfig{Ratio: 0.05, BurstSeconds: 2})
	if err != nil {
		log.Fatal(err)
	}
	rt, err := hedginghttp.NewRoundTripper(http.DefaultTransport, []hedginghttp.Region{
		{Name: "westus", URL: "https://acct-westus.example.com"},
		{Name: "eastus", URL: "https://acct-eastus.example.com"},
	}, hedginghttp.WithPolicy(p), hedginghttp.WithHedgeGate(b))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: rt}
	_ = client // client.Get("https://acct-westus.example.com/docs/1") is hedged
	fmt.Println(b.Name())
	// Output: budget(0.05)
}

// A fixed threshold is a Static policy; DriverDefault is spec §5.2's
// min(1 s, request timeout / 2) as one.
func ExampleStatic() {
	q := hedging.ThresholdQuery{Primary: "West US", Alternate: "East US", Kind: hedging.PointRead}
	for _, p := range []threshold.Static{
		{T: hedging.MustThreshold(50 * time.Millisecond)},
		threshold.DriverDefault(800 * time.Millisecond),
		threshold.DriverDefault(0),
	} {
		t, _ := p.Threshold(0, q)
		fmt.Println(t)
	}
	// Output:
	// 50ms
	// 400ms
	// 1s
}
