package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// FeedFigures are one policy's Phase 2 figures (spec §16 Phase 2, §17
// Q9): the pages of its queries, ReadMany calls and change-feed polls,
// the setup before the first page, and what the change-feed pollers
// received. Figures.Feed holds them for a run with feeds; summary.json
// writes them under "feed", summary.csv as feed_* columns and
// [FormatFeedTable] prints them.
type FeedFigures struct {
	// Pages counts the data pages raced (every leaf of every query,
	// ReadMany call and poll, setup reads excluded); LegsPerPage is the
	// legs each sent: 1 + the share of pages that sent the alternate.
	Pages       int64
	LegsPerPage Share
	// Gated counts the pages sent without a hedge by the feed gate, of
	// Pages.
	Gated Share
	// Stale counts the returned pages whose replica had not applied every
	// committed write and Monotonic those older than an earlier page of
	// the same leaf (monotonic-read violations), of the pages returned.
	Stale, Monotonic Share
	// SetupShare is the share of the queries' latency spent before their
	// first page (setup stages: collection, partition-key ranges, query
	// plan); NaN without queries. Its interval is across replications
	// (Student t; NaN with one).
	SetupShare Estimate
	// MetadataHedges counts the setup (metadata) reads that sent the
	// alternate, of the setup reads.
	MetadataHedges Share
	// Changes is the changes committed on the polled partitions (0
	// without change-feed pollers, and then Duplicates and Skips are
	// NaN): Duplicates counts re-deliveries and Skips the changes below a
	// partition's highest delivered that no poll delivered, both as a
	// rate per 10⁶ changes.
	Changes          int64
	Duplicates, Skip Share
	// PollRUMultiplier is the change-feed polls' RU charged / RU
	// returned (polls are not operations, so the operations' RU × leaves
	// them out); NaN without polls or when they returned no RU. Its
	// interval is across replications.
	PollRUMultiplier Estimate
}

// Share is a count of events, its rate (N / Of × Scale: a fraction, or
// per 10⁶ for the change feed) and the rate's exact 95% interval
// (Clopper–Pearson on the pooled counts of every replication, scaled);
// the rate and interval are NaN when Of is 0.
type Share struct {
	N, Of int64
	Rate  float64
	CI    [2]float64
}

// Estimate is a figure with a 95% interval (NaN ends when it has none).
type Estimate struct {
	Value float64
	CI    [2]float64
}

// feedColumn is one figure of the feed object of summary.json (key) and
// of summary.csv (feed_<key>): a count, or a value with prec decimals and,
// when ci is set, its interval (<key>_ci95 in JSON, _ci95_low/_high in
// CSV). One table drives both files, so their keys cannot drift apart.
type feedColumn struct {
	key   string
	count func(*FeedFigures) int64
	value func(*FeedFigures) float64
	ci    func(*FeedFigures) [2]float64
	prec  int
}

func countCol(key string, f func(*FeedFigures) int64) feedColumn {
	return feedColumn{key: key, count: f}
}

func shareCol(key string, prec int, s func(*FeedFigures) *Share) feedColumn {
	return feedColumn{key: key, prec: prec, value: func(f *FeedFigures) float64 { return s(f).Rate },
		ci: func(f *FeedFigures) [2]float64 { return s(f).CI }}
}

func estimateCol(key string, prec int, e func(*FeedFigures) *Estimate) feedColumn {
	return feedColumn{key: key, prec: prec, value: func(f *FeedFigures) float64 { return e(f).Value },
		ci: func(f *FeedFigures) [2]float64 { return e(f).CI }}
}

// feedColumns are the feed figures in output order.
var feedColumns = []feedColumn{
	countCol("pages", func(f *FeedFigures) int64 { return f.Pages }),
	shareCol("legs_per_page", precRate, func(f *FeedFigures) *Share { return &f.LegsPerPage }),
	countCol("pages_gated", func(f *FeedFigures) int64 { return f.Gated.N }),
	shareCol("pages_gated_rate", precRate, func(f *FeedFigures) *Share { return &f.Gated }),
	countCol("pages_returned", func(f *FeedFigures) int64 { return f.Stale.Of }),
	countCol("stale_pages", func(f *FeedFigures) int64 { return f.Stale.N }),
	shareCol("stale_page_rate", precRate, func(f *FeedFigures) *Share { return &f.Stale }),
	countCol("monotonic_read_violations", func(f *FeedFigures) int64 { return f.Monotonic.N }),
	shareCol("monotonic_read_violation_rate", precRate, func(f *FeedFigures) *Share { return &f.Monotonic }),
	estimateCol("setup_share", precRate, func(f *FeedFigures) *Estimate { return &f.SetupShare }),
	countCol("setup_reads", func(f *FeedFigures) int64 { return f.MetadataHedges.Of }),
	countCol("metadata_hedges", func(f *FeedFigures) int64 { return f.MetadataHedges.N }),
	shareCol("metadata_hedge_rate", precRate, func(f *FeedFigures) *Share { return &f.MetadataHedges }),
	countCol("changes", func(f *FeedFigures) int64 { return f.Changes }),
	countCol("duplicates", func(f *FeedFigures) int64 { return f.Duplicates.N }),
	shareCol("duplicates_per_million", precMs, func(f *FeedFigures) *Share { return &f.Duplicates }),
	countCol("skips", func(f *FeedFigures) int64 { return f.Skip.N }),
	shareCol("skips_per_million", precMs, func(f *FeedFigures) *Share { return &f.Skip }),
	estimateCol("poll_ru_multiplier", precRate, func(f *FeedFigures) *Estimate { return &f.PollRUMultiplier }),
}

