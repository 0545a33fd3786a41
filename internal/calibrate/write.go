package calibrate

// This file writes a fitted model as a scenario file, with a comment
// beside each number saying what it was fitted from.

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"hedgelab/scenarios"
)

// Roster is the standard policy roster a calibrated scenario compares
// (after "current", the client's policy as estimated): no hedging, the
// spec's driver default, the dynamic P99 threshold and the recommended
// policy.
const Roster = `[[policies]]
name = "disabled"
type = "disabled"

[[policies]]
name = "driver-default"    # min(1 s, request_timeout/2), spec §5.2
type = "driver_default"

[[policies]]
name = "p99-dynamic"       # the observed p99 clamped to 50-4000 ms (TPS §4.2 with the issue-9 fixes)
type = "p99_dynamic"

[[policies]]
name = "recommended"       # notebook 01's answer (threshold.Recommended)
type = "recommended"
`

// CurrentPolicy is the name of the client's current policy in a
// calibrated scenario.
const CurrentPolicy = "current"

// RecommendedPolicy is the name of the recommended policy in [Roster].
const RecommendedPolicy = "recommended"

// TOML returns the scenario file of m, checked by scenarios.Parse
// (source names it in errors): an error means calibrate wrote a file
// hedgesim would not run, a defect.
func (m *Model) TOML(source string) ([]byte, error) {
	var b bytes.Buffer
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	comment := func(prefix, text string) {
		cont := prefix
		if strings.HasSuffix(prefix, "- ") {
			cont = strings.TrimSuffix(prefix, "- ") + "  "
		}
		for i, line := range wrapText(text, 96-len(prefix)) {
			if i == 0 {
				w("%s%s\n", prefix, line)
			} else {
				w("%s%s\n", cont, line)
			}
		}
	}
	w("# Calibrated by `hedgesim calibrate` from %s.\n", strings.Join(m.Sources, ", "))
	w("# Each number below says what it was fitted from. What the telemetry could not tell:\n")
	for _, u := range m.Unknown {
		comment("#   - ", u)
	}
	for _, r := range m.Regions {
		if r.Answered == 0 {
			comment("#   - ", fmt.Sprintf("%s: no answered attempt; its service time is borrowed from another region", r.Name))
		}
	}
	if len(m.Warnings) > 0 {
		w("# Warnings while reading:\n")
		for _, x := range m.Warnings {
			comment("#   - ", x)
		}
	}
	w("\nname = %q\n", m.Name)
	w("description = %q\n", fmt.Sprintf("Calibrated from %s: %d regions, %.0f s, %.4g operations/s.", strings.Join(m.Sources, ", "), len(m.Regions), m.DurationS, m.RatePerS))
	w("seed = %d\n", m.Seed)
	w("duration_s = %s          # the telemetry's span\n", fmtG(sig3(m.DurationS)))
	w("timeline_window_s = %s   # the telemetry's export interval\n", fmtG(m.WindowS))
	w("\n[client]\nregion = %q   # %s\n", m.ClientRegion, m.ClientNote)
	w("\n[account]\nwrite_region = %q   # unknown: the primary\n", m.Regions[0].Name)
	for i, r := range m.Regions {
		role := "the primary (most primary attempts)"
		if i > 0 {
			role = "an alternate"
		}
		w("\n[[endpoints]]   # %s\nregion = %q\nreplica = %q\n", role, r.Name, r.Replica)
	}
	primary := m.Regions[0] // the region borrowed from: the first with answers
	for _, r := range m.Regions {
		if r.Service.Family != "" {
			primary = r
			break
		}
	}
	if primary.Service.Family == "" {
		return nil, fmt.Errorf("%s: no region answered a single attempt with a status below 400: no service time to fit", strings.Join(m.Sources, ", "))
	}
	for _, r := range m.Regions {
		w("\n[[replicas]]   # %.0f answered, %.0f abandoned, %.0f other attempts\nname = %q\nregion = %q\n", r.Answered, r.Abandoned, r.Other, r.Replica, r.Physical)
		sf := r.Service
		if sf.Family == "" {
			sf = primary.Service
			sf.Why = fmt.Sprintf("borrowed: no answered attempt of %s; the service time of %s", r.Name, primary.Name)
		}
		comment("# service: ", sf.Why)
		w("[replicas.service]\n")
		switch sf.Family {
		case "lognormal":
			w("family = \"lognormal\"\nmedian_ms = %s\np99_ms = %s\n", fmtG(sf.MedianMs), fmtG(sf.P99Ms))
		default:
			w("family = \"empirical\"\nquantiles = [\n")
			for _, p := range sf.Quantiles {
				w("  [%s, %s],\n", fmtQ(p[0]), fmtG(sig5(p[1])))
			}
			w("]\n")
		}
	}
	if m.SameRegionRTTMs > 0 || m.JitterMs > 0 {
		w("\n[network]\nsame_region_rtt_ms = %s   # estimated from a slow episode (the RTT note below)\n", fmtG(m.SameRegionRTTMs))
		if m.JitterMs > 0 {
			w("# jitter: estimated beside same_region_rtt_ms from the same episode, which multiplies neither; taken out of every region's service time above (deconvolved)\n")
			w("jitter = { family = \"exponential\", mean_ms = %s }\n", fmtG(m.JitterMs))
		}
	} else {
		w("\n[network]\nsame_region_rtt_ms = 0.0   # inside the service time (telemetry cannot separate it)\n")
	}
	for _, r := range m.Regions {
		comment("# RTT to "+r.Name+": ", r.RTTNote)
	}
	if rows := m.rttRows(); len(rows) > 0 {
		w("[network.rtt_ms]\n")
		for _, row := range rows {
			w("%s\n", row)
		}
	}
	for i, e := range m.Episodes {
		w("\n[[episodes]]\n")
		comment("# ", e.Why)
		w("label = %q\ntarget = %q\nstart_s = %s\nend_s = %s\n", fmt.Sprintf("episode %d (%s)", i, e.Replica), e.Replica, fmtG(e.StartS), fmtG(e.EndS))
		if e.Factor != 1 {
			w("factor = %s\n", fmtG(sig3(e.Factor)))
		} else {
			w("add_ms = %s\nfraction = %s\n", fmtG(sig3(e.AddMs)), fmtG(sig3(e.Fraction)))
		}
	}
	for _, f := range m.Faults {
		code, sub, _ := strings.Cut(f.Status, "/")
		w("\n[[faults]]\n")
		comment("# ", f.Why)
		w("status = %s\n", code)
		if sub != "" {
			w("substatus = %s\n", sub)
		}
		w("probability = %s\ntargets = [%q]\nlatency_ms = %s\n", fmtG(sig5(f.Probability)), f.Replica, fmtG(f.LatencyMs))
		if f.EndS > 0 {
			w("start_s = %s\nend_s = %s\n", fmtG(f.StartS), fmtG(f.EndS))
		}
	}
	w("\n[workload]\n")
	comment("# rate: ", m.RateNote+"; a step where consecutive windows differ by more than 5 Poisson standard errors and 5%")
	w("rate_per_s = %s\n", fmtG(sig5(m.RatePerS)))
	comment("# partitions: ", m.PartitionsNote)
	w("partitions = %d\n", m.Partitions)
	for _, rc := range m.RateChanges {
		w("[[workload.rate_changes]]\nat_s = %s\nrate_per_s = %s\n", fmtG(rc[0]), fmtG(sig5(rc[1])))
	}
	w("\n[ru]\nread = %s   # %s\n", fmtG(sig5(m.RUPerRead)), m.RUNote)
	w("\n[[policies]]\nname = %q\n", CurrentPolicy)
	comment("# ", m.CurrentNote)
	w("%s\n\n", m.Current)
	pol := m.Policies
	if pol == "" {
		pol = Roster
	}
	b.WriteString(pol)
	out := b.Bytes()
	if _, err := scenarios.Parse(source, out); err != nil {
		return nil, fmt.Errorf("calibrate wrote a scenario hedgesim does not accept (a defect): %w", err)
	}
	return out, nil
}

