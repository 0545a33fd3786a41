package calibrate

import (
	"fmt"
	"os"
	"testing"
)

func TestZZDebugWindows(t *testing.T) {
	p := os.Getenv("ZZ_OTLP")
	if p == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(p)
	tel, err := ReadOTLP(p, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range tel.Windows {
		var ev []Bin
		for s, b := range w.Attempts {
			if s.Region == os.Getenv("ZZ_REGION") && s.Status == "200" {
				ev = append(ev, b...)
			}
		}
		d := kaplanMeier(ev, nil)
		fmt.Printf("%5.0f %6.0f p50 %.3f p90 %.3f p99 %.3f p999 %.3f\n", w.Start.Seconds(), d.events, d.quantile(0.5), d.quantile(0.9), d.quantile(0.99), d.quantile(0.999))
	}
}
