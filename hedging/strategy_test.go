package hedging_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/hedging/threshold"
)

func TestNewThreshold(t *testing.T) {
	t.Run("hedge_threshold_rejects_zero", func(t *testing.T) {
		for _, d := range []time.Duration{0, -1, -time.Millisecond, -time.Hour, math.MinInt64} {
			th, ok := hedging.NewThreshold(d)
			if ok {
				t.Errorf("NewThreshold(%v) ok = true, want false", d)
			}
			if !th.IsZero() || th.Get() != 0 {
				t.Errorf("NewThreshold(%v) = %v, want the zero Threshold", d, th)
			}
		}
	})
	t.Run("hedge_threshold_accepts_positive", func(t *testing.T) {
		for _, d := range []time.Duration{1, time.Millisecond, 500 * time.Millisecond, time.Hour, math.MaxInt64} {
			th, ok := hedging.NewThreshold(d)
			if !ok || th.Get() != d || th.IsZero() {
				t.Errorf("NewThreshold(%v) = %v, %v; want %v, true", d, th, ok, d)
			}
			if th.String() != d.String() {
				t.Errorf("String() = %q, want %q", th.String(), d.String())
			}
		}
	})
	t.Run("must_threshold_panics_on_zero", func(t *testing.T) {
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), "0s") {
				t.Errorf("MustThreshold(0) recovered %v, want a panic naming the value", r)
			}
		}()
		hedging.MustThreshold(0)
	})
	if got := hedging.MustThreshold(2 * time.Second).Get(); got != 2*time.Second {
		t.Errorf("MustThreshold(2s).Get() = %v", got)
	}
}

// §5.2: min(1 s, request_timeout/2), 1 s when unset or zero.
func TestDriverDefaultThreshold(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"unset", 0, time.Second},
		{"negative", -5 * time.Second, time.Second},
		{"10s", 10 * time.Second, time.Second},
		{"2s boundary", 2 * time.Second, time.Second},
		{"1s", time.Second, 500 * time.Millisecond},
		{"1.5s", 1500 * time.Millisecond, 750 * time.Millisecond},
		{"200ms", 200 * time.Millisecond, 100 * time.Millisecond},
		{"3ns", 3, 1},
		{"2ns", 2, 1},
		{"1ns edge: never an invalid zero", 1, 1},
		{"max", math.MaxInt64, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := hedging.DriverDefaultThreshold(tc.timeout)
			if th.Get() != tc.want || th.IsZero() {
				t.Errorf("DriverDefaultThreshold(%v) = %v, want %v", tc.timeout, th.Get(), tc.want)
			}
		})
	}
	if hedging.DefaultThresholdCap != time.Second {
		t.Errorf("DefaultThresholdCap = %v, want 1s", hedging.DefaultThresholdCap)
	}
}

