package hedging_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"hedgelab/hedging"
)

type nilTransport struct{}

func (*nilTransport) Send(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
	return hedging.Result{}
}

type nilFuncTransport func()

func (nilFuncTransport) Send(context.Context, *hedging.Operation, hedging.Attempt) hedging.Result {
	return hedging.Result{}
}

type nilPtrObserver struct{}

func (*nilPtrObserver) ObserveAttempt(context.Context, hedging.AttemptEvent)     {}
func (*nilPtrObserver) ObserveOperation(context.Context, hedging.OperationEvent) {}

type nilPtrGate struct{ admitted int }

func (g *nilPtrGate) Admit(time.Duration, hedging.Admission) bool {
	g.admitted++
	return true
}
func (g *nilPtrGate) Observe(time.Duration, hedging.Observation) {}
func (g *nilPtrGate) Name() string                               { return "nil-gate" }

type nilPtrPolicy struct{ t hedging.Threshold }

func (p *nilPtrPolicy) Threshold(time.Duration, hedging.ThresholdQuery) (hedging.Threshold, bool) {
	return p.t, true
}
func (p *nilPtrPolicy) Observe(time.Duration, hedging.Observation) {}
func (p *nilPtrPolicy) Name() string                               { return "nil-policy" }

// A nil pointer (or func) in Config.Observer, Config.Transport or the
// strategy's policy or Gate is an error from NewClient, not a panic in Do
// (a Gate assigned from threshold.NewBudget whose error was not checked).
func TestNewClientRejectsNilValues(t *testing.T) {
	gated := hedging.NewHedgingStrategy(hedging.MustThreshold(time.Millisecond))
	gated.Gate = (*nilPtrGate)(nil)
	for _, tc := range []struct {
		name string
		cfg  hedging.Config
		want string
	}{
		{"observer", hedging.Config{Observer: (*nilPtrObserver)(nil)}, "Config.Observer is a nil *hedging_test.nilPtrObserver"},
		{"transport", hedging.Config{Transport: (*nilTransport)(nil)}, "Config.Transport is a nil *hedging_test.nilTransport"},
		{"transport func", hedging.Config{Transport: nilFuncTransport(nil)}, "Config.Transport is a nil hedging_test.nilFuncTransport"},
		{"gate", hedging.Config{Strategy: hedging.Hedging(gated)}, "Config.Strategy's Gate is a nil *hedging_test.nilPtrGate"},
		{"policy", hedging.Config{Strategy: hedging.Hedging(hedging.NewPolicyStrategy((*nilPtrPolicy)(nil)))},
			"Config.Strategy's threshold policy is a nil *hedging_test.nilPtrPolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := hedging.NewClient(tc.cfg)
			if err == nil || c != nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewClient = %v, %v; want an error containing %q", c, err, tc.want)
			}
		})
	}
}

// outcomeRecorder keeps the Outcome of every operation.
type outcomeRecorder struct {
	mu  sync.Mutex
	got []hedging.Outcome
}

func (r *outcomeRecorder) ObserveAttempt(context.Context, hedging.AttemptEvent) {}
func (r *outcomeRecorder) ObserveOperation(_ context.Context, ev hedging.OperationEvent) {
	r.mu.Lock()
	r.got = append(r.got, ev.Outcome)
	r.mu.Unlock()
}

// OperationEvent.Outcome classifies what the caller got, whatever the
// terminal state (spec §10.4 extension): a primary's quick 429 is
// PrimaryWonPreThreshold but not a success.
func TestOperationOutcome(t *testing.T) {
	errDial := errors.New("dial refused")
	answer := func(lat time.Duration, res hedging.Result) dtSendFunc {
		return func(ctx context.Context, _ *hedging.Operation, _ hedging.Attempt) hedging.Result {
			select {
			case <-time.After(lat):
				return res
			case <-ctx.Done():
				return hedging.Result{Err: ctx.Err()}
			}
		}
	}
	for _, tc := range []struct {
		name    string
		send    dtSendFunc
		timeout time.Duration
		cancel  time.Duration
		want    hedging.Outcome
	}{
		{"200", answer(5*time.Millisecond, dtOK(200)), 0, 0, hedging.OutcomeSuccess},
		{"304", answer(5*time.Millisecond, dtOK(304)), 0, 0, hedging.OutcomeSuccess},
		{"404", answer(5*time.Millisecond, dtOK(404)), 0, 0, hedging.OutcomeFinalError},
		{"429/3200", answer(5*time.Millisecond, hedging.Result{Status: hedging.Status{Code: 429, SubStatus: 3200}}), 0, 0, hedging.OutcomeFinalError},
		{"429 quick", answer(12*time.Millisecond, dtOK(429)), 0, 0, hedging.OutcomeTransient},
		{"500 quick", answer(12*time.Millisecond, dtOK(500)), 0, 0, hedging.OutcomeTransient},
		{"no response", answer(5*time.Millisecond, hedging.Result{Err: errDial}), 0, 0, hedging.OutcomeTransportError},
		{"deadline", answer(time.Hour, dtOK(200)), 50 * time.Millisecond, 0, hedging.OutcomeDeadline},
		{"cancelled", answer(time.Hour, dtOK(200)), 0, 20 * time.Millisecond, hedging.OutcomeCanceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := new(outcomeRecorder)
				cfg := dtHedgingCfg(100*time.Millisecond, "A", "B")
				cfg.Observer, cfg.Retry.MaxAttempts = rec, 1
				c := dtClient(t, cfg, tc.send)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancel > 0 {
					time.AfterFunc(tc.cancel, cancel)
				}
				_, _ = c.Do(ctx, &hedging.Operation{Kind: hedging.PointRead, Partition: "p", Timeout: tc.timeout})
				synctest.Wait()
				if len(rec.got) != 1 || rec.got[0] != tc.want {
					t.Errorf("outcomes %v, want [%v]", rec.got, tc.want)
				}
			})
		})
	}
}
