package hedging_test

import (
	"container/heap"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/internal/racecases"
)

// manualEvent is one pending event of the hand-driven loop.
type manualEvent struct {
	at      time.Duration
	seq     int
	respond bool
	attempt hedging.Attempt
	timer   hedging.TimerKind
}

type manualQueue []manualEvent

func (q manualQueue) Len() int { return len(q) }
func (q manualQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	// Spec §6.4 / cases: a response landing at the same instant as a timer
	// is seen first; otherwise insertion order.
	if q[i].respond != q[j].respond {
		return q[i].respond
	}
	return q[i].seq < q[j].seq
}
func (q manualQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *manualQueue) Push(x any)   { *q = append(*q, x.(manualEvent)) }
func (q *manualQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// runManual drives the race core by hand: a minimal event loop where each
// leg answers after its scripted latency.
func runManual(t *testing.T, c racecases.Case) racecases.Outcome {
	t.Helper()
	cfg, op, err := racecases.Build(c)
	if err != nil {
		t.Fatal(err)
	}
	client, err := hedging.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var (
		r   hedging.Race
		q   manualQueue
		seq int
	)
	perform := func(e hedging.Effects) {
		for i := 0; i < e.Len(); i++ {
			a := e.At(i)
			seq++
			switch a.Kind {
			case hedging.ActSend:
				lat := racecases.Ms(c.LegFor(a.Leg).LatencyMs)
				heap.Push(&q, manualEvent{at: a.At + lat, seq: seq, respond: true, attempt: a.Attempt})
			case hedging.ActTimer:
				heap.Push(&q, manualEvent{at: a.At, seq: seq, timer: a.Timer})
			case hedging.ActCancel:
				// the response, if it still lands, is ignored by the race
			}
		}
	}
	const start = time.Second
	perform(htBegin(client, &r, start, &op))
	for !r.Done() && q.Len() > 0 {
		ev := heap.Pop(&q).(manualEvent)
		if ev.respond {
			perform(htResponded(&r, ev.at, ev.attempt, c.ResultFor(ev.attempt.Leg)))
		} else {
			perform(htTimerFired(&r, ev.at, ev.timer))
		}
	}
	if !r.Done() {
		t.Fatalf("race did not finish")
	}
	return racecases.OutcomeOf(&r, start)
}

func TestRaceCasesCore(t *testing.T) {
	cases, err := racecases.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("loaded only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if err := c.Check(runManual(t, c)); err != nil {
				t.Error(err)
			}
		})
	}
}
