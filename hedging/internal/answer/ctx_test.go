package answer

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

type ctxKey struct{}

func newInlineCtx(dl time.Time) *Ctx {
	c := new(Ctx)
	c.Init(context.WithValue(context.Background(), ctxKey{}, "v"), dl, !dl.IsZero())
	return c
}

// The inline primary's context behaves as the context.WithCancelCause
// context every other attempt gets: values, deadline, Err, Cause, and the
// cancellation of contexts derived from it (net/http derives one per
// request), for each kind of cause the race uses.
func TestInlineCtxCancel(t *testing.T) {
	custom := errors.New("the caller's own cause")
	wrappedDL := fmt.Errorf("the caller's deadline: %w", context.DeadlineExceeded)
	dl := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name           string
		cause          error
		err, wantCause error
	}{
		{"lost", context.Canceled, context.Canceled, context.Canceled},
		{"nil cause", nil, context.Canceled, context.Canceled},
		{"deadline", context.DeadlineExceeded, context.DeadlineExceeded, context.DeadlineExceeded},
		{"caller's cause", custom, context.Canceled, custom},
		{"wrapped deadline", wrappedDL, context.DeadlineExceeded, wrappedDL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newInlineCtx(dl)
			if got, ok := x.Deadline(); !ok || !got.Equal(dl) {
				t.Fatalf("Deadline = %v %v, want %v", got, ok, dl)
			}
			if x.Value(ctxKey{}) != "v" {
				t.Fatal("the operation's value is lost")
			}
			child, stopChild := context.WithCancel(x)
			defer stopChild()
			ran := make(chan struct{})
			context.AfterFunc(x, func() { close(ran) })
			done := x.Done()
			if x.Err() != nil || child.Err() != nil {
				t.Fatal("cancelled before cancel")
			}
			x.Cancel(tc.cause)
			<-done
			<-child.Done()
			<-ran
			if x.Err() != tc.err || child.Err() != tc.err {
				t.Fatalf("Err = %v, child %v; want %v", x.Err(), child.Err(), tc.err)
			}
			if got := context.Cause(x); got != tc.wantCause {
				t.Fatalf("Cause = %v, want %v", got, tc.wantCause)
			}
			if got := context.Cause(child); got != tc.wantCause {
				t.Fatalf("child's Cause = %v, want %v", got, tc.wantCause)
			}
			if x.Value(ctxKey{}) != "v" {
				t.Fatal("the operation's value is lost after cancel")
			}
			late, stopLate := context.WithCancel(x) // derived once cancelled
			defer stopLate()
			<-late.Done()
			if got := context.Cause(late); got != tc.wantCause {
				t.Fatalf("late child's Cause = %v, want %v", got, tc.wantCause)
			}
			x.Cancel(custom) // a second cancel changes nothing
			if x.Err() != tc.err {
				t.Fatalf("Err after a second cancel = %v", x.Err())
			}
		})
	}
}

// A context derived from the inline primary's registers through AfterFunc
// (no goroutine per derived context), and unregisters when it ends first:
// cancelling the attempt later runs nothing of it.
func TestInlineCtxAfterFuncStop(t *testing.T) {
	x := newInlineCtx(time.Time{})
	if _, ok := x.Deadline(); ok {
		t.Fatal("a deadline without one")
	}
	before := runtime.NumGoroutine()
	var children []context.CancelFunc
	var ctxs []context.Context
	for range 3 {
		c, cancel := context.WithCancel(x)
		children, ctxs = append(children, cancel), append(ctxs, c)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("goroutines %d -> %d: a derived context watches from a goroutine", before, n)
	}
	children[1]() // ends first: unregistered
	if !x.firstLive || x.more.second.live || !x.more.rest[0].live {
		t.Fatalf("registrations live: %v %v %v, want true false true", x.firstLive, x.more.second.live, x.more.rest[0].live)
	}
	ran := 0
	stop := x.AfterFunc(func() { ran++ })
	if !stop() || stop() {
		t.Fatal("stop: want true, then false")
	}
	x.Cancel(context.Canceled)
	for i, c := range ctxs {
		if c.Err() == nil {
			t.Fatalf("derived context %d not cancelled", i)
		}
	}
	if ran != 0 {
		t.Fatal("a stopped function ran")
	}
	got := make(chan struct{})
	if x.AfterFunc(func() { close(got) })() {
		t.Fatal("stop after cancellation reported true")
	}
	<-got // registered after cancellation: runs at once
	for _, c := range children {
		c()
	}
}

// Whoever sees the inline context's Done closed sees the contexts derived
// from it cancelled too, with the cause (as a context.WithCancelCause's
// children are): net/http's per-request context, derived from it, is
// cancelled by the time an attempt woken by Done reads it (the race's
// TestDoAttemptCancelCause, inline shape, read a nil cause now and then
// under -race when Done was closed first).
func TestInlineCtxDoneAfterDerived(t *testing.T) {
	for i := range 2000 {
		x := newInlineCtx(time.Time{})
		child, stop := context.WithCancel(x)
		done := x.Done()
		got := make(chan error)
		go func() {
			<-done
			got <- context.Cause(child)
		}()
		x.Cancel(context.Canceled)
		if err := <-got; err != context.Canceled {
			t.Fatalf("round %d: Done closed, the derived context's Cause is %v", i, err)
		}
		stop()
	}
}
