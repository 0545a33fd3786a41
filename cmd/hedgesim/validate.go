package main

import (
	"flag"
	"fmt"
	"io"
)

const validateUsage = `Usage: hedgesim validate FILE|NAME...

Parses and checks each scenario file or embedded scenario (schema, values,
references, resource limits) without running it. Prints "ok" per valid
scenario; exits 1 if any is invalid, with every error found (up to 20 per
file) in the form FILE:LINE: FIELD: MESSAGE. Warnings (valid but probably
unintended, e.g. an episode after the run ends) go to stderr and do not
change the exit status.

Example:
  hedgesim validate scenarios/*.toml
  hedgesim validate default
`

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if wantsHelp(args) {
		fmt.Fprint(stdout, validateUsage)
		return exitOK
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stderr, "validate", err.Error())
	}
	if len(files) == 0 {
		return usageError(stderr, "validate", fmt.Sprintf("validate needs at least one scenario (%s)", scenarioArg))
	}
	code := exitOK
	for _, file := range files {
		s, err := load(file) // a scenario that parses also builds
		if err != nil {
			fmt.Fprintln(stderr, err)
			code = exitError
			continue
		}
		printWarnings(stderr, s)
		fmt.Fprintf(stdout, "%s: ok (%s)\n", file, s.Name)
	}
	return code
}
