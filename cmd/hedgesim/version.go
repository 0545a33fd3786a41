package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build information)"
	}
	return formatVersion(info)
}

// formatVersion renders build information as "<module version> <revision
// (12 hex digits)>[+dirty] <go version>", for example
// "v0.0.0-20261201135557-87a28f53daf2 87a28f53daf2 go1.26.8", and says so
// when no revision was recorded: `go run`, -buildvcs=false (GOFLAGS), or
// a build outside a git clone (a git worktree included) record none;
// `make build` records it.
func formatVersion(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev == "" {
		return v + " " + info.GoVersion + " (no VCS revision recorded: built by go run, with -buildvcs=false, or outside a git clone; make build records it)"
	}
	return v + " " + rev[:min(12, len(rev))] + modified + " " + info.GoVersion
}

// versionUsage is the help of version.
const versionUsage = `Usage: hedgesim version (or: hedgesim --version)

Prints the module version, the VCS revision the binary was built from
(with +dirty for uncommitted changes) and the Go version, as far as the Go
toolchain recorded them. A binary built by go run, with -buildvcs=false or
outside a git clone records no revision, and says so; make build records it.
`

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	if wantsHelp(args) {
		fmt.Fprint(stdout, versionUsage)
		return exitOK
	}
	if len(args) > 0 {
		return usageError(stderr, "version", fmt.Sprintf("version takes no arguments, got %q", args))
	}
	fmt.Fprintf(stdout, "hedgesim %s\n", version())
	return exitOK
}

// runFlags are shared by run and sweep.