// Every row of the §11.3.1 priority table.
func TestResolveStrategy(t *testing.T) {
	op100 := htHedging(100 * time.Millisecond)
	cl300 := htHedging(300 * time.Millisecond)
	unset := hedging.AvailabilityStrategy{}
	const rt = 1200 * time.Millisecond // driver default = min(1s, 600ms) = 600ms
	const def = 600 * time.Millisecond

	for _, tc := range []struct {
		name       string
		enabled    hedging.Switch
		op, client hedging.AvailabilityStrategy
		on         bool
		want       time.Duration // threshold when on
	}{
		// Priority 0: master switch off wins over an explicit Hedging anywhere.
		{"0/off over op Hedging", hedging.SwitchOff, op100, unset, false, 0},
		{"0/off over client Hedging", hedging.SwitchOff, unset, cl300, false, 0},
		{"0/off over both Hedging", hedging.SwitchOff, op100, cl300, false, 0},
		{"0/off over driver default", hedging.SwitchOff, unset, unset, false, 0},
		// Priority 0: master switch on wins over an explicit Disabled; the
		// threshold comes from op Hedging, then client Hedging, then the
		// driver default.
		{"0/on over op Disabled, client unset: driver default", hedging.SwitchOn, hedging.Disabled, unset, true, def},
		{"0/on over client Disabled: driver default", hedging.SwitchOn, unset, hedging.Disabled, true, def},
		{"0/on over both Disabled: driver default", hedging.SwitchOn, hedging.Disabled, hedging.Disabled, true, def},
		{"0/on over op Disabled: client threshold", hedging.SwitchOn, hedging.Disabled, cl300, true, 300 * time.Millisecond},
		{"0/on over client Disabled: op threshold", hedging.SwitchOn, op100, hedging.Disabled, true, 100 * time.Millisecond},
		{"0/on: op threshold before client threshold", hedging.SwitchOn, op100, cl300, true, 100 * time.Millisecond},
		{"0/on: client threshold", hedging.SwitchOn, unset, cl300, true, 300 * time.Millisecond},
		{"0/on: nothing set", hedging.SwitchOn, unset, unset, true, def},
		// Priority 1: the operation's strategy.
		{"1/op Hedging over client Hedging", hedging.SwitchUnset, op100, cl300, true, 100 * time.Millisecond},
		{"1/op Hedging over client Disabled", hedging.SwitchUnset, op100, hedging.Disabled, true, 100 * time.Millisecond},
		{"1/op Disabled over client Hedging", hedging.SwitchUnset, hedging.Disabled, cl300, false, 0},
		{"1/op Disabled over driver default", hedging.SwitchUnset, hedging.Disabled, unset, false, 0},
		// Priority 2: the client's strategy.
		{"2/client Hedging", hedging.SwitchUnset, unset, cl300, true, 300 * time.Millisecond},
		{"2/client Disabled suppresses the driver default", hedging.SwitchUnset, unset, hedging.Disabled, false, 0},
		// Priority 3: the driver default.
		{"3/driver default", hedging.SwitchUnset, unset, unset, true, def},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, on := hedging.ResolveStrategy(tc.enabled, tc.op, tc.client, rt)
			if on != tc.on {
				t.Fatalf("ResolveStrategy on = %v, want %v", on, tc.on)
			}
			if on && s.Threshold().Get() != tc.want {
				t.Errorf("threshold = %v, want %v", s.Threshold().Get(), tc.want)
			}
		})
	}
	t.Run("3/driver default with unset request timeout is 1s", func(t *testing.T) {
		s, on := hedging.ResolveStrategy(hedging.SwitchUnset, unset, unset, 0)
		if !on || s.Threshold().Get() != time.Second {
			t.Errorf("got %v, %v; want 1s, true", s.Threshold(), on)
		}
	})
	t.Run("policy strategies pass through", func(t *testing.T) {
		p := threshold.Static{T: hedging.MustThreshold(42 * time.Millisecond)}
		s, on := hedging.ResolveStrategy(hedging.SwitchUnset, hedging.Hedging(hedging.NewPolicyStrategy(p)), unset, 0)
		if !on || s.Policy() == nil || s.Policy().Name() != p.Name() {
			t.Errorf("got %v, %v; want the policy strategy", s.Policy(), on)
		}
	})
}

