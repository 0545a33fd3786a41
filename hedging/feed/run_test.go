package feed_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// bodyQuery serves n pages per partition with a body each, counting bodies
// opened and closed; partition "bad" answers 409 on its first page.
type bodyQuery struct {
	n              int
	opened, closed atomic.Int32
}

type countedBody struct {
	io.Reader
	closed *atomic.Int32
}

func (b countedBody) Close() error { b.closed.Add(1); return nil }

func (q *bodyQuery) Send(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	select {
	case <-time.After(10 * time.Millisecond):
	case <-ctx.Done():
		return hedging.Result{Err: ctx.Err()}
	}
	q.opened.Add(1)
	res := hedging.Result{Status: hedging.Status{Code: 200}, Body: countedBody{strings.NewReader("items"), &q.closed}}
	if op.Partition == "bad" {
		res.Status.Code = 409
	}
	page := len(op.Continuation.Token)
	if page+1 < q.n {
		res.Page = &hedging.PageInfo{Continuation: hedging.Continuation{Token: strings.Repeat("x", page+1)}}
	}
	return res
}

func runClient(t *testing.T, tr hedging.Transport) *hedging.Client {
	c, err := hedging.NewClient(hedging.Config{Regions: regions2, Phase: hedging.Phase2, Transport: tr,
		Strategy: hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(time.Second)))})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Run yields every page once, with its body, across concurrent leaves; a
// leaf's final error ends it with a LeafError; a yield error stops it; in
// every case every body is closed and no goroutine is left (synctest).
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name       string
		partitions []string
		stopAfter  int // yield returns an error at this page (0 = never)
		wantPages  int
		wantErr    string
	}{
		{"all pages", []string{"a", "b", "c"}, 0, 9, ""},
		{"leaf error", []string{"a", "bad"}, 0, -1, `feed: leaf 1 (partition "bad") page 0.0: status 409`},
		{"yield stops", []string{"a", "b", "c"}, 2, 2, "enough"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := &bodyQuery{n: 3}
				c := runClient(t, q)
				d, err := feed.New(c, feed.Leaves(hedging.QueryPage, tc.partitions...), feed.Config{})
				if err != nil {
					t.Fatal(err)
				}
				seen := map[[3]int]bool{}
				pages := 0
				err = feed.Run(context.Background(), c, d, func(del feed.Delivery, resp *hedging.Response) error {
					k := [3]int{del.Page.Leaf, del.Page.Epoch, del.Page.Seq}
					if seen[k] {
						t.Errorf("page %v yielded twice", k)
					}
					seen[k] = true
					pages++
					io.Copy(io.Discard, resp.Result.Body)
					resp.Result.Body.Close()
					if pages == tc.stopAfter {
						return errors.New("enough")
					}
					return nil
				})
				if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
				if tc.wantPages >= 0 && pages != tc.wantPages {
					t.Errorf("%d pages yielded, want %d", pages, tc.wantPages)
				}
				if d.InFlight() != 0 || q.opened.Load() != q.closed.Load() {
					t.Errorf("in flight %d; bodies opened %d closed %d", d.InFlight(), q.opened.Load(), q.closed.Load())
				}
			})
		})
	}
}
