package hedginghttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"hedgelab/hedging"
)

// Header names used by [Transport] (canonical form). The x-ms-* names are
// the Cosmos DB wire headers the spec refers to; the execution-context
// marker is hedgelab's on-wire form of ExecutionContext::Hedging (spec
// §6.5 #6, §10.2).
const (
	// HeaderHubRegionProcessingOnly is sent with value "True" on attempts
	// whose Attempt.HubRegionProcessingOnly is set (spec §9.6).
	HeaderHubRegionProcessingOnly = "X-Ms-Cosmos-Hub-Region-Processing-Only"
	// HeaderSessionToken carries the session token both ways (spec §9.2);
	// see Transport for the simplified format.
	HeaderSessionToken = "X-Ms-Session-Token"
	// HeaderSubStatus is the response's sub-status code (spec §7.2).
	HeaderSubStatus = "X-Ms-Substatus"
	// HeaderRequestCharge is the response's request charge in RU.
	HeaderRequestCharge = "X-Ms-Request-Charge"
	// HeaderRetryAfterMs is a 429's suggested backoff in milliseconds.
	HeaderRetryAfterMs = "X-Ms-Retry-After-Ms"
	// HeaderExecutionContext is sent with value "hedging" on the
	// alternate's attempts (Attempt.Hedging).
	HeaderExecutionContext = "X-Hedgelab-Execution-Context"
)

var (
	headerTrue    = []string{"True"}
	headerHedging = []string{"hedging"}
)

// Transport is a [hedging.Transport] over net/http: one HTTP request per
// attempt, sent to the base URL of the attempt's endpoint through
// RoundTripper (redirects are not followed; cookies are not kept).
//
// Request: when op.Request holds an *http.Request (as [NewRoundTripper]
// arranges, with its own copy of the caller's request), the attempt sends a
// copy of it with the attempt's context and its body replayed with GetBody
// (a body that cannot be replayed fails the attempt); the copy's header map
// is op.Request's until the attempt adds a header, then its own, and its
// own from the start when Prepare is set (a deep copy, http.Request.Clone). When the
// request's URL addresses one of BaseURLs (same scheme, host name compared
// case-insensitively, same port once a default port :80/:443 is filled in,
// path under the base's path), the copy sent to another endpoint gets that
// endpoint's base URL followed by the path below the addressed base:
// "http://a.example/a/docs/1" addressing "http://a.example/a" goes to
// "https://b.example/b/docs/1" for the base "https://b.example/b". A request
// that addresses none of them keeps its path and gets the endpoint's scheme
// and host. Otherwise it builds one: method op.Method (GET when empty), URL
// base URL + op.Path, body op.Body (none when nil). Either way the request
// carries the attempt's context, so the race cancels a losing attempt by
// cancelling its request, and its deadline is the operation's. Headers
// added to the attempt's request:
//
//   - x-ms-cosmos-hub-region-processing-only: True when
//     Attempt.HubRegionProcessingOnly (spec §9.6);
//   - x-ms-session-token: "<partition>:<lsn>" when Attempt.SessionLSN > 0,
//     a simplified single-LSN form of the Cosmos session token (§9.2),
//     "0" standing for an empty op.Partition;
//   - x-hedgelab-execution-context: hedging on the alternate's attempts
//     (Attempt.Hedging).
//
// Response: Send returns as soon as the status line and headers arrive;
// finality is decided from them (spec §7.2), never from the body. Status.Code
// is the HTTP status code; Status.SubStatus x-ms-substatus; RequestCharge
// x-ms-request-charge (RU, decimal); SessionLSN the largest number after
// the last ':' or '#' of each comma-separated token of x-ms-session-token;
// RetryAfter x-ms-retry-after-ms (milliseconds, decimal) or, without it,
// the standard Retry-After (seconds, or an HTTP-date). A malformed or
// absent header reads as zero, and so does a request charge that is not a
// finite number >= 0 (NaN, ±Inf, negative) and a retry-after that is not a
// finite number > 0; a retry-after beyond the largest time.Duration (~292
// years) saturates at it, and the race honours at most
// [hedging.RetryOptions].MaxRetryAfter of it. Result.Body is the response
// body, unread: [hedging.Client.Do] hands the winner's to its caller (use
// [HTTPResponse] to get the whole *http.Response) and closes every other.
//
// Connections: the race cancels a losing attempt's request and Do closes
// its body unread, which over HTTP/1.1 costs the connection (see the
// package documentation, Connections).
//
// Errors: a request that could not be built or sent (no base URL for the
// endpoint, a dial error, a cancelled context, ...) is reported in
// Result.Err, which the race treats as transient (spec §7.2).
//
// Safe for concurrent use once configured; do not modify its fields while
// requests are in flight.
type Transport struct {
	// RoundTripper sends the requests; nil means http.DefaultTransport.
	RoundTripper http.RoundTripper
	// BaseURLs maps an endpoint key (Endpoint.Key) to the base URL of that
	// endpoint, such as "https://acct-westus.example.com" (no trailing
	// slash; op.Path is appended verbatim).
	BaseURLs map[string]string
	// Prepare, when set, is called on every request before it is sent
	// (authorization, extra headers); an error fails the attempt (a
	// transport error, transient). req is the attempt's own: Prepare may
	// modify it, header map included.
	Prepare func(req *http.Request, op *hedging.Operation, a hedging.Attempt) error

	// bases are BaseURLs parsed, in key order, set by NewRoundTripper;
	// nil: parse BaseURLs on every attempt that needs them.
	bases []keyedBase
}

