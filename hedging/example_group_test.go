package hedging_test

import (
	"fmt"
	"time"

	"hedgelab/hedging"
)

// A sharded service runs one client per shard, all of one Config: each
// shard's client keeps its own breaker, location marks and session tokens
// (and, with a threshold policy from newStrategy, its own latency
// windows), and is built when its shard first serves a read.
func ExampleNewClientGroup() {
	cfg := hedging.Config{
		Regions: []hedging.Endpoint{
			{Region: "West US", Key: "westus"},
			{Region: "East US", Key: "eastus"},
		},
		Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(200 * time.Millisecond))),
	}
	shards, err := hedging.NewClientGroup(cfg, 16, nil) // nil: every shard runs cfg.Strategy
	if err != nil {
		panic(err)
	}
	c, err := shards.Client(3)
	if err != nil {
		panic(err)
	}
	other, _ := shards.Client(4)
	fmt.Println(shards.Len(), shards.Built(), c != other, c.HedgeWinTracker() != other.HedgeWinTracker())
	// Output: 16 2 true true
}
