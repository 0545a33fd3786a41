package hedginghttp

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"hedgelab/hedging"
)

// Region is one region of a [NewRoundTripper]: a name (the region label in
// diagnostics and metrics) and the base URL of its endpoint,
// "http[s]://host[:port][/path]", such as "https://acct-westus.example.com"
// or "https://gw.example.com/westus". A request addresses the first region
// when its scheme, host and port match that region's URL (host names
// compared case-insensitively, :80 and :443 the same as no port) and its
// path lies under the URL's path; the copy sent to another region has that
// region's scheme, host and path followed by the rest of the path:
// "https://gw.example.com/westus/docs/1" goes to
// "https://gw.example.com/eastus/docs/1" for Region{"eastus",
// "https://gw.example.com/eastus"}.
type Region struct {
	Name, URL string
}

// Option configures [NewRoundTripper].
type Option func(*settings) error

type settings struct {
	strategy  hedging.AvailabilityStrategy
	gate      hedging.HedgeGate
	observer  hedging.Observer
	logger    *slog.Logger
	timeout   time.Duration
	partition func(*http.Request) string
	prepare   func(req *http.Request, region string) error
	cont      ContinuationRules
	// unavailableAfter and unavailableFor: hedging.Config's.
	unavailableAfter int
	unavailableFor   time.Duration
}

// WithThreshold hedges after a fixed threshold d > 0 (spec §4.1). Without
// WithThreshold or WithPolicy the driver default applies (spec §5.2:
// min(1 s, timeout/2), 1 s without WithTimeout).
func WithThreshold(d time.Duration) Option {
	return func(s *settings) error {
		t, ok := hedging.NewThreshold(d)
		if !ok {
			return fmt.Errorf("hedginghttp: WithThreshold(%v): the threshold must be positive", d)
		}
		s.strategy = hedging.Hedging(hedging.NewHedgingStrategy(t))
		return nil
	}
}

// WithPolicy chooses the threshold per request with p (for example a
// [hedgelab/hedging/threshold.Recommended]); p must be safe for concurrent
// use. p must not be nil, nor a nil pointer (NewRoundTripper fails).
func WithPolicy(p hedging.ThresholdPolicy) Option {
	return func(s *settings) error {
		if p == nil {
			return errors.New("hedginghttp: WithPolicy(nil)")
		}
		s.strategy = hedging.Hedging(hedging.NewPolicyStrategy(p))
		return nil
	}
}

// WithHedgeGate sends a hedge, or a read a tripped partition breaker moves
// to the alternate region, only when g admits it (for example a
// [hedgelab/hedging/threshold.Budget]; see [hedging.HedgeGate]), beside
// the threshold of WithThreshold, WithPolicy or the driver default, which
// it leaves unchanged. g must be safe for concurrent use, and not nil nor
// a nil pointer (NewRoundTripper fails).
func WithHedgeGate(g hedging.HedgeGate) Option {
	return func(s *settings) error {
		if g == nil {
			return errors.New("hedginghttp: WithHedgeGate(nil)")
		}
		s.gate = g
		return nil
	}
}

// WithObserver reports every attempt and request to o (metrics; see the
// hedgingotel package for OpenTelemetry). o must not be nil, nor a nil
// pointer (NewRoundTripper fails).
func WithObserver(o hedging.Observer) Option {
	return func(s *settings) error {
		if o == nil {
			return errors.New("hedginghttp: WithObserver(nil)")
		}
		s.observer = o
		return nil
	}
}

// WithLogger logs the reserved cosmos.hedge.* events (spec §10.4) to l,
// with each request's context. l must not be nil.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) error {
		if l == nil {
			return errors.New("hedginghttp: WithLogger(nil)")
		}
		s.logger = l
		return nil
	}
}

// HeaderPartitionKey is the Cosmos DB partition-key request header, which
// the default partition of [WithPartitionKey] is read from.
const HeaderPartitionKey = "X-Ms-Documentdb-Partitionkey"

// partitionBuckets is how many partitions the default partition function
// spreads partition-key values over.
const partitionBuckets = 256

// defaultPartition is the partition of [WithPartitionKey]'s default: the
// FNV-1a hash of the partition-key header's value modulo 256, in decimal
// ("" without the header).
func defaultPartition(req *http.Request) string {
	v := req.Header[HeaderPartitionKey]
	if len(v) == 0 {
		return ""
	}
	h := uint32(2166136261)
	for i := 0; i < len(v[0]); i++ {
		h = (h ^ uint32(v[0][i])) * 16777619
	}
	return strconv.Itoa(int(h % partitionBuckets))
}