// feedJSON is summary.json's "feed" object: feedColumns in order.
type feedJSON struct{ f *FeedFigures }

func (j feedJSON) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range feedColumns {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", c.key)
		if c.count != nil {
			b.WriteString(strconv.FormatInt(c.count(j.f), 10))
			continue
		}
		v, _ := num{c.value(j.f), c.prec}.MarshalJSON()
		b.Write(v)
		if c.ci != nil {
			ci := c.ci(j.f)
			lo, _ := num{ci[0], c.prec}.MarshalJSON()
			hi, _ := num{ci[1], c.prec}.MarshalJSON()
			fmt.Fprintf(&b, ",%q:[%s,%s]", c.key+"_ci95", lo, hi)
		}
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func newFeedJSON(f *FeedFigures) *feedJSON {
	if f == nil {
		return nil
	}
	return &feedJSON{f}
}

// feedHeader returns summary.csv's feed columns, written when a policy
// has feed figures.
func feedHeader() []string {
	var h []string
	for _, c := range feedColumns {
		h = append(h, "feed_"+c.key)
		if c.ci != nil {
			h = append(h, "feed_"+c.key+"_ci95_low", "feed_"+c.key+"_ci95_high")
		}
	}
	return h
}

// feedRow is a policy's feed cells in feedHeader's order (empty for a
// policy without feed figures).
func feedRow(f *FeedFigures) []string {
	var row []string
	for _, c := range feedColumns {
		n := 1
		if c.ci != nil {
			n = 3
		}
		switch {
		case f == nil:
			row = append(row, make([]string, n)...)
		case c.count != nil:
			row = append(row, strconv.FormatInt(c.count(f), 10))
		default:
			cell := func(v float64) string {
				if c.prec == precMs {
					return fmtMs(v)
				}
				return fmtNum(v, c.prec)
			}
			row = append(row, cell(c.value(f)))
			if c.ci != nil {
				ci := c.ci(f)
				row = append(row, cell(ci[0]), cell(ci[1]))
			}
		}
	}
	return row
}

// hasFeed reports whether a policy of ps has feed figures.
func hasFeed(ps []PolicyResult) bool {
	for i := range ps {
		if ps[i].Feed != nil {
			return true
		}
	}
	return false
}

// FormatFeedTable writes the Phase 2 table of figs (the policies with
// feed figures) for stdout: pages raced, legs per page, pages gated and
// stale (%), monotonic-read violations, change-feed duplicates and skips
// per 10⁶ changes with their exact 95% intervals, the setup share of
// query latency and the metadata reads hedged (%), and the polls' RU
// multiplier. Non-finite values print as "-". It writes nothing when no
// policy has feed figures.
func FormatFeedTable(w io.Writer, figs []Figures) error {
	width := utf8.RuneCountInString("policy")
	any := false
	for i := range figs {
		width = max(width, utf8.RuneCountInString(figs[i].Policy))
		any = any || figs[i].Feed != nil
	}
	if !any {
		return nil
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t  pages\t  legs/page\t  gated %%\t  stale %%\t  monotonic\t  dup/10⁶ [95%% CI]\t  skips/10⁶ [95%% CI]\t  setup %%\t  meta hedged %%\t  poll RU ×\t\n", pad("policy"))
	for i := range figs {
		f := figs[i].Feed
		if f == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t  %d\t  %s\t  %s\t  %s\t  %d\t  %s\t  %s\t  %s\t  %s\t  %s\t\n", pad(figs[i].Policy), f.Pages,
			fmtFixed(f.LegsPerPage.Rate, 3), fmtPct(f.Gated.Rate), fmtPct(f.Stale.Rate), f.Monotonic.N,
			perMillion(f.Duplicates), perMillion(f.Skip), fmtPct(f.SetupShare.Value), fmtPct(f.MetadataHedges.Rate),
			fmtFixed(f.PollRUMultiplier.Value, 3))
	}
	return tw.Flush()
}

// fmtFixed formats v with prec decimals, "-" when not finite.
func fmtFixed(v float64, prec int) string {
	if !finite(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// perMillion formats a per-10⁶ share with its interval: "120 [88, 160]",
// "-" without a denominator.
func perMillion(s Share) string {
	if !finite(s.Rate) {
		return "-"
	}
	r := func(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }
	return r(s.Rate) + " [" + r(s.CI[0]) + ", " + r(s.CI[1]) + "]"
}

// FeedLegend is the legend printed under a [FormatFeedTable] table: what
// each column counts and how its interval is computed. One line.
const FeedLegend = "pages: data pages raced (queries, ReadMany, change-feed polls; setup reads apart); legs/page: 1 + the share that sent the alternate; " +
	"gated: pages the feed gate sent without a hedge; stale: returned pages whose replica had not applied every committed write; " +
	"monotonic: returned pages older than an earlier page of the same leaf (monotonic-read violations); " +
	"dup, skips: change-feed re-deliveries and never-delivered changes per 10⁶ committed (\"-\" without pollers); " +
	"setup: share of query latency before the first page; meta hedged: setup (metadata) reads that sent the alternate; " +
	"poll RU ×: the polls' RU charged / returned (polls are not operations: the RU × above leaves them out); " +
	"every share's 95% interval in summary.json is exact (Clopper–Pearson) on the counts pooled over the replications"
