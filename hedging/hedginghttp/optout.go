package hedginghttp

import (
	"context"
	"net/http"
	"strings"
)

// HeaderHedging switches hedging off for one request of
// [NewRoundTripper] with the value "off" (case-insensitive; "false", "0"
// and "no" too), like [WithoutHedging] does through the context. The
// header is the client's, not the service's: RoundTrip removes it from
// the copies it sends.
const HeaderHedging = "X-Hedgelab-Hedging"

type noHedgeKey struct{}

// WithoutHedging returns a copy of ctx that switches hedging off for the
// requests made with it through [NewRoundTripper]: each goes to the
// preferred region alone, with the plain path's failover (a 503 or a
// transport error tries the next region, spec §8.4), and no copy is sent
// at the threshold. It sets the operation layer of the master switch
// (spec §11.3: hedging.Operation.HedgingEnabled off), so only
// AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE=true, the operator's override,
// turns it back on. The request's [HeaderHedging] does the same.
func WithoutHedging(ctx context.Context) context.Context {
	return context.WithValue(ctx, noHedgeKey{}, true)
}

// optedOut reports whether req switches hedging off (see [WithoutHedging]
// and [HeaderHedging]), and whether it carries the header.
func optedOut(req *http.Request) (off, header bool) {
	if v, ok := req.Header[HeaderHedging]; ok {
		for _, s := range v {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "off", "false", "0", "no":
				off = true
			}
		}
		header = true
	}
	if !off {
		off, _ = req.Context().Value(noHedgeKey{}).(bool)
	}
	return off, header
}