// WithPartitionKey sets the partition of each request: the unit of the
// per-partition state the hedger keeps (spec §9.5's breaker streak and
// demotion, §6.5 #10's 503 marks, §9.2's session LSN) and the partition
// label of cosmos.hedge.consecutive_alternate_wins. Requests with the same
// key share it; requests with different keys never affect each other, so
// five alternate wins on one partition demote the first region for that
// partition only. The default spreads the value of the Cosmos DB
// partition-key header ([HeaderPartitionKey]) over 256 partitions (its
// FNV-1a hash modulo 256, "0" to "255", like Cosmos DB's partition-key
// ranges: many keys to a range) and puts requests without the header
// together in partition "". fn runs on the caller's goroutine before the
// request is sent and must return few distinct values: the hedger keeps
// state, and the gauge a time series, per value. fn must not be nil.
func WithPartitionKey(fn func(req *http.Request) string) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("hedginghttp: WithPartitionKey(nil)")
		}
		s.partition = fn
		return nil
	}
}

// WithPrepare calls fn on each region's copy of a hedged request before it
// is sent (every attempt, local retries included), with the region's name:
// to sign the request for that region or adjust its headers. req is that
// attempt's own copy (NewRoundTripper clones the caller's request for each
// attempt), so fn may modify it, header map included; it runs on the
// attempt's goroutine, possibly while the other region's attempt runs. An
// error fails that attempt like a transport error (transient: the race goes
// on with the other region, see [NewRoundTripper]). Requests that are not
// hedged are passed to next unchanged and fn is not called: to sign every
// request, sign in next instead (a RoundTripper wrapping the transport),
// which receives each region's copy with that region's URL. fn must not be
// nil.
func WithPrepare(fn func(req *http.Request, region string) error) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("hedginghttp: WithPrepare(nil)")
		}
		s.prepare = fn
		return nil
	}
}

// WithTimeout bounds every hedged request end to end, from RoundTrip's
// start: the race, both legs together (spec §9.4), and then the returned
// response's body, whose reads end with context.DeadlineExceeded once d has
// passed, as with a request context of that deadline (and as
// http.Client.Timeout does). The request context's deadline, when earlier,
// wins. d must be positive.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return fmt.Errorf("hedginghttp: WithTimeout(%v): the timeout must be positive", d)
		}
		s.timeout = d
		return nil
	}
}

// WithUnavailable marks a region unavailable for one partition (see
// [WithPartitionKey]) after `after` consecutive 503s of that region for that
// partition, for d: while marked, the partition's requests go to the next
// region first (spec §6.5 #10, §6.2). Any other answer of the region for
// the partition starts the count again. Without it a single 503 marks the
// region for 5 s (hedging.DefaultUnavailableAfter,
// hedging.DefaultUnavailableFor: the spec's rule). A larger after keeps
// random 503s from benching a healthy region; it costs after 503s per
// partition, each followed at once by a copy to the next region, before a
// real outage is routed around (notebook 07 measures both). after must be
// at least 1 and d positive.
func WithUnavailable(after int, d time.Duration) Option {
	return func(s *settings) error {
		if after < 1 || d <= 0 {
			return fmt.Errorf("hedginghttp: WithUnavailable(%d, %v): after must be >= 1 and the duration positive", after, d)
		}
		s.unavailableAfter, s.unavailableFor = after, d
		return nil
	}
}

// roundTripper is the http.RoundTripper of NewRoundTripper.
type roundTripper struct {
	next      http.RoundTripper
	client    *hedging.Client
	first     baseURL // the first region's URL: requests addressing it are hedged
	firstName string  // the first region's name
	bases     []keyedBase
	timeout   time.Duration
	partition func(*http.Request) string
	cont      ContinuationRules // with defaults filled in
	inline    bool              // next returns on cancel: the client runs the first attempt on the caller's goroutine
	cursors   cursors           // the serving region of the continuations handed out
}

