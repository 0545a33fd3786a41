// Package hedginghttp hedges HTTP reads across regions (spec §6) for a Go
// service: [NewRoundTripper] wraps an http.RoundTripper so that an
// http.Client's reads to the first region are copied to the second when the
// first is slow, and [Transport] is the HTTP [hedging.Transport] for
// hedging.Client.Do.
//
// # One trust domain
//
// A hedged request goes to every configured region as the caller wrote it:
// its Authorization header, cookies and every other credential reach the
// second region too (and a third, when routing falls back to it). Configure
// only regions of one trust domain, such as one Cosmos DB account's
// regional endpoints. When each region needs its own credentials (a
// signature over the host, a per-region token), sign each region's copy
// with [WithPrepare], which sees every attempt's own request and the
// region's name, or in the next RoundTripper, which receives every request,
// hedged or not, with the URL of the region it goes to.
//
// # Partitions and the breaker
//
// Each RoundTripper keeps its own state (nothing is shared between two
// RoundTrippers): per partition, a streak of alternate wins (spec §9.5),
// 503 marks (§6.5 #10) and the session LSN (§9.2). After five consecutive
// alternate wins (hedging.DefaultConsecutiveHedgeWinThreshold) on a
// partition over at least 1 s (hedging.DefaultHedgeWinMinSpan: a pause of
// the first region does not trip it), that partition's requests go to the
// second region first for
// 30 s (hedging.DefaultProbeInterval), then the first region is tried
// again; any final answer of the first region resets the streak. Other
// partitions are not affected. A request's partition comes from
// [WithPartitionKey]: by default from the Cosmos DB partition-key header
// ([HeaderPartitionKey]), spread over 256 partitions; requests without it
// share one partition, so for them the breaker acts on the whole
// RoundTripper.
//
// # Feed pages
//
// A request carrying a feed continuation is one page of a feed (spec §16
// Phase 2, §17 Q9), and [ContinuationRules] decide where it may go: by
// default a Cosmos DB change-feed page ("A-IM: Incremental feed" with an
// If-None-Match ETag) has a region-affine continuation, pinned to the
// region that issued it ([hedging.Client.Pin]: no hedge, no upgrade path,
// no failover, whatever the settings and the environment); its cold page
// (no ETag, or "*", [FromNow]) is not hedged either, nor pinned; and a
// query page (x-ms-continuation) a portable one, hedged unless the rules'
// [feed.Affinity] policy pins it. The issuing region is the one that
// served the response that handed the continuation out (the RoundTripper
// remembers it for the last 4096 it returned), whichever region's URL the
// next page addresses: an http.Client that sends every page to the first
// region still sends the second region's cursor to the second region. A
// continuation it does not remember belongs to the region the request
// addresses (that of the previous response's Request.URL is right). The
// response and its next continuation are the winner's alone. When a
// pinned region fails the page (a transport error or a non-final status),
// the failure is returned and the RoundTripper forgets which region served
// that continuation: retry the same continuation addressed to another
// region to resume the chain there, as the SDKs fail over (see
// [ContinuationRules]), or restart a metadata chain cold.
//
// # Connections
//
// The loser of a race is cancelled. Over HTTP/2 that resets one stream and
// the connection stays pooled. Over HTTP/1.1 net/http closes a connection
// whose request was cancelled before its response was read, so each
// cancelled loser costs a new connection (TCP, and TLS, handshake) for a
// later request: about one dial per hedged request whose loser is still
// reading, none over HTTP/2 (BenchmarkHedgedLoserDials reports dials/op for
// both). To avoid it, speak HTTP/2 to the regions: an
// http.Transport negotiates it over TLS by default (keep ForceAttemptHTTP2
// when you set a custom DialContext or TLSClientConfig), and
// http.Protocols.SetUnencryptedHTTP2 enables it without TLS. Over HTTP/1.1,
// a threshold near the first region's p99 keeps hedges, and so dials, to
// about 1% of requests.
package hedginghttp
