package feed_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// pagedQuery serves a query over two partitions of three pages each. Every
// page hands out the continuation of the next one, issued by the serving
// region; West answers 503 to page 1 of partition "1".
type pagedQuery struct{}

func (pagedQuery) Send(_ context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	page := 0
	if !op.Continuation.Cold() {
		page, _ = strconv.Atoi(op.Continuation.Token[len(op.Partition)+1:])
	}
	if op.Partition == "1" && page == 1 && a.Endpoint.Region == "West" {
		return hedging.Result{Status: hedging.Status{Code: 503}}
	}
	res := hedging.Result{Status: hedging.Status{Code: 200}, Page: &hedging.PageInfo{ServedBy: a.Endpoint.Region}, RequestCharge: 2.8}
	if page < 2 {
		res.Page.Continuation = hedging.Continuation{Token: fmt.Sprintf("%s:%d", op.Partition, page+1)}
	}
	return res
}

// A cross-partition query read page by page through the driver: each page
// is one hedge race, and the next page of a leaf carries the winner's
// continuation. Page 1 of partition "1" fails over to East (the 503 sends
// the alternate at once), and the 503 marks West unavailable for that
// partition (spec §6.5 #10), so page 2 starts in East: one region switch.
func ExampleRun() {
	c, err := hedging.NewClient(hedging.Config{
		Regions:   []hedging.Endpoint{{Region: "West", Key: "w"}, {Region: "East", Key: "e"}},
		Strategy:  hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(500 * time.Millisecond))),
		Phase:     hedging.Phase2,
		Transport: pagedQuery{},
	})
	if err != nil {
		panic(err)
	}
	d, err := feed.New(c, feed.Leaves(hedging.QueryPage, "0", "1"), feed.Config{MaxConcurrency: 1})
	if err != nil {
		panic(err)
	}
	err = feed.Run(context.Background(), c, d, func(del feed.Delivery, resp *hedging.Response) error {
		fmt.Printf("partition %s page %d from %-4s sent %-4q next %q\n", del.Page.Op.Partition, del.Page.Seq, resp.Region,
			del.Page.Op.Continuation.Token, resp.Result.Page.Continuation.Token)
		return nil
	})
	fmt.Printf("err=%v %+v\n", err, d.Diagnostics())
	// Output:
	// partition 0 page 0 from West sent ""   next "0:1"
	// partition 0 page 1 from West sent "0:1" next "0:2"
	// partition 0 page 2 from West sent "0:2" next ""
	// partition 1 page 0 from West sent ""   next "1:1"
	// partition 1 page 1 from East sent "1:1" next "1:2"
	// partition 1 page 2 from East sent "1:2" next ""
	// err=<nil> {Pages:6 PagesHedged:1 AlternateWins:1 RegionSwitches:1 PagesPinned:0 PagesGated:0 ColdRestarts:0 Resumes:0 SetupContacts:0}
}
