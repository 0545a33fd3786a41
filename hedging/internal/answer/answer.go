// Package answer holds what hedging.Client.Do hands out for one operation
// (the Response, the body handed to the caller, the inline primary's
// attempt context) in one object, made fresh for every operation: by Do,
// or by the caller of Do as part of its own per-operation state (a Holder
// in Operation.Request, as hedginghttp's RoundTrip does), so that the
// happy path allocates it once. The Response's diagnostics are stored
// beside it (Do's own answer), or not at all when the caller of Do never
// reads them (a Holder that gives no place for them). Nothing in it is
// pooled.
package answer

// Storage is one operation's answer; R is hedging's Response.
type Storage[R any] struct {
	Resp R
	Body Body
	Ctx  Ctx
}

// Holder is implemented by an Operation.Request that carries the
// operation's Storage, fresh for the operation and used by no other.
// AnswerStorage also returns where Do copies the race's diagnostics (D is
// hedging's HedgeDiagnostics), or nil when the holder never reads the
// Response's Diagnostics: Do then leaves that field nil and copies
// nothing (the Response stays the holder's own, never handed to a user).
type Holder[R, D any] interface {
	AnswerStorage() (*Storage[R], *D)
}
