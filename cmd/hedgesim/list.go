package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"hedgelab/scenarios"
)

const listUsage = "Usage: hedgesim list\n\nLists the embedded scenarios (run one with: hedgesim run NAME).\n"

func cmdList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if wantsHelp(args) {
		fmt.Fprint(stdout, listUsage)
		return exitOK
	}
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		return usageError(stderr, "list", err.Error())
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "list", fmt.Sprintf("list takes no arguments, got %q", fs.Args()))
	}
	list, err := scenarios.Embedded()
	if err != nil {
		fmt.Fprintf(stderr, "hedgesim: %v\n", err)
		return exitError
	}
	for _, s := range list {
		desc := s.Description
		if i := strings.Index(desc+" ", ". "); i > 0 {
			desc = desc[:i+1] // the first sentence
		}
		fmt.Fprintf(stdout, "%-28s %s\n", s.Name, desc)
	}
	return exitOK
}

// usageLines are the commands' usage lines, the first line of each help
// ("" is hedgesim itself).