// Row 4 of §11.3.1 ("None") is the eligibility check: through the client a
// resolved strategy on a single-region account still does not hedge.
func TestResolveStrategyThroughClient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       hedging.Config
		op        hedging.Operation
		hedged    bool
		threshold time.Duration
	}{
		{"env override off beats op Hedging",
			hedging.Config{Regions: htRegions("A", "B"), Env: hedging.EnvConfig{HedgingEnabledOverride: hedging.SwitchOff}},
			hedging.Operation{Strategy: htHedging(50 * time.Millisecond)}, false, 0},
		{"env override on beats op switch off and op Disabled",
			hedging.Config{Regions: htRegions("A", "B"), Env: hedging.EnvConfig{HedgingEnabledOverride: hedging.SwitchOn}},
			hedging.Operation{Strategy: hedging.Disabled, HedgingEnabled: hedging.SwitchOff}, true, time.Second},
		{"op switch on beats env off, client Disabled",
			hedging.Config{Regions: htRegions("A", "B"), Strategy: hedging.Disabled, Env: hedging.EnvConfig{HedgingEnabled: hedging.SwitchOff}},
			hedging.Operation{HedgingEnabled: hedging.SwitchOn}, true, time.Second},
		{"account off beats env on",
			hedging.Config{Regions: htRegions("A", "B"), HedgingEnabled: hedging.HedgingEnabledLayers{Account: hedging.SwitchOff}, Env: hedging.EnvConfig{HedgingEnabled: hedging.SwitchOn}},
			hedging.Operation{}, false, 0},
		{"runtime on beats op Disabled, client threshold kept",
			hedging.Config{Regions: htRegions("A", "B"), Strategy: htHedging(70 * time.Millisecond), HedgingEnabled: hedging.HedgingEnabledLayers{Runtime: hedging.SwitchOn}},
			hedging.Operation{Strategy: hedging.Disabled}, true, 70 * time.Millisecond},
		{"driver default uses the request timeout",
			hedging.Config{Regions: htRegions("A", "B"), RequestTimeout: 800 * time.Millisecond},
			hedging.Operation{}, true, 400 * time.Millisecond},
		{"row 4: single region, nothing hedged",
			hedging.Config{Regions: htRegions("A")},
			hedging.Operation{}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := htClient(t, tc.cfg)
			op := tc.op
			op.Kind, op.Partition = hedging.PointRead, "p"
			var r hedging.Race
			htBegin(c, &r, 0, &op)
			if r.Hedged() != tc.hedged {
				t.Fatalf("Hedged() = %v, want %v", r.Hedged(), tc.hedged)
			}
			if tc.hedged && r.Threshold().Get() != tc.threshold {
				t.Errorf("threshold = %v, want %v", r.Threshold().Get(), tc.threshold)
			}
		})
	}
}

// {ENV}_OVERRIDE > operation > account > runtime > {ENV} (§11.3).
func TestHedgingEnabledLayersEffective(t *testing.T) {
	U, On, Off := hedging.SwitchUnset, hedging.SwitchOn, hedging.SwitchOff
	for _, tc := range []struct {
		name string
		l    hedging.HedgingEnabledLayers
		want hedging.Switch
	}{
		{"all unset", hedging.HedgingEnabledLayers{}, U},
		{"env only", hedging.HedgingEnabledLayers{Env: Off}, Off},
		{"runtime over env", hedging.HedgingEnabledLayers{Runtime: On, Env: Off}, On},
		{"account over runtime", hedging.HedgingEnabledLayers{Account: Off, Runtime: On, Env: On}, Off},
		{"operation over account", hedging.HedgingEnabledLayers{Operation: On, Account: Off, Runtime: Off, Env: Off}, On},
		{"override over operation", hedging.HedgingEnabledLayers{EnvOverride: Off, Operation: On, Account: On, Runtime: On, Env: On}, Off},
		{"override on over everything off", hedging.HedgingEnabledLayers{EnvOverride: On, Operation: Off, Account: Off, Runtime: Off, Env: Off}, On},
		{"override alone", hedging.HedgingEnabledLayers{EnvOverride: On}, On},
		{"operation alone", hedging.HedgingEnabledLayers{Operation: Off}, Off},
		{"account alone", hedging.HedgingEnabledLayers{Account: On}, On},
		{"runtime alone", hedging.HedgingEnabledLayers{Runtime: Off}, Off},
		{"unset layers are skipped", hedging.HedgingEnabledLayers{EnvOverride: U, Operation: U, Account: U, Runtime: U, Env: On}, On},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.l.Effective(); got != tc.want {
				t.Errorf("Effective() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSwitch(t *testing.T) {
	if hedging.SwitchOf(true) != hedging.SwitchOn || hedging.SwitchOf(false) != hedging.SwitchOff {
		t.Errorf("SwitchOf mapping wrong")
	}
	for s, want := range map[hedging.Switch]string{hedging.SwitchUnset: "unset", hedging.SwitchOn: "on", hedging.SwitchOff: "off"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), want)
		}
	}
}

