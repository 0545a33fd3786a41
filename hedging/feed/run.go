package feed

import (
	"context"
	"errors"

	"hedgelab/hedging"
)

// Run drives d to the end in real time on client c: each page is one
// [hedging.Client.Do] on its own goroutine, at most as many at once as d
// allows, and yield is called on Run's goroutine, in delivery order, with
// every page that returned a response (Delivery.OK) and that response, whose
// Result.Body the yield function must read and close; Delivery.Restarted
// pages are not yielded but tell the consumer, through the next yielded
// page's Epoch, to drop what that leaf delivered before. A yield error stops
// the operation: Run waits for the pages in flight, closes their bodies and
// returns the error. Otherwise Run returns d.Err(): a *[LeafError] (a
// cancelled ctx fails the page in flight, whose error it wraps), or nil.
// Run returns only once no page of it is in flight.
func Run(ctx context.Context, c *hedging.Client, d *Driver, yield func(Delivery, *hedging.Response) error) error {
	type done struct {
		p    Page
		resp *hedging.Response
		err  error
	}
	results := make(chan done)
	var stop error
	for {
		for stop == nil {
			p, ok := d.Next(c.Now())
			if !ok {
				break
			}
			go func() {
				resp, err := c.Do(ctx, &p.Op)
				results <- done{p, resp, err}
			}()
		}
		if d.InFlight() == 0 {
			break
		}
		r := <-results
		del, err := d.Deliver(c.Now(), r.p, FromResponse(r.resp, r.err))
		switch {
		case err == nil && del.OK && stop == nil:
			stop = yield(del, r.resp)
		case r.resp != nil && r.resp.Result.Body != nil:
			r.resp.Result.Body.Close()
		}
		var he *hedging.Error
		if errors.As(r.err, &he) && he.Body != nil {
			he.Body.Close()
		}
	}
	if stop != nil {
		return stop
	}
	return d.Err()
}