// NewRoundTripper returns an http.RoundTripper that hedges requests across
// regions (spec §6): a request addressing the first region (see [Region])
// goes there at once; if no final response has arrived by the threshold,
// one copy goes to the second region, and the first final response is
// returned while the other request is cancelled and its body closed.
// Finality follows spec §7.2 from the status code and the x-ms-substatus
// header: 2xx, 3xx and most 4xx are final; 408, 410, 429 (except 429/3200,
// 3210, 3214), 500, 503, 404/1002 are transient. A 503, 404/1002, 429/3092
// or transport error of the first request sends the copy at once (spec
// §7.2.1); each leg retries transient answers per the spec's local retry
// rules. The returned response's body is the winner's, unread; its Request
// is the copy that was sent. regions are the preferred regions in order;
// only the first two take part in a request (spec §6.1), a third is a
// fallback for the breaker (§9.5) and for regions marked unavailable.
//
// Only reads are hedged: GET and HEAD, Cosmos DB query pages (a POST with
// x-ms-documentdb-isquery: True, [HeaderIsQuery], as the .NET and Java
// SDKs hedge every query page), and requests the caller marks idempotent
// with an Idempotency-Key or X-Idempotency-Key header entry (the net/http
// convention; an entry with no values marks the request without sending
// the header). A request with a body is hedged only when the body can be
// replayed (req.GetBody, set by http.NewRequest for in-memory bodies).
// Every other request, and every request that does not address the first
// region (except a feed page with a continuation that addresses another
// configured region, below), is passed to next unchanged and sent once. A
// request whose context comes from [WithoutHedging], or that carries
// [HeaderHedging]: off, is not hedged (the plain path: one region, with
// failover to the next on a 503 or transport error).
// RoundTrip reads the caller's request, GetBody included, only before it
// returns: the first attempt shares it, every other attempt copies it
// first, and one that would start after RoundTrip returned is not sent.
//
// Every attempt, hedges and local retries included, goes through next: a
// client-side rate limiter there is charged for each, and the attempts it
// refuses are transport errors the caller does not see when the other leg
// answers (hedgingotel counts them in cosmos.hedge.attempts_total; bound
// the hedges with [WithHedgeGate]). A 429's wait comes from
// x-ms-retry-after-ms or, without it, the standard Retry-After (seconds or
// an HTTP-date); the leg waits at most [hedging.DefaultMaxRetryAfter] (30
// s) and only when the wait ends before the deadline, else the 429 is
// returned at once. The returned RoundTripper's CloseIdleConnections
// closes next's idle connections (next serves every region).
//
// When next is known to return promptly once a request's context is
// cancelled (net/http's *http.Transport, golang.org/x/net/http2's, or an
// http.RoundTripper implementing [hedging.Cancellable] and saying so), the
// first region's request runs on the caller's goroutine and nothing else
// exists for the request unless the threshold fires or an upgrade-path
// answer arrives (spec §6.5 goal 6); a won hedge cancels it and RoundTrip
// returns once next.RoundTrip for it has returned. A RoundTripper that
// wraps net/http's without declaring it gets the shape in which every
// attempt has its own goroutine and RoundTrip returns as soon as the race
// is decided, whatever a losing attempt does.
//
// A hedged request that ends without a final response returns the most
// recent transient response (both legs 503, say: the later 503, with its
// body), as a plain transport would return its only one. When there is none
// (the deadline or the request's context ended the race first, or the last
// attempt got no response) it returns a *hedging.Error (errors.Is with
// context.DeadlineExceeded, context.Canceled or the transport's error).
// RoundTrip fails without sending anything when the request marks itself
// idempotent with an empty Idempotency-Key or X-Idempotency-Key value.
//
// Feed pages (spec §16 Phase 2): a request carrying a continuation (by
// default Cosmos DB's x-ms-continuation, or a change feed's If-None-Match)
// is hedged or pinned by [ContinuationRules] ([WithContinuation]): a
// region-affine continuation (the change feed's, by default) goes only to
// the region the request addresses, whichever configured region that is,
// never hedged and never failed over; a portable one is hedged like any
// read unless the rules' Policy pins it. The environment is read once here
// (spec §4.4: AZURE_COSMOS_HEDGING_ENABLED and its _OVERRIDE, and
// AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD); no setting lifts a pin.
//
// Errors: NewRoundTripper itself fails when an environment variable of
// [hedging.LoadEnv] does not parse, or when next is nil, regions is
// empty, a region has an empty or duplicate name, a URL that does not
// parse, is not http or https, carries user information, a query or a
// fragment, or addresses the same requests as another region's, or an
// option is nil or invalid.
//
// Allocation: on the happy path (the first region answers before the
// threshold) a request over net/http's transport costs 5 allocations more
// than next.RoundTrip (TestHappyPathAllocsBar holds it; the README's
// Benchmarks section gives the figures): the request's state, one object (what its
// attempts share, the first attempt's copy of the request and its result
// body, and what [hedging.Client.Do] hands out: the Response, without a
// copy of the hedge diagnostics, which RoundTrip never returns, and the
// first attempt's context), and net/http's registration of its own per-request
// context under that context (4: the context's Done channel, and the
// context package's callback, its stop function and the wrapper holding
// it).
func NewRoundTripper(next http.RoundTripper, regions []Region, opts ...Option) (http.RoundTripper, error) {
	if next == nil {
		return nil, errors.New("hedginghttp: NewRoundTripper: next is nil (pass http.DefaultTransport explicitly)")
	}
	if len(regions) == 0 {
		return nil, errors.New("hedginghttp: NewRoundTripper: no regions")
	}
	env, err := hedging.LoadEnv(os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("hedginghttp: NewRoundTripper: %w", err)
	}
	s := settings{partition: defaultPartition}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("hedginghttp: NewRoundTripper: opts[%d] is nil", i)
		}
		if err := o(&s); err != nil {
			return nil, err
		}
	}
	if s.gate != nil {
		hs, ok := s.strategy.HedgingStrategy()
		if !ok {
			hs = hedging.NewHedgingStrategy(hedging.DriverDefaultThreshold(s.timeout))
		}
		hs.Gate = s.gate
		s.strategy = hedging.Hedging(hs)
	}
	rt := &roundTripper{next: next, timeout: s.timeout, partition: s.partition, cont: s.cont.withDefaults()}
	cfg := hedging.Config{Strategy: s.strategy, Logger: s.logger, Observer: s.observer, RequestTimeout: s.timeout,
		Phase: hedging.Phase2, Env: env, UnavailableAfter: s.unavailableAfter, UnavailableFor: s.unavailableFor}
	t := &Transport{RoundTripper: next, BaseURLs: make(map[string]string, len(regions)), bases: make([]keyedBase, 0, len(regions))}
	if s.prepare != nil {
		prepare := s.prepare
		t.Prepare = func(req *http.Request, _ *hedging.Operation, a hedging.Attempt) error {
			return prepare(req, string(a.Endpoint.Region))
		}
	}
	for i, r := range regions {
		if r.Name == "" {
			return nil, fmt.Errorf("hedginghttp: NewRoundTripper: regions[%d]: empty name", i)
		}
		if _, dup := t.BaseURLs[r.Name]; dup {
			return nil, fmt.Errorf("hedginghttp: NewRoundTripper: regions[%d]: region %q listed twice", i, r.Name)
		}
		b, err := parseBase(r.URL, true)
		if err != nil {
			return nil, fmt.Errorf("hedginghttp: NewRoundTripper: regions[%d] (%q): %w", i, r.Name, err)
		}
		for j, o := range regions[:i] {
			if ob, _ := lookupBase(t.bases, o.Name); b.equal(ob) {
				return nil, fmt.Errorf("hedginghttp: NewRoundTripper: regions[%d] (%q): URL %q addresses the same requests as regions[%d] (%q, %q)", i, r.Name, r.URL, j, o.Name, o.URL)
			}
		}
		if i == 0 {
			rt.first, rt.firstName = b, r.Name
		}
		t.BaseURLs[r.Name] = r.URL
		t.bases = append(t.bases, keyedBase{r.Name, b})
		cfg.Regions = append(cfg.Regions, hedging.Endpoint{Region: hedging.Region(r.Name), Key: r.Name})
	}
	sortBases(t.bases)
	rt.bases = t.bases
	cfg.Transport = t
	c, err := hedging.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("hedginghttp: NewRoundTripper: %w", err)
	}
	rt.client = c
	rt.inline = t.ReturnsOnCancel()
	return rt, nil
}

