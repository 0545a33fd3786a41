package hedging

import "context"

// Transport performs one attempt for [Client.Do]. Send blocks until the
// attempt completes or ctx is cancelled (the race cancelled the attempt or
// the operation ended); it must return promptly after cancellation and
// report a transport failure in Result.Err. Implementations must be safe for
// concurrent use: both legs may be in flight at once.
type Transport interface {
	Send(ctx context.Context, op *Operation, a Attempt) Result
}
