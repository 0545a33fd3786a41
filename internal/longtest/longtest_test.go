package longtest

import (
	"strings"
	"testing"
	"time"
)

// fakeTB records what Skip does to a test of a given name.
type fakeTB struct {
	testing.TB
	name             string
	fatal, skip, log []string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Name() string                      { return f.name }
func (f *fakeTB) Fatalf(format string, a ...any)    { f.fatal = append(f.fatal, format) }
func (f *fakeTB) Skipf(format string, a ...any)     { f.skip = append(f.skip, format) }
func (f *fakeTB) Logf(format string, a ...any)      { f.log = append(f.log, format) }
func (f *fakeTB) Cleanup(func())                    {}
func (f *fakeTB) Errorf(format string, args ...any) { f.fatal = append(f.fatal, format) }

func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		name, env   string
		fatal, skip bool
	}{
		{"TestLongPolicyCases", "", false, true},
		{"TestLongPolicyCases/fleet-10000-burst", "", false, true},
		{"TestLongPolicyCases", "1", false, false},
		{"TestPolicyCases", "1", true, false}, // a long test must be named TestLong…
		{"TestPolicyCases", "", true, true},
	} {
		t.Run(tc.name+"/"+tc.env, func(t *testing.T) {
			t.Setenv(Env, tc.env)
			f := &fakeTB{name: tc.name}
			Skip(f)
			if got := len(f.fatal) > 0; got != tc.fatal {
				t.Errorf("failed: %v, want %v (%v)", got, tc.fatal, f.fatal)
			}
			if got := len(f.skip) > 0; got != tc.skip {
				t.Errorf("skipped: %v, want %v", got, tc.skip)
			}
			if tc.skip && !strings.Contains(f.skip[0], "%s=1") {
				t.Errorf("the skip message %q does not say how to run the test", f.skip[0])
			}
		})
	}
}

// Progress counts what it is given and stops logging when its test ends.
func TestProgress(t *testing.T) {
	var stop func()
	f := &cleanupTB{fakeTB: fakeTB{name: "TestLongX"}, cleanup: func(c func()) { stop = c }}
	n := Progress(f)
	n.Add(7)
	if stop == nil {
		t.Fatal("Progress registered no cleanup: its goroutine would outlive the test")
	}
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the cleanup did not stop the logger")
	}
	if n.Load() != 7 {
		t.Errorf("counter %d, want 7", n.Load())
	}
}

type cleanupTB struct {
	fakeTB
	cleanup func(func())
}

func (f *cleanupTB) Cleanup(c func()) { f.cleanup(c) }