func TestAvailabilityStrategy(t *testing.T) {
	var unset hedging.AvailabilityStrategy
	if unset.IsSet() || unset.IsDisabled() || unset.String() != "unset" {
		t.Errorf("zero value: set=%v disabled=%v %q", unset.IsSet(), unset.IsDisabled(), unset.String())
	}
	if _, ok := unset.HedgingStrategy(); ok {
		t.Errorf("zero value selects hedging")
	}
	if !hedging.Disabled.IsSet() || !hedging.Disabled.IsDisabled() || hedging.Disabled.String() != "disabled" {
		t.Errorf("Disabled: %q", hedging.Disabled.String())
	}
	if _, ok := hedging.Disabled.HedgingStrategy(); ok {
		t.Errorf("Disabled selects hedging")
	}
	h := htHedging(200 * time.Millisecond)
	s, ok := h.HedgingStrategy()
	if !ok || !h.IsSet() || h.IsDisabled() || s.Threshold().Get() != 200*time.Millisecond || s.Policy() != nil {
		t.Errorf("Hedging(200ms) = %v", h)
	}
	if h.String() != "hedging(200ms)" {
		t.Errorf("String() = %q, want hedging(200ms)", h.String())
	}
	p := hedging.Hedging(hedging.NewPolicyStrategy(threshold.Static{T: hedging.MustThreshold(time.Millisecond)}))
	if p.String() != "hedging(static(1ms))" {
		t.Errorf("policy String() = %q", p.String())
	}
	if s, _ := p.HedgingStrategy(); s.Threshold().Get() != time.Second {
		t.Errorf("policy strategy fallback threshold = %v, want the driver default 1s", s.Threshold())
	}
}

func TestParseBool(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"true", true}, {"false", false}, {"1", true}, {"0", false},
		{"yes", true}, {"no", false}, {"on", true}, {"off", false},
		{"TRUE", true}, {"False", false}, {"YeS", true}, {"nO", false}, {"On", true}, {"OFF", false},
		{" true ", true}, {"\toff\n", false}, {"  1", true}, {"0  ", false},
	} {
		got, err := hedging.ParseBool(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v, nil", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", " ", "maybe", "2", "tru", "t", "f", "y", "n", "enable", "true1", "o n", "-1", "01"} {
		got, err := hedging.ParseBool(in)
		if err == nil {
			t.Errorf("ParseBool(%q) = %v, nil; want an error", in, got)
			continue
		}
		if got {
			t.Errorf("ParseBool(%q) returned true with an error", in)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("ParseBool(%q) error %q does not quote the value", in, err)
		}
	}
}

func htLookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

