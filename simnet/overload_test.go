package simnet

import (
	"runtime"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet/dist"
)

// overloadConfig offers 4000 reads/s to one replica with 2 servers of
// 1 ms each (capacity 2000/s) for d.
func overloadConfig(tb testing.TB, d time.Duration, queueLimit int, timeout time.Duration) *Config {
	svc, err := dist.NewConstant(1)
	if err != nil {
		tb.Fatal(err)
	}
	return &Config{
		Seed: 3, Duration: d, ClientRegion: "c",
		Endpoints:        []Endpoint{{Region: "A", Replica: "a"}},
		Replicas:         []Replica{{Name: "a", Region: "c", Servers: 2, QueueLimit: queueLimit, Default: svc}},
		Workload:         Workload{RatePerSec: 4000},
		OperationTimeout: timeout,
	}
}

// overloadPeaks runs cfg and returns its peak number of op slots and peak
// physical queue length.
func overloadPeaks(tb testing.TB, cfg *Config) (slots, queue int) {
	s, err := newSim(cfg, hedging.Disabled, cfg.Seed)
	if err != nil {
		tb.Fatal(err)
	}
	s.run(nil)
	return len(s.ops), s.reps[0].capr.peakQueue
}

// Memory under overload is flat with a bounded queue, or with an
// operation timeout (whose cancellations remove the queued copies): the
// peak number of op slots and the peak queue are about the same for a run
// twice as long. Without either, they double (the check can fail).
func TestOverloadMemoryIsFlat(t *testing.T) {
	cases := []struct {
		name       string
		queueLimit int
		timeout    time.Duration
		flat       bool
	}{
		{"queue_limit", 200, 0, true},
		{"operation_timeout", 0, 100 * time.Millisecond, true},
		{"unbounded", 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s1, q1 := overloadPeaks(t, overloadConfig(t, 5*time.Second, c.queueLimit, c.timeout))
			s2, q2 := overloadPeaks(t, overloadConfig(t, 10*time.Second, c.queueLimit, c.timeout))
			t.Logf("slots %d -> %d, queue %d -> %d", s1, s2, q1, q2)
			flat := float64(s2) < 1.1*float64(s1)+50 && float64(q2) < 1.1*float64(q1)+50
			if flat != c.flat {
				t.Errorf("peak op slots %d -> %d, peak queue %d -> %d from 5 s to 10 s; flat = %v, want %v", s1, s2, q1, q2, flat, c.flat)
			}
			if c.queueLimit > 0 && q2 > c.queueLimit+50 {
				t.Errorf("peak physical queue %d, limit %d", q2, c.queueLimit)
			}
		})
	}
}

// BenchmarkOverloadBoundedQueue simulates 10 s of 4000 reads/s at a
// replica that serves 2000/s with a queue limit of 200 and reports the
// heap in use after the run (bytes), which does not grow with the
// duration.
func BenchmarkOverloadBoundedQueue(b *testing.B) {
	b.ReportAllocs()
	var heap uint64
	for range b.N {
		cfg := overloadConfig(b, 10*time.Second, 200, 0)
		s, err := newSim(cfg, hedging.Disabled, cfg.Seed)
		if err != nil {
			b.Fatal(err)
		}
		s.run(nil)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = ms.HeapInuse
		runtime.KeepAlive(s)
	}
	b.ReportMetric(float64(heap), "heap-bytes")
}