// RoundTrip implements http.RoundTripper; see [NewRoundTripper].
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	at := addressed(rt.bases, req.URL)
	if !at.ok {
		return rt.next.RoundTrip(req)
	}
	region := at.key
	kind, cont := rt.cont.classify(req, hedging.Region(region))
	var remembered hedging.Region // the serving region the cursor memory gave
	if !cont.Cold() {
		if served, ok := rt.cursors.servedBy(cont.Token); ok {
			cont.IssuedBy, remembered = served, served // §16: the cursor is the serving region's
		}
	} else if kind == hedging.PointRead && isQuery(req) {
		kind = hedging.QueryPage // a query's first page
	}
	// Only continuations go from another region. (region is the first
	// region's name when its base is the longest match; the URL may still
	// lie under the first region's shorter base.)
	if cont.Cold() && region != rt.firstName {
		if _, _, first := rt.first.addresses(req.URL); !first {
			return rt.next.RoundTrip(req)
		}
	}
	read, err := rt.replayableRead(req)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	if !read {
		return rt.next.RoundTrip(req)
	}
	// The attempts read req only until RoundTrip returns (see call): a
	// losing attempt may still run after that, when the caller may reuse
	// req.
	part := rt.partition(req)
	off, header := optedOut(req)
	c := &call{orig: req, shallow: rt.inline, strip: header, at: at}
	op := &hedging.Operation{Kind: kind, Continuation: cont, Method: req.Method, Timeout: rt.timeout, Request: c, Partition: part}
	if off {
		op.HedgingEnabled = hedging.SwitchOff // §11.3 operation layer
	}
	pin := rt.pin(kind, cont, part)
	if pin != "" {
		rt.client.Pin(op, pin) // §16: region-affine, or pinned by the policy
	}
	resp, err := rt.client.Do(req.Context(), op)
	c.done()
	if err != nil && pin != "" && pin == remembered && req.Context().Err() == nil {
		// The remembered serving region failed the page (no final
		// response): forget it, so the caller's retry resumes the chain in
		// the region it addresses (issue 26 A1, the SDKs' failover).
		rt.cursors.forget(cont.Token, pin)
	}
	if req.Body != nil {
		// Attempts read replays (GetBody); the original is closed here, as
		// a RoundTripper must.
		_ = req.Body.Close()
	}
	if err != nil {
		var he *hedging.Error
		if errors.As(err, &he) && he.Body != nil {
			if hr, ok := HTTPResponse(he.Body); ok {
				return hr, nil // the most recent transient response
			}
			_ = he.Body.Close()
		}
		return nil, err
	}
	hr, ok := HTTPResponse(resp.Result.Body)
	if !ok {
		if resp.Result.Body != nil {
			_ = resp.Result.Body.Close() // releases the operation (unreachable with rt's own Transport)
		}
		return nil, errors.New("hedginghttp: the winning attempt carried no HTTP response")
	}
	switch kind {
	case hedging.ChangeFeedPage:
		rt.cursors.record(headerValue(hr.Header, HeaderETag), resp.Region)
	case hedging.QueryPage:
		rt.cursors.record(headerValue(hr.Header, rt.cont.Continuation), resp.Region)
	}
	return hr, nil
}

