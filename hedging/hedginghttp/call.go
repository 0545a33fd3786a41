package hedginghttp

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"sync"

	"hedgelab/hedging"
	"hedgelab/hedging/internal/answer"
)

// call is one hedged request of [NewRoundTripper]'s RoundTrip, the
// op.Request of its operation: the caller's request, read by the attempts
// only while RoundTrip has not returned. The first attempt (the primary's,
// which runs on the caller's goroutine when next returns on cancel, see
// [returnsOnCancel]) sends a shallow copy of it; every other attempt, which
// may outlive RoundTrip, copies it deeply (http.Request.Clone) before
// RoundTrip can return, and one that starts after RoundTrip returned (the
// race was decided) sends nothing. A call is made fresh for each RoundTrip:
// nothing of it is reused by a later request.
type call struct {
	orig *http.Request
	// at is the base orig's URL addresses (RoundTrip's lookup, made once
	// for every attempt).
	at addressing

	mu sync.Mutex
	// shallow: the first attempt runs before RoundTrip returns (the
	// client runs it on the caller's goroutine), so it may share orig's
	// header map.
	shallow bool
	// strip: orig carries HeaderHedging, which no attempt sends.
	strip    bool
	returned bool // RoundTrip returned: orig is the caller's again (under mu)
	claimed  bool // the first attempt has started (under mu)
	// body is the first attempt's result body (the happy path's only one).
	body responseBody
	// req is the first attempt's shallow copy of orig (made in place: one
	// allocation fewer on the happy path).
	req http.Request
	// ans is the storage of what hedging.Client.Do hands out for the
	// request (the Response, the handed body, the first attempt's
	// context), carried here so that the request's state is one object.
	// It has no room for the Response's diagnostics: RoundTrip returns an
	// http.Response and reads only the Response's body and region, so
	// the diagnostics would be copied for no reader (observers get the
	// race's own, an error its own copy).
	ans answer.Storage[hedging.Response]
}

// AnswerStorage gives hedging.Client.Do the request's answer storage (see
// the internal answer package): fresh for this call, used by no other; and
// no place for the diagnostics, which RoundTrip never reads (the
// Response's Diagnostics stay nil).
func (c *call) AnswerStorage() (*answer.Storage[hedging.Response], *hedging.HedgeDiagnostics) {
	return &c.ans, nil
}

// errDecided is the result of an attempt that starts after its RoundTrip
// returned: the race was decided without it.
var errDecided = errors.New("hedginghttp: the race was decided before this attempt started")

// request returns the request attempt a sends (see [call]) and the result
// body to carry its response in: the call's own for the first attempt, nil
// (make one) for the others.
func (c *call) request(t *Transport, ctx context.Context, a hedging.Attempt) (*http.Request, *responseBody, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.returned {
		return nil, nil, false, errDecided
	}
	first := !c.claimed
	c.claimed = true
	deep := t.Prepare != nil || !(first && c.shallow)
	var dst *http.Request
	if !deep {
		dst = &c.req
	}
	req, err := t.attemptRequest(ctx, c.orig, a.Endpoint, deep, dst, &c.at)
	if err == nil && c.strip {
		if !deep {
			req.Header, deep = req.Header.Clone(), true
		}
		delete(req.Header, HeaderHedging)
	}
	var body *responseBody
	if first {
		body = &c.body
	}
	return req, body, !deep, err
}

// done marks RoundTrip's return: an attempt still to start sends nothing.
func (c *call) done() {
	c.mu.Lock()
	c.returned = true
	c.mu.Unlock()
}

// http2Transport is the type path of golang.org/x/net/http2's Transport,
// which honours a request's context as net/http's does.
const http2Pkg, http2Name = "golang.org/x/net/http2", "Transport"

// returnsOnCancel reports whether rt declares or is known to return
// promptly from RoundTrip once the request's context is cancelled: net/http's
// *http.Transport (http.DefaultTransport when rt is nil), golang.org/x/net/http2's
// *Transport, and any RoundTripper implementing [hedging.Cancellable] whose
// ReturnsOnCancel reports true. A wrapping RoundTripper that does not
// implement hedging.Cancellable is not known to.
func returnsOnCancel(rt http.RoundTripper) bool {
	switch v := rt.(type) {
	case nil:
		if http.DefaultTransport == nil {
			return false
		}
		return returnsOnCancel(http.DefaultTransport)
	case *http.Transport:
		return v != nil
	case hedging.Cancellable:
		return v.ReturnsOnCancel()
	}
	t := reflect.TypeOf(rt)
	return t.Kind() == reflect.Pointer && t.Elem().PkgPath() == http2Pkg && t.Elem().Name() == http2Name
}

// ReturnsOnCancel implements [hedging.Cancellable]: it reports whether
// RoundTripper returns promptly once a request's context is cancelled
// (net/http's *http.Transport and http.DefaultTransport,
// golang.org/x/net/http2's *Transport, or a RoundTripper that implements
// hedging.Cancellable itself and says so). hedging.NewClient asks once, so
// set RoundTripper before building the client.
func (t *Transport) ReturnsOnCancel() bool { return returnsOnCancel(t.RoundTripper) }
