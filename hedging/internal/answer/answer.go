// Package answer holds what hedging.Client.Do hands out for one operation
// (the Response, its diagnostics, the body handed to the caller, the inline
// primary's attempt context) in one object, made fresh for every
// operation: by Do, or by the caller of Do as part of its own per-operation
// state (a Holder in Operation.Request, as hedginghttp's RoundTrip does),
// so that the happy path allocates it once. Nothing in it is pooled.
package answer

// Storage is one operation's answer; R and D are hedging's Response and
// HedgeDiagnostics.
type Storage[R, D any] struct {
	Resp R
	Diag D
	Body Body
	Ctx  Ctx
}

// Holder is implemented by an Operation.Request that carries the
// operation's Storage, fresh for the operation and used by no other.
type Holder[R, D any] interface {
	AnswerStorage() *Storage[R, D]
}