// CloseIdleConnections closes the idle connections of next (the
// RoundTripper every region's requests go through), when it has a
// CloseIdleConnections method, as an http.Client's CloseIdleConnections
// expects of a wrapping RoundTripper.
func (rt *roundTripper) CloseIdleConnections() { closeIdle(rt.next) }

// closeIdle calls rt's CloseIdleConnections method, if it has one.
func closeIdle(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// HeaderIsQuery marks a Cosmos DB query request (a POST of the query
// text) with the value "True": [NewRoundTripper] hedges it as a query
// page, as the .NET and Java SDKs hedge every query page (issue 26 A4),
// without an Idempotency-Key.
const HeaderIsQuery = "X-Ms-Documentdb-Isquery"

// isQuery reports whether req is a Cosmos DB query request (HeaderIsQuery
// true, compared case-insensitively).
func isQuery(req *http.Request) bool {
	for _, v := range req.Header[HeaderIsQuery] {
		if strings.EqualFold(strings.TrimSpace(v), "true") {
			return true
		}
	}
	return false
}

// replayableRead reports whether req is a read whose body can be replayed,
// and an error for a request marked idempotent with an empty key.
func (rt *roundTripper) replayableRead(req *http.Request) (bool, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, "":
	case http.MethodPost:
		if isQuery(req) {
			break // a query page reads (§16 Phase 2)
		}
		fallthrough
	default:
		marked := false
		for _, k := range [...]string{"Idempotency-Key", "X-Idempotency-Key"} {
			v, ok := req.Header[k]
			if !ok {
				continue
			}
			marked = true
			for _, x := range v {
				if strings.TrimSpace(x) == "" {
					return false, fmt.Errorf("hedginghttp: %s %s: empty %s value (omit the header, or give it no values to mark the request idempotent without sending it)", req.Method, req.URL.Redacted(), k)
				}
			}
		}
		if !marked {
			return false, nil
		}
	}
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil, nil
}
