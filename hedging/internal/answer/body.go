package answer

import (
	"context"
	"io"
	"time"
)

// Body is a body hedging.Client.Do hands to its caller (Response.Result.Body,
// Error.Body): the transport's body RC, whose attempt's context Cancel
// cancels when the caller's ctx ends (StopCtx unregisters that) or the
// operation's deadline passes (Timer), and on Close.
type Body struct {
	RC      io.ReadCloser
	Cancel  Canceller   // cancels the attempt's context
	StopCtx func() bool // unregisters from ctx; nil when ctx never ends
	Timer   *time.Timer // the operation's deadline from op.Timeout; nil when none
}

// Read reads the transport's body.
func (b *Body) Read(p []byte) (int, error) { return b.RC.Read(p) }

// Close closes the transport's body, then releases the attempt's context.
func (b *Body) Close() error {
	err := b.RC.Close()
	if b.StopCtx != nil {
		b.StopCtx()
	}
	if b.Timer != nil {
		b.Timer.Stop()
	}
	b.Cancel.Cancel(context.Canceled)
	return err
}

// Unwrap returns the transport's body (for example the one
// hedginghttp.HTTPResponse looks for).
func (b *Body) Unwrap() io.ReadCloser { return b.RC }
