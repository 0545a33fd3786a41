package answer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// ctxModel is one side of TestInlineCtxLikeWithCancelCause: a context, how
// to cancel it, and what was registered on it.
type ctxModel struct {
	ctx    context.Context
	cancel func(error)
	stops  []func() bool
	ran    []*atomic.Int32
	kids   []context.Context
	kidEnd []context.CancelFunc
	// ownEnd: the child was ended before its parent (its Err is its own
	// context.Canceled on both sides).
	ownEnd []bool
}

func (m *ctxModel) register() {
	n := new(atomic.Int32)
	m.ran = append(m.ran, n)
	m.stops = append(m.stops, context.AfterFunc(m.ctx, func() { n.Add(1) }))
}

// ranCounts returns how often each registered function ran.
func (m *ctxModel) ranCounts() []int32 {
	out := make([]int32, len(m.ran))
	for i, n := range m.ran {
		out[i] = n.Load()
	}
	return out
}

// The inline primary's context behaves as a context.WithCancelCause
// context under any sequence of the operations net/http and the race use:
// AfterFunc registrations (context.AfterFunc, and contexts derived with
// context.WithCancel, which register through Ctx's AfterFunc method) and
// their stop functions, Cancel with any cause (repeated), Err,
// context.Cause, Done, Value, Deadline. Both sides are driven alike and
// compared after every step.
func TestInlineCtxLikeWithCancelCause(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dl := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		hasDL := rapid.Bool().Draw(rt, "deadline")
		parent := context.WithValue(context.Background(), ctxKey{}, "v")
		x := new(Ctx)
		x.Init(parent, dl, hasDL)
		ref, refCancel := context.WithCancelCause(parent)
		ours := &ctxModel{ctx: x, cancel: x.Cancel}
		theirs := &ctxModel{ctx: ref, cancel: refCancel}
		sides := []*ctxModel{ours, theirs}
		custom := errors.New("the caller's own cause")
		causes := []error{nil, context.Canceled, context.DeadlineExceeded, custom,
			fmt.Errorf("wrapped: %w", context.DeadlineExceeded), fmt.Errorf("wrapped: %w", context.Canceled)}
		cancelled := false
		steps := rapid.IntRange(1, 12).Draw(rt, "steps")
		for range steps {
			switch op := rapid.IntRange(0, 4).Draw(rt, "op"); op {
			case 0: // register
				for _, m := range sides {
					m.register()
				}
			case 1: // stop a registration
				if len(ours.stops) == 0 {
					continue
				}
				i := rapid.IntRange(0, len(ours.stops)-1).Draw(rt, "stop")
				a, b := ours.stops[i](), theirs.stops[i]()
				if a != b {
					rt.Fatalf("stop %d: %v, context.WithCancelCause's %v", i, a, b)
				}
			case 2: // derive a child
				for _, m := range sides {
					k, end := context.WithCancel(m.ctx)
					m.kids, m.kidEnd, m.ownEnd = append(m.kids, k), append(m.kidEnd, end), append(m.ownEnd, false)
				}
			case 3: // end a child
				if len(ours.kidEnd) == 0 {
					continue
				}
				i := rapid.IntRange(0, len(ours.kidEnd)-1).Draw(rt, "end")
				ours.kidEnd[i]()
				theirs.kidEnd[i]()
				if !cancelled {
					ours.ownEnd[i] = true
				}
			case 4: // cancel
				cause := causes[rapid.IntRange(0, len(causes)-1).Draw(rt, "cause")]
				for _, m := range sides {
					m.cancel(cause)
				}
				cancelled = true
			}
			compareCtx(rt, ours, theirs, cancelled, hasDL, dl)
		}
		for _, m := range sides {
			for _, end := range m.kidEnd {
				end()
			}
		}
	})
}

func compareCtx(rt *rapid.T, ours, theirs *ctxModel, cancelled, hasDL bool, dl time.Time) {
	x, ref := ours.ctx, theirs.ctx
	if cancelled {
		<-x.Done()
		<-ref.Done()
	} else {
		select {
		case <-x.Done():
			rt.Fatal("Done closed before Cancel")
		default:
		}
	}
	// Err is WithCancelCause's, except that a deadline cause reads as
	// context.DeadlineExceeded (the race's meaning; see Ctx), in the
	// context and in the contexts derived from it.
	wantErr := func(err error) error {
		if err != nil && errors.Is(context.Cause(ref), context.DeadlineExceeded) {
			return context.DeadlineExceeded
		}
		return err
	}
	if got, want := x.Err(), wantErr(ref.Err()); got != want {
		rt.Fatalf("Err = %v, want %v (context.WithCancelCause's %v)", got, want, ref.Err())
	}
	if got, want := context.Cause(x), context.Cause(ref); got != want {
		rt.Fatalf("Cause = %v, context.WithCancelCause's %v", got, want)
	}
	if x.Value(ctxKey{}) != "v" {
		rt.Fatal("the parent's value is lost")
	}
	if got, ok := x.Deadline(); ok != hasDL || (ok && !got.Equal(dl)) {
		rt.Fatalf("Deadline = %v %v, want %v %v", got, ok, dl, hasDL)
	}
	for i := range ours.kids {
		a, b := ours.kids[i], theirs.kids[i]
		// A child is cancelled synchronously by both, so no wait.
		want := b.Err()
		if !ours.ownEnd[i] {
			want = wantErr(want)
		}
		if got := a.Err(); got != want {
			rt.Fatalf("child %d: Err = %v, want %v", i, got, want)
		}
		if context.Cause(a) != context.Cause(b) {
			rt.Fatalf("child %d: Cause = %v, want %v", i, context.Cause(a), context.Cause(b))
		}
	}
	if cancelled {
		// context.AfterFunc runs its functions on goroutines of their own:
		// wait for both sides to settle, then compare what ran.
		deadline := time.Now().Add(5 * time.Second)
		for {
			a, b := ours.ranCounts(), theirs.ranCounts()
			if fmt.Sprint(a) == fmt.Sprint(b) {
				break
			}
			if time.Now().After(deadline) {
				rt.Fatalf("AfterFunc functions ran %v, context.WithCancelCause's %v", a, b)
			}
			time.Sleep(time.Millisecond)
		}
	}
}
