// Command notebooks regenerates the design-review notebooks in notebooks/:
// each is a Markdown document that states a question, runs the scenarios
// and sweeps that answer it (through the same simulator and hedging package
// as hedgesim), and writes its tables, charts and answer. Same seeds, same
// bytes: regenerating is byte-identical.
//
// Usage:
//
//	go run ./cmd/notebooks [-out notebooks] [-only q11,q7,sdk,price,storms,q9,q503] [-parallel N] [-png]
//	go run ./cmd/notebooks -index results   # write results/README.md
//
// Notebook 01 also takes -q11-n N and -q11-seed S (the populations' size
// and seed) and -q11-scenarios REGEXP (score only the library scenarios
// and cases it matches: a small run, which the notebook says it is).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// notebook is one study.
type notebook struct {
	id    string // short id for -only
	file  string // markdown file name, also the chart directory name
	title string
	run   func(nb *doc) error
}

var notebooks = []notebook{
	{"q11", "01-q11-static-vs-p99", "Spec §17 Q11: static driver default or dynamic P99 threshold?", q11Fourth},
	{"q7", "02-q7-breaker-threshold", "Spec §17 Q7: how many consecutive alternate wins should trip the partition breaker?", q7},
	{"sdk", "03-sdk-defaults", "Defaults across SDKs: 500 ms, 1000 ms, or the best static threshold?", sdkDefaults},
	{"price", "04-price-of-hedging", "The price of hedging: RU multiplier against tail latency", price},
	{"storms", "05-hedging-storms", "Hedging storms: a fleet hedges into an alternate that serves other tenants", storms},
	{"q9", "06-q9-feeds", "Spec §17 Q9: hedging feeds page by page", q9},
	{"q503", "07-503-rule", "The 503 rule: after how many consecutive 503s is a region marked unavailable?", q503},
}

func main() {
	out := flag.String("out", "notebooks", "output directory")
	only := flag.String("only", "", "comma-separated notebook ids to regenerate ("+ids()+"); default all")
	parallel := flag.Int("parallel", runtime.GOMAXPROCS(0), "worker goroutines (the output does not depend on it)")
	png := flag.Bool("png", false, "also write each chart as PNG beside its SVG (the notebooks link the SVGs)")
	index := flag.String("index", "", "instead of the notebooks, write DIR/README.md indexing the scenario results in DIR")
	flag.Parse()
	if *index != "" {
		if err := writeIndex(*index); err != nil {
			fmt.Fprintf(os.Stderr, "notebooks: %v\n", err)
			os.Exit(1)
		}
		fmt.Println(filepath.Join(*index, "README.md"))
		return
	}
	want := map[string]bool{}
	for _, id := range strings.Split(*only, ",") {
		if id = strings.TrimSpace(id); id != "" {
			want[id] = true
		}
	}
	for id := range want {
		if !known(id) {
			fmt.Fprintf(os.Stderr, "notebooks: unknown notebook %q (have %s)\n", id, ids())
			os.Exit(2)
		}
	}
	for _, nb := range notebooks {
		if len(want) > 0 && !want[nb.id] {
			continue
		}
		start := time.Now()
		// Start from an empty chart directory so that nothing of an earlier
		// study (a renamed policy's files) survives.
		if err := os.RemoveAll(filepath.Join(*out, nb.file)); err != nil {
			fmt.Fprintf(os.Stderr, "notebooks: %v\n", err)
			os.Exit(1)
		}
		d := newDoc(*out, nb.file, nb.title, *parallel)
		d.png = *png
		if err := nb.run(d); err != nil {
			fmt.Fprintf(os.Stderr, "notebooks: %s: %v\n", nb.id, err)
			os.Exit(1)
		}
		path, err := d.write()
		if err != nil {
			fmt.Fprintf(os.Stderr, "notebooks: %s: %v\n", nb.id, err)
			os.Exit(1)
		}
		fmt.Printf("%s (%s)\n", path, time.Since(start).Round(time.Second))
	}
}

func ids() string {
	var s []string
	for _, nb := range notebooks {
		s = append(s, nb.id)
	}
	return strings.Join(s, ",")
}

func known(id string) bool {
	for _, nb := range notebooks {
		if nb.id == id {
			return true
		}
	}
	return false
}

// chartDir returns the directory of a notebook's charts for one run.
func (d *doc) chartDir(name string) string { return filepath.Join(d.root, d.name, name) }
