package hedginghttp

import (
	"fmt"
	"net/http"
	"strings"

	"hedgelab/hedging"
	"hedgelab/hedging/feed"
)

// Cosmos DB's feed headers, the defaults of [ContinuationRules] (canonical
// form).
const (
	// HeaderContinuation carries a query or read-feed continuation: the
	// request sends it back, the response hands out the next one.
	HeaderContinuation = "X-Ms-Continuation"
	// HeaderAIM marks a change-feed request with the value
	// [IncrementalFeed] ("A-IM: Incremental feed").
	HeaderAIM = "A-Im"
	// IncrementalFeed is the value of [HeaderAIM] on a change-feed request.
	IncrementalFeed = "Incremental feed"
	// HeaderIfNoneMatch carries a change-feed request's continuation (the
	// ETag of the previous page).
	HeaderIfNoneMatch = "If-None-Match"
	// FromNow is the If-None-Match value of a change feed read "from now":
	// no continuation, so the page is a cold one, never pinned.
	FromNow = "*"
	// HeaderETag is the response header that hands out a change-feed
	// page's next continuation.
	HeaderETag = "Etag"
)

// ContinuationRules says how [NewRoundTripper] recognises a page request
// of a feed and where its continuation may go (spec §16 Phase 2, §17 Q9).
// The zero value is Cosmos DB's rules: a request with "A-IM: Incremental
// feed" is a change-feed page whose continuation is If-None-Match,
// region-affine, so no page of it is hedged (the Rust driver and Java): one
// with an ETag goes to its issuing region alone, a cold one (no
// If-None-Match, or "*", [FromNow], which is no cursor) to the first region
// with the plain path's failover; any other request with x-ms-continuation
// is a query page whose continuation is portable, not pinned (the .NET and
// Java data plane). A Classify that calls the change feed's cursor
// portable hedges every change-feed page, as .NET does.
//
// The region that issued a request's continuation is the region that
// served the response that handed it out, when the RoundTripper returned
// that response (it remembers the last 4096: a change feed's ETag, a
// query's x-ms-continuation), whichever configured region the request
// addresses; otherwise the region the request addresses, for which the
// host of the previous response's Request.URL is right (NewRoundTripper
// rewrites hosts, so the response's Request is the copy that was sent).
// A page whose continuation is region-affine, or whose portable
// continuation the Policy pins, goes to that region alone
// ([hedging.Client.Pin]): it is never hedged and never fails over, whatever
// the settings and the environment (AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE
// included). When that region fails the page (no final response by
// [hedging.IsFinal]'s classification, as [hedging.Client.Do] reports it: a
// transport error, 408, 410, most 429s, 404/1002, a 5xx but 501 and 505,
// a metadata read's 403/1008), the response or error is returned as it
// is, the RoundTripper does not
// retry it elsewhere, and it forgets that continuation's serving region
// (not when the request's own context ended). The caller's retry of the
// same continuation then goes to the region it addresses, pinned there: to
// resume the chain, address it to another region (the failover of the
// .NET and Java retry policies, which hedging/feed's Driver performs), or
// restart a metadata chain cold; the response of the resumed page is
// remembered as that region's. Any other page with a continuation is
// hedged like a read, whichever configured region it addresses. The response, and so the next continuation in its headers, is
// the winner's alone.
type ContinuationRules struct {
	// Continuation is the request header of a page's continuation; ""
	// means [HeaderContinuation].
	Continuation string
	// ChangeFeed and ChangeFeedValue mark a change-feed page (the value
	// compared case-insensitively); "" means [HeaderAIM] and
	// [IncrementalFeed].
	ChangeFeed, ChangeFeedValue string
	// ChangeFeedContinuation is the request header of a change-feed page's
	// continuation; "" means [HeaderIfNoneMatch].
	ChangeFeedContinuation string
	// Classify returns the affinity of req's continuation; kind is
	// hedging.ChangeFeedPage or hedging.QueryPage. nil means
	// [hedging.DefaultContinuationAffinity] of kind (change feed
	// region-affine, query portable). It runs on the caller's goroutine
	// before the request is sent.
	Classify func(req *http.Request, kind hedging.OperationKind) hedging.ContinuationAffinity
	// Policy pins pages whose continuation is portable ([feed.Affinity.PinAfter],
	// with the addressed region as the previous page's serving region, and
	// that page's leg the alternate when it is not the first region): the
	// zero value, feed.AffinityNone, pins none. BreakerDriven pins while the
	// request's partition (see [WithPartitionKey]) has its first region
	// demoted (§9.5).
	Policy feed.Affinity
}

