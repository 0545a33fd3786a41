package main

// The notebooks' prose lives in templates/*.tmpl (text/template), one
// {{define}} per paragraph or section, executed with a typed view: a Go
// struct holding exactly the figures the paragraph cites. What the prose
// claims about those figures is checked in Go by named claims (claim,
// doc.check) that fail the generation when the data stops supporting them.
//
// Template source convention (as Markdown reads it): a single newline is a
// space, so prose can be wrapped freely; a blank line ends a paragraph.
// Leading and trailing blanks of each source line are dropped. Use the
// trim markers {{- and -}} where an action must join the text without a
// space. A define's body starts after `{{define "x" -}}` and ends before
// `{{- end}}`.

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// prose is every notebook's templates, parsed once.
var prose = mustParseProse(templateFS)

// proseFuncs are the formatting functions the templates call: the same
// ones the tables use, so a figure reads the same in both.
var proseFuncs = template.FuncMap{
	"ms":     ms,
	"ru":     ru,
	"pct":    pct,
	"util":   util,
	"count":  count,
	"g":      fmtG,
	"joinOr": joinOr,
	// joinAnd joins with commas and a final "and"; none when empty.
	"joinAnd": joinAnd,
	"join":    strings.Join,
	// pct0 renders a fraction as a whole percentage without the sign
	// ("30" for 0.3): the template writes the "%".
	"pct0": func(v float64) string { return fmt.Sprintf("%.0f", 100*v) },
	// pct1 renders a fraction as a percentage with one decimal, no sign.
	"pct1": func(v float64) string { return fmt.Sprintf("%.1f", 100*v) },
	// f0 … f3 render v with 0 to 3 decimals.
	"f0": func(v float64) string { return fmt.Sprintf("%.0f", v) },
	"f1": func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"f2": func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"f3": func(v float64) string { return fmt.Sprintf("%.3f", v) },
	// points renders a difference of RU multipliers in percentage points,
	// signed ("+3").
	"points": func(v float64) string { return fmt.Sprintf("%+.0f", 100*v) },
	// points1 renders a fraction as signed percent with one decimal
	// ("+3.2", "-0.4"): the template writes the "%".
	"points1": func(v float64) string { return fmt.Sprintf("%+.1f", 100*v) },
	"float":   func(n int) float64 { return float64(n) },
	"sub":     func(a, b float64) float64 { return a - b },
	"mul":     func(a, b float64) float64 { return a * b },
	"div":     func(a, b float64) float64 { return a / b },
	// codes renders names as "`a`, `b`".
	"codes": func(names []string) string {
		var out []string
		for _, n := range names {
			out = append(out, "`"+n+"`")
		}
		return strings.Join(out, ", ")
	},
	// nword spells a count of replications or instances below ten
	// ("three"); larger counts stay digits.
	"nword": nword,
}

// nword spells n in words below ten, in digits otherwise.
func nword(n int) string {
	if n >= 0 && n < 10 {
		return [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}[n]
	}
	return fmt.Sprint(n)
}

// mustParseProse parses every template file of fsys after joining its
// wrapped lines (joinProseLines); a malformed template is a programming
// error, caught by every test of the package.
func mustParseProse(fsys fs.FS) *template.Template {
	t := template.New("").Funcs(proseFuncs).Option("missingkey=error")
	files, err := fs.Glob(fsys, "templates/*.tmpl")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			panic(err)
		}
		if _, err := t.New(f).Parse(joinProseLines(string(src))); err != nil {
			panic(err)
		}
	}
	return t
}

// joinProseLines applies the template source convention: each line trimmed,
// consecutive non-empty lines joined by one space, a run of blank lines
// kept as one blank line (a paragraph break).
func joinProseLines(src string) string {
	var b strings.Builder
	blank := 0 // blank lines since the last text line; -1 before the first
	first := true
	for line := range strings.SplitSeq(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			blank++
			continue
		}
		switch {
		case first:
		case blank > 0:
			b.WriteString("\n\n")
		default:
			b.WriteString(" ")
		}
		b.WriteString(line)
		blank, first = 0, false
	}
	return b.String()
}

// say executes the template name with view and writes its text as one or
// more paragraphs. An execution error (a field the view lacks, a failing
// function) is kept as the doc's error: write returns it and nothing is
// written.
func (d *doc) say(name string, view any) {
	if d.err != nil {
		return
	}
	var b bytes.Buffer
	if err := prose.ExecuteTemplate(&b, name, view); err != nil {
		d.err = fmt.Errorf("template %s: %w", name, err)
		return
	}
	d.b.Write(bytes.TrimSpace(b.Bytes()))
	d.b.WriteString("\n\n")
}

// claim is one statement the prose makes about its tables, with the check
// that the figures still support it: ok returns nil when they do and
// otherwise an error saying which figure broke it.
type claim struct {
	name string
	ok   func() error
}

// check runs claims and keeps the first failure as the doc's error, naming
// the claim: the notebook is not written when its data stops supporting
// its prose.
func (d *doc) check(claims ...claim) {
	for _, c := range claims {
		if d.err != nil {
			return
		}
		if err := c.ok(); err != nil {
			d.err = fmt.Errorf("claim %q no longer holds: %w", c.name, err)
		}
	}
}

// failf is a claim's failure.
func failf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func joinOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, ", ")
}

func firstSentence(s string) string {
	for i, c := range s {
		if c == '.' && (i+1 == len(s) || s[i+1] == ' ') {
			return s[:i+1]
		}
	}
	return s
}
