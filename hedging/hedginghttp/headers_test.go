package hedginghttp

import (
	"net/http"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// TestReadHeadersMatchesLookups: the one-pass read of a response's header
// returns, for every header map (small ones walked, large ones looked up),
// what looking up each name returns, including empty value lists and
// names that differ only in case (not canonical, so not read).
func TestReadHeadersMatchesLookups(t *testing.T) {
	names := []string{HeaderSubStatus, HeaderRequestCharge, HeaderSessionToken, HeaderRetryAfterMs, HeaderRetryAfter,
		"x-ms-substatus", "Content-Type", "Date", "Content-Length", "X-Other"}
	rapid.Check(t, func(t *rapid.T) {
		h := http.Header{}
		n := rapid.IntRange(0, 14).Draw(t, "n")
		for i := range n {
			name := rapid.SampledFrom(names).Draw(t, "name")
			if i >= len(names) {
				name += strconv.Itoa(i) // grow past smallHeader
			}
			vals := rapid.SliceOfN(rapid.SampledFrom([]string{"", "1", "2.5", " 7 ", "x"}), 0, 2).Draw(t, "vals")
			h[name] = vals
		}
		want := responseHeaders{headerValue(h, HeaderSubStatus), headerValue(h, HeaderRequestCharge),
			headerValue(h, HeaderSessionToken), headerValue(h, HeaderRetryAfterMs), headerValue(h, HeaderRetryAfter)}
		if got := readHeaders(h); got != want {
			t.Fatalf("readHeaders(%v) = %+v, want %+v", h, got, want)
		}
	})
}