// keyedBase is one parsed entry of Transport.BaseURLs.
type keyedBase struct {
	key  string
	base baseURL
}

// lookupBase returns the base of endpoint key.
func lookupBase(bases []keyedBase, key string) (*baseURL, bool) {
	for i := range bases {
		if bases[i].key == key {
			return &bases[i].base, true
		}
	}
	return nil, false
}

// Send performs attempt a of op as one HTTP request; see [Transport].
func (t *Transport) Send(ctx context.Context, op *hedging.Operation, a hedging.Attempt) hedging.Result {
	var req *http.Request
	var err error
	var body *responseBody // the result body to fill; nil: make one
	shared := false        // req shares its header map with the request it copies
	switch orig := op.Request.(type) {
	case *call:
		req, body, shared, err = orig.request(t, ctx, a)
	case *http.Request:
		req, err = t.attemptRequest(ctx, orig, a.Endpoint, t.Prepare != nil, nil, nil)
		shared = t.Prepare == nil
	default:
		base, ok := t.BaseURLs[a.Endpoint.Key]
		if !ok {
			return hedging.Result{Err: errNoBase(a.Endpoint)}
		}
		req, err = newRequest(ctx, op, base)
	}
	if err != nil {
		return hedging.Result{Err: err}
	}
	if a.HubRegionProcessingOnly || a.SessionLSN > 0 || a.Hedging {
		if shared {
			req.Header = req.Header.Clone()
		}
		if req.Header == nil {
			req.Header = make(http.Header)
		}
		if a.HubRegionProcessingOnly {
			req.Header[HeaderHubRegionProcessingOnly] = headerTrue
		}
		if a.SessionLSN > 0 {
			p := op.Partition
			if p == "" {
				p = "0"
			}
			req.Header[HeaderSessionToken] = []string{p + ":" + strconv.FormatInt(a.SessionLSN, 10)}
		}
		if a.Hedging {
			req.Header[HeaderExecutionContext] = headerHedging
		}
	}
	if t.Prepare != nil {
		if err := t.Prepare(req, op, a); err != nil {
			return hedging.Result{Err: err}
		}
	}
	rt := t.RoundTripper
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return hedging.Result{Err: err}
	}
	return resultOf(resp, body)
}

// newRequest builds the request of op from its Method, Path and Body.
func newRequest(ctx context.Context, op *hedging.Operation, base string) (*http.Request, error) {
	method := op.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if op.Body != nil {
		body = bytes.NewReader(op.Body)
	}
	return http.NewRequestWithContext(ctx, method, base+op.Path, body)
}

// attemptRequest returns the request of one attempt to endpoint key: a
// copy of orig with the attempt's context, rewritten for the endpoint (see
// [Transport]) and its body replayed. The copy is deep (http.Request.Clone)
// when deep is set; otherwise it shares orig's header map, which the
// caller must copy before writing to it, and is made in dst when dst is not
// nil (a new request otherwise). at, when not nil, is the base orig's URL
// addresses among t's bases, as addressed found it (RoundTrip already
// looked it up); nil: look it up.
func (t *Transport) attemptRequest(ctx context.Context, orig *http.Request, ep hedging.Endpoint, deep bool, dst *http.Request, at *addressing) (*http.Request, error) {
	key := ep.Key
	bases := t.bases
	if bases == nil {
		bases = parseBases(t.BaseURLs)
	}
	to, ok := lookupBase(bases, key)
	if !ok {
		if _, listed := t.BaseURLs[key]; !listed {
			return nil, errNoBase(ep)
		}
		return nil, fmt.Errorf("hedginghttp: the base URL of endpoint %q does not parse", key)
	}
	var req *http.Request
	switch {
	case deep:
		req = orig.Clone(ctx)
	case dst != nil:
		*dst = *orig.WithContext(ctx) // the inlined copy stays on the stack
		req = dst
	default:
		req = orig.WithContext(ctx)
	}
	var from addressing
	if at != nil {
		from = *at
	} else {
		from = addressed(bases, orig.URL)
	}
	if from.ok {
		if from.key != key {
			u := *orig.URL
			if err := to.rebase(&u, from.restOf(orig.URL)); err != nil {
				return nil, err
			}
			req.URL, req.Host = &u, ""
		}
	} else if !to.sameOrigin(orig.URL) {
		u := *orig.URL
		u.Scheme, u.Host, u.User = to.u.Scheme, to.u.Host, nil
		req.URL, req.Host = &u, ""
	}
	if orig.Body != nil && orig.Body != http.NoBody {
		if orig.GetBody == nil {
			return nil, errNoReplay
		}
		b, err := orig.GetBody()
		if err != nil {
			return nil, fmt.Errorf("hedginghttp: replaying the request body: %w", err)
		}
		req.Body = b
	}
	return req, nil
}