// WithContinuation replaces Cosmos DB's continuation rules (the default)
// with r, whose empty fields keep Cosmos DB's; see [ContinuationRules].
// Errors: an unknown r.Policy.
func WithContinuation(r ContinuationRules) Option {
	return func(s *settings) error {
		if _, err := feed.ParseAffinity(r.Policy.String()); err != nil {
			return fmt.Errorf("hedginghttp: WithContinuation: Policy: %w", err)
		}
		s.cont = r
		return nil
	}
}

// withDefaults fills r's empty fields with Cosmos DB's rules, in canonical
// header form.
func (r ContinuationRules) withDefaults() ContinuationRules {
	canon := func(v, def string) string {
		if v == "" {
			return def
		}
		return http.CanonicalHeaderKey(v)
	}
	r.Continuation = canon(r.Continuation, HeaderContinuation)
	r.ChangeFeed = canon(r.ChangeFeed, HeaderAIM)
	if r.ChangeFeedValue == "" {
		r.ChangeFeedValue = IncrementalFeed
	}
	r.ChangeFeedContinuation = canon(r.ChangeFeedContinuation, HeaderIfNoneMatch)
	if r.Classify == nil {
		r.Classify = func(_ *http.Request, kind hedging.OperationKind) hedging.ContinuationAffinity {
			return hedging.DefaultContinuationAffinity(kind)
		}
	}
	return r
}

// classify returns the kind of req (PointRead when it is no feed page) and
// its continuation, issued by region (the region req addresses).
func (r *ContinuationRules) classify(req *http.Request, region hedging.Region) (hedging.OperationKind, hedging.Continuation) {
	kind, header := hedging.QueryPage, r.Continuation
	for _, v := range req.Header[r.ChangeFeed] {
		if strings.EqualFold(strings.TrimSpace(v), r.ChangeFeedValue) {
			kind, header = hedging.ChangeFeedPage, r.ChangeFeedContinuation
			break
		}
	}
	tok := headerValue(req.Header, header)
	switch {
	case tok == "" && kind == hedging.QueryPage:
		return hedging.PointRead, hedging.Continuation{} // no feed page: a plain read
	case tok == "" || kind == hedging.ChangeFeedPage && tok == FromNow:
		// A cold page, or "from now", which is no cursor (spec §16 Phase
		// 2): not pinned; its chain's affinity decides whether it is
		// hedged (a region-affine change feed never is, §5.1 row 4a).
		return kind, hedging.Continuation{Affinity: r.Classify(req, kind)}
	}
	return kind, hedging.Continuation{Token: tok, Affinity: r.Classify(req, kind), IssuedBy: region}
}

// pin returns the region a page with continuation c must go to alone, ""
// for none: the issuing region of a region-affine continuation, else what
// the policy pins after a page served by the issuing region (spec §16
// Phase 2).
func (rt *roundTripper) pin(kind hedging.OperationKind, c hedging.Continuation, partition string) hedging.Region {
	if c.Cold() {
		return ""
	}
	if c.Affinity == hedging.RegionAffine {
		return c.IssuedBy
	}
	primary, ok := rt.client.PrimaryEndpoint(kind, nil)
	if !ok {
		return ""
	}
	leg := hedging.Primary
	if c.IssuedBy != primary.Region {
		leg = hedging.Alternate
	}
	open := rt.cont.Policy == feed.BreakerDriven &&
		rt.client.HedgeWinTracker().Unhealthy(rt.client.Now(), partition, primary.Region)
	return rt.cont.Policy.PinAfter("", c.IssuedBy, leg, open)
}
