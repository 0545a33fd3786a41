package hedging_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
)

// A threshold is validated once, where the duration is chosen (spec §4.1).
func ExampleNewThreshold() {
	t, ok := hedging.NewThreshold(200 * time.Millisecond)
	fmt.Println(t, ok)

	_, ok = hedging.NewThreshold(0) // zero (or negative) is rejected
	fmt.Println(ok)

	// The driver default (§5.2): min(1s, request_timeout/2), 1s when unset.
	fmt.Println(hedging.DriverDefaultThreshold(1500 * time.Millisecond))
	fmt.Println(hedging.DriverDefaultThreshold(0))
	// Output:
	// 200ms true
	// false
	// 750ms
	// 1s
}

// IsFinal classifies a response for the race (§7.2): a final one ends the
// race, a transient one lets the other leg keep racing.
func ExampleIsFinal() {
	for _, st := range []hedging.Status{
		{Code: 200},
		{Code: 404},
		{Code: 404, SubStatus: hedging.SubStatusReadSessionNotAvailable},
		{Code: 429, SubStatus: hedging.SubStatusRUBudgetExceeded},
		{Code: 429},
		{Code: 503},
	} {
		fmt.Printf("%-8s final=%v\n", st, hedging.IsFinal(st))
	}
	// Output:
	// 200      final=true
	// 404      final=true
	// 404/1002 final=false
	// 429/3200 final=true
	// 429      final=false
	// 503      final=false
}

// shouldHedge walks the §5.1 decision matrix and names the deciding row.
func TestShouldHedgeDecidingRows(t *testing.T) {
	var b strings.Builder
	read := hedging.Eligibility{StrategyResolved: true, PreferredRegions: 3, ApplicableRegions: 3, Kind: hedging.PointRead, Allowed: hedging.Phase1}
	ok, why := hedging.ShouldHedge(read)
	fmt.Fprintln(&b, ok, why)

	write := read
	write.Kind = hedging.Replace
	ok, why = hedging.ShouldHedge(write)
	fmt.Fprintln(&b, ok, why)

	excluded := read
	excluded.ApplicableRegions = 1 // ExcludeRegions left a single region
	ok, why = hedging.ShouldHedge(excluded)
	fmt.Fprintln(&b, ok, why)

	query := read
	query.Kind = hedging.QueryPage
	ok, why = hedging.ShouldHedge(query)
	fmt.Fprintln(&b, ok, why)
	query.Allowed = hedging.Phase2
	ok, why = hedging.ShouldHedge(query)
	fmt.Fprintln(&b, ok, why)
	if want := "true eligible\nfalse not in phase-allowed set\nfalse fewer than 2 applicable regions\nfalse not in phase-allowed set\ntrue eligible\n"; b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// resolveStrategy applies the §11.3.1 priority: master switch, operation,
// client, driver default.
func TestResolveStrategyPriority(t *testing.T) {
	var b strings.Builder
	client := hedging.Hedging(hedging.NewHedgingStrategy(hedging.MustThreshold(300 * time.Millisecond)))
	unset := hedging.AvailabilityStrategy{}
	show := func(s hedging.HedgingStrategy, on bool) {
		if on {
			fmt.Fprintln(&b, "hedging after", s.Threshold())
		} else {
			fmt.Fprintln(&b, "off")
		}
	}

	show(hedging.ResolveStrategy(hedging.SwitchUnset, unset, client, 0))            // client strategy
	show(hedging.ResolveStrategy(hedging.SwitchUnset, hedging.Disabled, client, 0)) // op Disabled wins
	show(hedging.ResolveStrategy(hedging.SwitchOn, hedging.Disabled, client, 0))    // master switch on wins
	show(hedging.ResolveStrategy(hedging.SwitchOff, unset, client, 0))              // master switch off wins
	show(hedging.ResolveStrategy(hedging.SwitchUnset, unset, unset, 800*time.Millisecond))

	// The master switch comes from layers: {ENV}_OVERRIDE > operation >
	// account > runtime > {ENV}.
	layers := hedging.HedgingEnabledLayers{Operation: hedging.SwitchOn, Env: hedging.SwitchOff}
	fmt.Fprintln(&b, layers.Effective())
	if want := "hedging after 300ms\noff\nhedging after 300ms\noff\nhedging after 400ms\non\n"; b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// Driving a Race by hand: the core takes time and results as inputs and
// writes the effects to perform into one reused Effects. Here the primary is slow, the threshold
// fires, and the alternate wins.
func ExampleClient_Begin() {
	c, err := hedging.NewClient(hedging.Config{
		Regions: []hedging.Endpoint{{Region: "East US", Key: "eus"}, {Region: "West US", Key: "wus"}},
		Strategy: hedging.Hedging(hedging.NewHedgingStrategy(
			hedging.MustThreshold(100 * time.Millisecond))),
	})
	if err != nil {
		panic(err)
	}
	op := &hedging.Operation{Kind: hedging.PointRead, Partition: "0"}

	log := func(e *hedging.Effects) {
		for i := 0; i < e.Len(); i++ {
			a := e.At(i)
			switch a.Kind {
			case hedging.ActSend:
				fmt.Printf("t=%v send %v to %s (excluding %v)\n", a.At, a.Leg, a.Attempt.Endpoint.Region, a.Attempt.Excluded)
			case hedging.ActTimer:
				fmt.Printf("arm timer for t=%v\n", a.At)
			case hedging.ActCancel:
				fmt.Printf("cancel %v\n", a.Leg)
			}
		}
	}

	var r hedging.Race
	var e hedging.Effects  // one value, reused by every call
	c.Begin(&e, &r, 0, op) // send the primary, arm the threshold timer
	log(&e)
	primary := e.At(0).Attempt

	r.TimerFired(&e, 100*time.Millisecond, hedging.TimerThreshold) // no answer yet: hedge
	log(&e)
	alternate := e.At(0).Attempt

	r.Responded(&e, 130*time.Millisecond, &alternate, &hedging.Result{Status: hedging.Status{Code: 200}, RequestCharge: 1})
	log(&e) // the alternate's 200 wins; the primary is cancelled

	_ = primary // a late primary response would be ignored by r.Responded
	res, err := r.Result()
	d, _ := r.Diagnostics()
	fmt.Println(res.Status, err, d.TerminalState(), d.WasHedge(), r.DoneAt())
	// Output:
	// t=0s send primary to East US (excluding [])
	// arm timer for t=100ms
	// t=100ms send alternate to West US (excluding [East US])
	// cancel primary
	// 200 <nil> AlternateWon true 130ms
}