func TestLoadEnv(t *testing.T) {
	t.Run("unset is inert", func(t *testing.T) {
		cfg, err := hedging.LoadEnv(htLookup(nil))
		if err != nil || cfg != (hedging.EnvConfig{}) {
			t.Errorf("LoadEnv(empty) = %+v, %v; want zero, nil", cfg, err)
		}
	})
	t.Run("unrelated variables ignored", func(t *testing.T) {
		cfg, err := hedging.LoadEnv(htLookup(map[string]string{"AZURE_COSMOS_HEDGING": "maybe", "PATH": "/bin"}))
		if err != nil || cfg != (hedging.EnvConfig{}) {
			t.Errorf("got %+v, %v", cfg, err)
		}
	})
	for _, tc := range []struct {
		name string
		env  map[string]string
		want hedging.EnvConfig
	}{
		{"enabled false", map[string]string{hedging.EnvHedgingEnabled: "false"}, hedging.EnvConfig{HedgingEnabled: hedging.SwitchOff}},
		{"enabled YES", map[string]string{hedging.EnvHedgingEnabled: " YES "}, hedging.EnvConfig{HedgingEnabled: hedging.SwitchOn}},
		{"override 0", map[string]string{hedging.EnvHedgingEnabledOverride: "0"}, hedging.EnvConfig{HedgingEnabledOverride: hedging.SwitchOff}},
		{"override on", map[string]string{hedging.EnvHedgingEnabledOverride: "on"}, hedging.EnvConfig{HedgingEnabledOverride: hedging.SwitchOn}},
		{"consecutive 3", map[string]string{hedging.EnvConsecutiveHedgeWinThreshold: "3"}, hedging.EnvConfig{ConsecutiveHedgeWinThreshold: 3}},
		{"consecutive spaced", map[string]string{hedging.EnvConsecutiveHedgeWinThreshold: " 7 "}, hedging.EnvConfig{ConsecutiveHedgeWinThreshold: 7}},
		{"all three", map[string]string{
			hedging.EnvHedgingEnabled: "1", hedging.EnvHedgingEnabledOverride: "off", hedging.EnvConsecutiveHedgeWinThreshold: "10"},
			hedging.EnvConfig{HedgingEnabled: hedging.SwitchOn, HedgingEnabledOverride: hedging.SwitchOff, ConsecutiveHedgeWinThreshold: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := hedging.LoadEnv(htLookup(tc.env))
			if err != nil || cfg != tc.want {
				t.Errorf("LoadEnv = %+v, %v; want %+v", cfg, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name, value string
	}{
		{hedging.EnvHedgingEnabled, "maybe"},
		{hedging.EnvHedgingEnabled, ""},
		{hedging.EnvHedgingEnabledOverride, "tru"},
		{hedging.EnvHedgingEnabledOverride, "2"},
		{hedging.EnvConsecutiveHedgeWinThreshold, "0"},
		{hedging.EnvConsecutiveHedgeWinThreshold, "-1"},
		{hedging.EnvConsecutiveHedgeWinThreshold, "five"},
		{hedging.EnvConsecutiveHedgeWinThreshold, "1.5"},
		{hedging.EnvConsecutiveHedgeWinThreshold, ""},
	} {
		t.Run("bad "+tc.name+"="+tc.value, func(t *testing.T) {
			cfg, err := hedging.LoadEnv(htLookup(map[string]string{tc.name: tc.value}))
			if err == nil {
				t.Fatalf("LoadEnv(%s=%q) = %+v, nil; want an error", tc.name, tc.value, cfg)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.name) || !strings.Contains(msg, fmt.Sprintf("%q", tc.value)) {
				t.Errorf("error %q must name the variable %s and the value %q", msg, tc.name, tc.value)
			}
			if cfg != (hedging.EnvConfig{}) {
				t.Errorf("a failed LoadEnv returned a partial config %+v", cfg)
			}
		})
	}
	t.Run("names", func(t *testing.T) {
		if hedging.EnvHedgingEnabled != "AZURE_COSMOS_HEDGING_ENABLED" ||
			hedging.EnvHedgingEnabledOverride != "AZURE_COSMOS_HEDGING_ENABLED_OVERRIDE" ||
			hedging.EnvConsecutiveHedgeWinThreshold != "AZURE_COSMOS_CONSECUTIVE_HEDGE_WIN_THRESHOLD" {
			t.Errorf("environment variable names differ from spec §4.4 / §9.5")
		}
	})
	t.Run("consecutive threshold reaches the client tracker", func(t *testing.T) {
		env, err := hedging.LoadEnv(htLookup(map[string]string{hedging.EnvConsecutiveHedgeWinThreshold: "2"}))
		if err != nil {
			t.Fatal(err)
		}
		c := htClient(t, hedging.Config{Regions: htRegions("A", "B"), Env: env})
		if got := c.HedgeWinTracker().Threshold(); got != 2 {
			t.Errorf("tracker threshold = %d, want 2 from the environment", got)
		}
		c = htClient(t, hedging.Config{Regions: htRegions("A", "B"), Env: env, ConsecutiveHedgeWinThreshold: 4})
		if got := c.HedgeWinTracker().Threshold(); got != 4 {
			t.Errorf("tracker threshold = %d, want 4 (config beats env)", got)
		}
		c = htClient(t, hedging.Config{Regions: htRegions("A", "B")})
		if got := c.HedgeWinTracker().Threshold(); got != 5 || hedging.DefaultConsecutiveHedgeWinThreshold != 5 {
			t.Errorf("default tracker threshold = %d, want 5", got)
		}
	})
}