// fmtQ formats a quantile level with enough digits to keep 1 - q apart.
func fmtQ(q float64) string {
	if q == 0 || q == 1 {
		return fmtG(q)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.9f", q), "0"), ".")
}

// sig5 rounds x to 5 significant digits.
func sig5(x float64) float64 {
	s := fmt.Sprintf("%.5g", x)
	var v float64
	fmt.Sscan(s, &v)
	return v
}

// wrapText breaks text into lines of at most width columns.
func wrapText(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, word := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(word) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(word)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// rttRows are the [network.rtt_ms] rows the scenario needs: the client's
// round trip to every other replica region (the fitted RTTMs) and, for
// the hub forwarding of writes, the write region's (the primary's) to
// every other replica region: the published P50 when both regions are in
// the matrix, else 0 (a region outside the matrix, such as a loopback
// test's, has its whole latency in its service time).
func (m *Model) rttRows() []string {
	var rows []string
	var client []string
	for _, r := range m.Regions {
		if r.Physical != m.ClientRegion && !slices.Contains(client, fmt.Sprintf("%q = %s", r.Physical, fmtG(r.RTTMs))) {
			client = append(client, fmt.Sprintf("%q = %s", r.Physical, fmtG(r.RTTMs)))
		}
	}
	if len(client) > 0 {
		rows = append(rows, fmt.Sprintf("%q = { %s }", m.ClientRegion, strings.Join(client, ", ")))
	}
	hub := m.Regions[0].Physical
	if hub == m.ClientRegion {
		return rows // the client's row holds the hub's
	}
	var hubs []string
	seen := map[string]bool{hub: true, m.ClientRegion: true}
	for _, r := range m.Regions[1:] {
		if seen[r.Physical] {
			continue
		}
		seen[r.Physical] = true
		v, ok := publishedRTT(hub, r.Physical)
		if !ok {
			v = 0
		}
		hubs = append(hubs, fmt.Sprintf("%q = %s", r.Physical, fmtG(v)))
	}
	if len(hubs) > 0 {
		rows = append(rows, fmt.Sprintf("%q = { %s }", hub, strings.Join(hubs, ", ")))
	}
	return rows
}
