package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Verdict is how a row compares with its goal.
type Verdict string

// Verdicts.
const (
	Pass Verdict = "pass"
	Fail Verdict = "FAIL"
	// Info rows have no goal of their own (the baseline figures).
	Info Verdict = "-"
	// Error rows could not be measured; the figure says why.
	Error Verdict = "ERROR"
)

// Row is one line of the table.
type Row struct {
	// Section is the item number ("1. admission").
	Section string
	// Name says what is measured.
	Name string
	// Figure is the median measured value with its unit.
	Figure string
	// Goal is the target, "" for information rows.
	Goal    string
	Verdict Verdict
	// Runs are the individual repetitions, for the reader to judge noise.
	Runs string
}

// verdict is Pass when ok, else Fail.
func verdict(ok bool) Verdict {
	if ok {
		return Pass
	}
	return Fail
}

// Table is the benchmark's result.
type Table struct {
	// Header lines come first (the machine, the date, the run count).
	Header []string
	Rows   []Row
	// Notes follow the table.
	Notes []string
}

// Add appends a row.
func (t *Table) Add(r Row) { t.Rows = append(t.Rows, r) }

// Print writes the table as aligned columns (also valid inside a Markdown
// code block).
func (t *Table) Print(w io.Writer) error {
	var b strings.Builder
	for _, h := range t.Header {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tmeasure\tfigure (median)\tgoal\tresult\truns")
	last := ""
	for _, r := range t.Rows {
		sec := r.Section
		if sec == last {
			sec = ""
		} else {
			last = sec
		}
		goal := r.Goal
		if goal == "" {
			goal = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", sec, r.Name, r.Figure, goal, r.Verdict, r.Runs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(t.Notes) > 0 {
		b.WriteByte('\n')
		for _, n := range t.Notes {
			b.WriteString("- ")
			b.WriteString(n)
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Failed counts the rows that missed their goal or could not be measured.
func (t *Table) Failed() int {
	n := 0
	for _, r := range t.Rows {
		if r.Verdict == Fail || r.Verdict == Error {
			n++
		}
	}
	return n
}

// runsText formats repetitions with a printf verb: "12.1 11.8 13.0".
func runsText(format string, xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, " ")
}
