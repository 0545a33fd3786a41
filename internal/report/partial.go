package report

// The files of a shard's partial result (hedgesim run|sweep --shard
// i/n): a directory holds exactly these two, written as a whole like a
// run's results.
const (
	// PartialHeader is the JSON description of the shard: the command,
	// its scenarios and flags, the build, the shard and the digest of
	// PartialState.
	PartialHeader = "shard.json"
	// PartialState is the shard's measurements (study.Partial's binary
	// form).
	PartialState = "shard.bin"
)

// WritePartial writes a shard's partial result, its header and state,
// into dir as [WriteRun] writes a run's results: into a temporary
// directory that then replaces dir as a whole (dir must pass
// [CheckOutputDir]); on error nothing is written. It returns the paths
// written.
func WritePartial(dir string, header, state []byte) ([]string, error) {
	return writeAll(dir, []output{{PartialHeader, header}, {PartialState, state}})
}
