package hedging

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names used by [HTTPTransport] (canonical form). The x-ms-* names
// are the Cosmos DB wire headers the spec refers to; the execution-context
// marker is hedgelab's on-wire form of ExecutionContext::Hedging (§6.5 #6,
// §10.2).
const (
	// HeaderHubRegionProcessingOnly is sent with value "True" on attempts
	// whose Attempt.HubRegionProcessingOnly is set (spec §9.6).
	HeaderHubRegionProcessingOnly = "X-Ms-Cosmos-Hub-Region-Processing-Only"
	// HeaderSessionToken carries the session token both ways (spec §9.2);
	// see HTTPTransport for the simplified format.
	HeaderSessionToken = "X-Ms-Session-Token"
	// HeaderSubStatus is the response's sub-status code (spec §7).
	HeaderSubStatus = "X-Ms-Substatus"
	// HeaderRequestCharge is the response's request charge in RU.
	HeaderRequestCharge = "X-Ms-Request-Charge"
	// HeaderRetryAfterMs is a 429's suggested backoff in milliseconds.
	HeaderRetryAfterMs = "X-Ms-Retry-After-Ms"
	// HeaderExecutionContext is sent with value "hedging" on the
	// alternate's attempts (Attempt.Hedging).
	HeaderExecutionContext = "X-Hedgelab-Execution-Context"
)

// MaxDrainBytes is how much of a response body [HTTPTransport] reads, after
// the BodyHook (if any), so that the connection can be reused; a longer
// body is abandoned and its connection closed.
const MaxDrainBytes = 256 << 10

var (
	headerTrue    = []string{"True"}
	headerHedging = []string{"hedging"}
)

// HTTPTransport is a [Transport] over net/http: one HTTP request per
// attempt, sent to the base URL of the attempt's endpoint.
//
// Request: method op.Method (GET when empty), URL BaseURLs[Endpoint.Key] +
// op.Path, body op.Body (none when nil), context the attempt's context (so
// the race cancels a losing attempt by cancelling its request). Headers:
//
//   - x-ms-cosmos-hub-region-processing-only: True when
//     Attempt.HubRegionProcessingOnly (spec §9.6);
//   - x-ms-session-token: "<partition>:<lsn>" when Attempt.SessionLSN > 0,
//     a simplified single-LSN form of the Cosmos session token (§9.2),
//     "0" standing for an empty op.Partition;
//   - x-hedgelab-execution-context: hedging on the alternate's attempts
//     (Attempt.Hedging).
//
// Response: Status.Code is the HTTP status code; Status.SubStatus
// x-ms-substatus; RequestCharge x-ms-request-charge (RU, decimal);
// SessionLSN the largest number found after the last ':' or '#' of each
// comma-separated token of x-ms-session-token ("0:-1#42" and "0:42" both
// give 42); RetryAfter x-ms-retry-after-ms (milliseconds, decimal). A
// malformed or absent header reads as zero. The body is handed to BodyHook
// when set, then drained (up to [MaxDrainBytes]) and closed before Send
// returns: [Result] has no body, so a caller that needs the winner's body
// collects it in BodyHook (see there).
//
// Errors: a request that could not be built or sent (no base URL for the
// endpoint, a dial error, a cancelled context, ...) and a BodyHook error are
// reported in Result.Err, which the race treats as transient (spec §7.2).
//
// Safe for concurrent use once configured; do not modify its fields while
// requests are in flight.
type HTTPTransport struct {
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// BaseURLs maps an endpoint key (Endpoint.Key) to the base URL of that
	// endpoint, such as "https://acct-westus.example.com" (no trailing
	// slash; op.Path is appended verbatim).
	BaseURLs map[string]string
	// BaseURL, when set, is consulted instead of BaseURLs; ok=false means
	// the endpoint is unknown.
	BaseURL func(e Endpoint) (url string, ok bool)
	// Prepare, when set, is called on every request before it is sent
	// (authorization, extra headers); an error fails the attempt.
	Prepare func(req *http.Request, op *Operation, a Attempt) error
	// BodyHook, when set, is called with every response body of every
	// attempt, losers included, before the body is drained and closed; it
	// must not keep body. ctx is the attempt's context, which carries the
	// values of the ctx given to Client.Do: to keep the winner's body, put a
	// per-call collector in that ctx, store each body under its a.Leg, and
	// after Do returns read the one of Response.Leg. An error is reported
	// in Result.Err (a transient result).
	BodyHook func(ctx context.Context, a Attempt, st Status, body io.Reader) error
}

// Send performs attempt a of op as one HTTP request; see [HTTPTransport].
func (t *HTTPTransport) Send(ctx context.Context, op *Operation, a Attempt) Result {
	base, ok := t.baseURL(a.Endpoint)
	if !ok {
		return Result{Err: fmt.Errorf("hedging: HTTPTransport: no base URL for endpoint %q (region %q)", a.Endpoint.Key, a.Endpoint.Region)}
	}
	method := op.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if op.Body != nil {
		body = bytes.NewReader(op.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+op.Path, body)
	if err != nil {
		return Result{Err: err}
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
	if t.Prepare != nil {
		if err := t.Prepare(req, op, a); err != nil {
			return Result{Err: err}
		}
	}
	client := t.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Result{Err: err}
	}
	h := resp.Header
	res := Result{
		Status:        Status{Code: resp.StatusCode, SubStatus: int(headerInt(h, HeaderSubStatus))},
		RequestCharge: headerFloat(h, HeaderRequestCharge),
		SessionLSN:    ParseSessionLSN(headerValue(h, HeaderSessionToken)),
	}
	if ms := headerFloat(h, HeaderRetryAfterMs); ms > 0 {
		res.RetryAfter = time.Duration(ms * float64(time.Millisecond))
	}
	if t.BodyHook != nil {
		if err := t.BodyHook(ctx, a, res.Status, resp.Body); err != nil {
			res.Err = err
		}
	}
	_, _ = io.CopyN(io.Discard, resp.Body, MaxDrainBytes)
	_ = resp.Body.Close()
	return res
}

func (t *HTTPTransport) baseURL(e Endpoint) (string, bool) {
	if t.BaseURL != nil {
		return t.BaseURL(e)
	}
	u, ok := t.BaseURLs[e.Key]
	return u, ok
}

// ParseSessionLSN extracts the session LSN from an x-ms-session-token value
// in the simplified form used by [HTTPTransport]: for each comma-separated
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

func headerInt(h http.Header, key string) int64 {
	v := strings.TrimSpace(headerValue(h, key))
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func headerFloat(h http.Header, key string) float64 {
	v := strings.TrimSpace(headerValue(h, key))
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0
	}
	return f
}
