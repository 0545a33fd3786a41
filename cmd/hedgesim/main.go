// Command hedgesim simulates cross-region request hedging scenarios and
// writes tables and design-review charts that compare threshold policies on
// tail latency and RU multiplier.
//
// Usage:
//
//	hedgesim                          run the embedded default scenario
//	hedgesim run FILE|NAME...         run scenario files or embedded scenarios
//	hedgesim sweep FILE|NAME --param PATH=FROM:TO:STEP
//	hedgesim merge DIR...             merge the shards of a run or sweep (--shard I/N)
//	hedgesim validate FILE|NAME...    check scenarios without running them
//	hedgesim scorecard [FILE|DIR|NAME...] [--library]
//	                                  score every threshold policy
//	hedgesim fuzz --n N --seed S      generate, run and check scenarios; shrink failures
//	hedgesim calibrate FILE...        write a scenario from OTLP JSON or CSV telemetry
//	hedgesim whatif TELEMETRY...      calibrate, run the policy roster, print a verdict
//	hedgesim telemetry FILE|NAME      export a simulation's telemetry as OTLP JSON
//	hedgesim list                     list the embedded scenarios
//	hedgesim version                  print the version (also --version)
//
// Run "hedgesim help" or "hedgesim COMMAND -h" for flags and examples.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"golang.org/x/term"

	"hedgelab/scenarios"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `hedgesim simulates cross-region request hedging and compares threshold policies.

Usage:
  hedgesim [flags]                              run the embedded default scenario
  hedgesim run [flags] FILE|NAME...             run scenario files or embedded scenarios
  hedgesim sweep [flags] FILE|NAME --param PATH=FROM:TO:STEP
                                                vary one numeric parameter and draw curves
  hedgesim merge [flags] DIR...                 merge the partial results of a run or sweep
                                                run as shards (--shard I/N) on several machines
  hedgesim validate FILE|NAME...                check scenarios without running them
  hedgesim scorecard [flags] [FILE|DIR|NAME...] score every threshold policy (--library: all embedded)
  hedgesim fuzz --n N --seed S                  generate, run and check N scenarios; shrink what fails
  hedgesim calibrate [flags] FILE...            write a scenario from OTLP JSON or CSV telemetry
  hedgesim whatif [flags] TELEMETRY...          calibrate, run the policy roster, print a verdict
  hedgesim telemetry [flags] FILE|NAME --out F  export a simulation's telemetry as OTLP JSON
  hedgesim list                                 list the embedded scenarios
  hedgesim version                              print the version (also: --version)

Examples:
  hedgesim                                      # default scenario -> results/default/
  hedgesim run scenarios/healthy.toml --out /tmp/healthy
  hedgesim run heavy-tail -q                    # an embedded scenario by name
  hedgesim sweep default --param policies.static-100ms.threshold_ms=20:200:20
  hedgesim validate scenarios/*.toml
  hedgesim run default --replications 40 --shard 0/4 --out parts/0   # ... 3/4, on 4 machines
  hedgesim merge parts/*                        # -> results/default/, as without --shard

The flags of "hedgesim [flags]" are those of run. Run "hedgesim COMMAND -h"
for the flags of a command.
`

// exit codes
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130 // 128 + SIGINT, as shells report a Ctrl-C
)

// errInterrupted is returned when the context is cancelled (Ctrl-C).
var errInterrupted = errors.New("interrupted: no result files were written for it")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
			return cmdVersion(args[1:], stdout, stderr)
		}
		return cmdRunTop(ctx, args, stdout, stderr)
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr, false)
	case "sweep":
		return cmdSweep(ctx, args[1:], stdout, stderr)
	case "merge":
		return cmdMerge(ctx, args[1:], stdout, stderr)
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "scorecard":
		return cmdScorecard(ctx, args[1:], stdout, stderr)
	case "fuzz":
		return cmdFuzz(ctx, args[1:], stdout, stderr)
	case "calibrate":
		return cmdCalibrate(args[1:], stdout, stderr)
	case "whatif":
		return cmdWhatif(ctx, args[1:], stdout, stderr)
	case "telemetry":
		return cmdTelemetry(args[1:], stdout, stderr)
	case "list":
		return cmdList(args[1:], stdout, stderr)
	case "version":
		return cmdVersion(args[1:], stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	return usageError(stderr, "", fmt.Sprintf("unknown command %q", args[0]))
}

// cmdRunTop is "hedgesim [flags]": run the default scenario, with the
// top-level usage for a bad flag.
func cmdRunTop(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cmdRun(ctx, append([]string{scenarios.DefaultName}, args...), stdout, stderr, true)
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// wantsHelp reports whether args ask for help (-h, -help, --help) before
// any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// version returns the module version and VCS revision the binary was
// built from, as far as the Go toolchain recorded them.
var usageLines = map[string]string{
	"":          "Usage: hedgesim [COMMAND] [flags] [FILE|NAME...]  (commands: run, sweep, merge, validate, scorecard, fuzz, calibrate, whatif, telemetry, list, version, help)",
	"run":       firstLine(runUsage),
	"sweep":     firstLine(sweepUsage),
	"merge":     firstLine(mergeUsage),
	"validate":  firstLine(validateUsage),
	"scorecard": firstLine(scorecardUsage),
	"fuzz":      firstLine(fuzzUsage),
	"calibrate": firstLine(calibrateUsage),
	"whatif":    firstLine(whatifUsage),
	"telemetry": firstLine(telemetryUsage),
	"list":      firstLine(listUsage),
	"version":   firstLine(versionUsage),
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// usageError prints a usage error of command cmd ("" for hedgesim
// itself) to w: one line saying what is wrong, the command's usage line
// and where its help is; it returns exitUsage.
// writeHelp writes a command's usage text and its flags with their
// defaults to w (what -h and --help print) and returns exitOK.
func writeHelp(w io.Writer, usage string, fs *flag.FlagSet) int {
	fmt.Fprint(w, usage)
	fs.SetOutput(w)
	fs.PrintDefaults()
	return exitOK
}

func usageError(w io.Writer, cmd, msg string) int {
	help := "hedgesim help"
	if cmd != "" {
		help = "hedgesim " + cmd + " -h"
	}
	fmt.Fprintf(w, "hedgesim: %s\n%s\nRun %q for help.\n", msg, usageLines[cmd], help)
	return exitUsage
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
