package hedging

import "context"

// Transport performs one attempt for [Client.Do]. Send blocks until the
// attempt has a result — for a response, as soon as its status is known:
// the race decides finality from the status alone (spec §7.2) — or ctx is
// cancelled (the race cancelled the attempt or the operation ended). ctx
// carries the values of Do's context and the operation's deadline. A
// transport failure (no response) is reported in Result.Err; a response
// body, if any, in Result.Body, unread (Do gives the winner's to the caller
// and closes the others). ctx outlives Send when its result's body is the
// one Do hands to the caller: it stays live while the caller reads, ends
// when the caller's context ends or the operation's deadline passes, and
// on Close, so a body that reads through ctx (as net/http's does) follows
// the caller's context. Send should return promptly after cancellation;
// unless the transport declares that it does ([Cancellable]), Do does not
// wait for it: an attempt still running when the race ends is abandoned and
// its late result's body closed. A panic in Send is recovered and reported
// as a transport error. Implementations must be safe for concurrent use:
// both legs may be in flight at once.
type Transport interface {
	Send(ctx context.Context, op *Operation, a Attempt) Result
}

// Cancellable is implemented by a [Transport] that declares that its Send
// returns promptly once its ctx is cancelled, without waiting for the
// network: a transport over net/http's *http.Transport does (a request
// whose context is cancelled fails at once, whatever its connection is
// doing). [NewClient] asks once; when ReturnsOnCancel reports true,
// [Client.Do] runs the primary's first attempt on the caller's goroutine
// (spec §6.5 goal 6: no hedge task and no per-hedge state on the happy
// path) and starts a goroutine only for what a hedge needs, when the
// threshold fires or an upgrade-path answer arrives. A won hedge then
// cancels the primary's attempt and Do returns once that Send has
// returned. Every later attempt (local retries included) still runs on a
// goroutine of its own. A transport that cannot promise this keeps the
// shape in which every attempt has its own goroutine and Do returns as soon
// as the race is decided, whatever a losing Send does.
type Cancellable interface {
	// ReturnsOnCancel reports whether Send returns promptly once its ctx
	// is cancelled.
	ReturnsOnCancel() bool
}