// errNoBase is the error of an attempt to an endpoint that BaseURLs does
// not list.
func errNoBase(ep hedging.Endpoint) error {
	return fmt.Errorf("hedginghttp: no base URL for endpoint %q (region %q)", ep.Key, ep.Region)
}

var errNoReplay = fmt.Errorf("hedginghttp: the request body cannot be replayed (no GetBody)")

// parseBases parses base URLs leniently, in key order; one that does not
// parse is left out.
func parseBases(m map[string]string) []keyedBase {
	out := make([]keyedBase, 0, len(m))
	for k, s := range m {
		if b, err := parseBase(s, false); err == nil {
			out = append(out, keyedBase{k, b})
		}
	}
	sortBases(out)
	return out
}

// sortBases puts bases in key order.
func sortBases(bases []keyedBase) {
	slices.SortFunc(bases, func(a, b keyedBase) int { return strings.Compare(a.key, b.key) })
}

// addressing is what addressed returns for a request's URL: the key of
// the base it addresses (ok), and its escaped path below that base (see
// restOf).
type addressing struct {
	key, rest string
	lazy      bool // rest is the URL's whole escaped path, not computed yet
	ok        bool
}

// restOf returns the escaped path of u, the URL a addresses, below the
// base a names.
func (a *addressing) restOf(u *url.URL) string {
	if a.lazy {
		return u.EscapedPath()
	}
	return a.rest
}

// addressed returns the base that u addresses and u's escaped path below
// it (see addressing): the longest prefix wins, then the smallest key
// (bases are in key order).
func addressed(bases []keyedBase, u *url.URL) (at addressing) {
	best := -1
	for i := range bases {
		b := &bases[i].base
		r, lazy, m := b.addresses(u)
		if !m {
			continue
		}
		if n := len(b.prefix); n > best {
			best, at = n, addressing{key: bases[i].key, rest: r, lazy: lazy}
		}
	}
	at.ok = best >= 0
	return at
}

// resultOf classifies resp from its status and headers (spec §7.2) and
// keeps it, unread, as the result's body, in b (nil: a new one).
func resultOf(resp *http.Response, b *responseBody) hedging.Result {
	hv := readHeaders(resp.Header)
	if b == nil {
		b = new(responseBody)
	}
	b.resp, b.body = resp, resp.Body
	return hedging.Result{
		Status:        hedging.Status{Code: resp.StatusCode, SubStatus: int(parseInt(hv.subStatus))},
		RequestCharge: requestCharge(hv.charge),
		SessionLSN:    ParseSessionLSN(hv.session),
		RetryAfter:    retryAfterOf(hv.retryAfterMs, hv.retryAfter),
		Body:          b,
	}
}

// responseHeaders holds the first value of each response header resultOf
// classifies by ("" when absent).
type responseHeaders struct {
	subStatus, charge, session, retryAfterMs, retryAfter string
}

// smallHeader is the size up to which readHeaders walks the header map
// once instead of looking up each of its five names (a walk costs about
// as much as a lookup per two entries under callgrind; a response on the
// happy path carries about four headers).
const smallHeader = 6

// readHeaders returns h's values of the headers resultOf reads, as
// headerValue would return them (keys compared exactly: net/http
// canonicalizes a response's header names).
func readHeaders(h http.Header) (r responseHeaders) {
	if len(h) > smallHeader {
		return responseHeaders{headerValue(h, HeaderSubStatus), headerValue(h, HeaderRequestCharge),
			headerValue(h, HeaderSessionToken), headerValue(h, HeaderRetryAfterMs), headerValue(h, HeaderRetryAfter)}
	}
	for k, v := range h {
		if len(v) == 0 {
			continue
		}
		switch k {
		case HeaderSubStatus:
			r.subStatus = v[0]
		case HeaderRequestCharge:
			r.charge = v[0]
		case HeaderSessionToken:
			r.session = v[0]
		case HeaderRetryAfterMs:
			r.retryAfterMs = v[0]
		case HeaderRetryAfter:
			r.retryAfter = v[0]
		}
	}
	return r
}

// requestCharge parses an x-ms-request-charge value (RU, decimal). A
// malformed value, and one that is not a finite number >= 0 (NaN, ±Inf, a
// negative charge), reads as zero.
func requestCharge(v string) float64 {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0 // absent: no parse error to allocate
	}
	if len(v) <= maxIntCharge && v[0] != '+' && v[0] != '-' {
		// A whole charge ("1", a point read's): strconv.Atoi reads it for
		// about a third of ParseFloat's instructions, to the same value
		// (every integer of up to 15 digits is a float64 exactly). Anything
		// else (a decimal, a sign, an exponent) fails it and is parsed as
		// a float.
		if n, err := strconv.Atoi(v); err == nil {
			return float64(n)
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0
	}
	return f
}

// maxIntCharge is the longest whole request charge requestCharge reads
// with strconv.Atoi: 15 decimal digits, below 2^53, so its float64 is
// exact.
const maxIntCharge = 15

// retryAfter parses an x-ms-retry-after-ms value (milliseconds, decimal).
// A malformed value, and one that is not a finite number > 0, reads as zero
// (no retry-after); a value beyond what a time.Duration holds (~292 years)
// saturates at the largest Duration instead of overflowing. How long the
// race honours a retry-after is [hedging.RetryOptions].MaxRetryAfter's
// business, not the parser's.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	ms, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(ms) || math.IsInf(ms, 0) || ms <= 0 {
		return 0
	}
	ns := ms * float64(time.Millisecond)
	if ns >= math.MaxInt64 { // float64(math.MaxInt64) is 2^63, itself out of range
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// HeaderRetryAfter is the standard Retry-After response header (RFC 9110
// §10.2.3): a delay in seconds or an HTTP-date. [Transport] reads it when
// the response carries no [HeaderRetryAfterMs].
const HeaderRetryAfter = "Retry-After"

// retryAfterOf returns the wait a response asks for from its
// x-ms-retry-after-ms value ms and its Retry-After value std (""
// when absent): ms when present (see retryAfter), else std: decimal
// seconds, or an HTTP-date less the time now (a date not in the future
// reads as zero). Malformed values read as zero; a value beyond the
// largest time.Duration saturates at it.
func retryAfterOf(ms, std string) time.Duration {
	if ms != "" {
		return retryAfter(ms)
	}
	v := strings.TrimSpace(std)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		if secs > math.MaxInt64/uint64(time.Second) {
			return math.MaxInt64
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// CloseIdleConnections closes the idle connections of RoundTripper
// (http.DefaultTransport when nil), when it has a CloseIdleConnections
// method.
func (t *Transport) CloseIdleConnections() {
	if t.RoundTripper == nil {
		closeIdle(http.DefaultTransport)
		return
	}
	closeIdle(t.RoundTripper)
}

// responseBody is the body of a result [Transport] returns: the response's
// body, with the *http.Response it came with for [HTTPResponse].
type responseBody struct {
	resp *http.Response
	body io.ReadCloser // resp.Body as the RoundTripper returned it
}

func (b *responseBody) Read(p []byte) (int, error) { return b.body.Read(p) }
func (b *responseBody) Close() error               { return b.body.Close() }

// HTTPResponse returns the *http.Response behind a result body returned by
// [Transport], directly or as handed out by [hedging.Client.Do]
// (Response.Result.Body, Error.Body), and false for any other body. The
// response's Body is body itself: reading or closing either is the same,
// and what Do ties to the body (the caller's context, the operation's
// deadline, the release on Close) holds for the response's Body too.
func HTTPResponse(body io.ReadCloser) (*http.Response, bool) {
	inner := body
	if u, ok := body.(interface{ Unwrap() io.ReadCloser }); ok {
		inner = u.Unwrap()
	}
	b, ok := inner.(*responseBody)
	if !ok || b == nil {
		return nil, false
	}
	b.resp.Body = body
	return b.resp, true
}

// ParseSessionLSN extracts the session LSN from an x-ms-session-token value
// in the simplified form used by [Transport]: for each comma-separated
// token, the decimal number after its last ':' or '#'; the largest wins.
// "0:42", "0:-1#42" and "1:7,0:42" all give 42. Empty or malformed input
// gives 0 (no session token).
func ParseSessionLSN(v string) int64 {
	var best int64
	for v != "" {
		tok := v
		if i := strings.IndexByte(v, ','); i >= 0 {
			tok, v = v[:i], v[i+1:]
		} else {
			v = ""
		}
		if i := strings.LastIndexAny(tok, ":#"); i >= 0 {
			tok = tok[i+1:]
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(tok), 10, 64); err == nil && n > best {
			best = n
		}
	}
	return best
}

func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// parseInt parses a decimal header value; absent or malformed reads as 0.
func parseInt(v string) int64 {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
