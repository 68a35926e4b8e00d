package experiment

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Row pairs a scenario's stock and isamatch results.
type Row struct {
	Scenario        Scenario
	Stock, Isamatch Result
}

// PrintTable writes the comparison table and where each pod went.
func PrintTable(w io.Writer, rows []Row, nodes []NodeSpec) {
	fmt.Fprintf(w, "%-10s %-12s %-14s %-16s %-14s %-16s\n",
		"scenario", "paper stock", "stock correct", "isamatch correct", "stock bestfit", "isamatch bestfit")
	for _, r := range rows {
		paper := "-"
		if r.Scenario.PaperStock >= 0 {
			paper = fmt.Sprintf("%.0f%%", 100*r.Scenario.PaperStock)
		}
		fmt.Fprintf(w, "%-10s %-12s %-14s %-16s %-14s %-16s\n", r.Scenario.Name, paper,
			pct(r.Stock.Correctness()), pct(r.Isamatch.Correctness()),
			pct(r.Stock.BestFitRate()), pct(r.Isamatch.BestFitRate()))
	}
	fmt.Fprintln(w)
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "%-10s %-9s", "pods on", "run")
	for _, n := range names {
		fmt.Fprintf(w, " %6s", n)
	}
	fmt.Fprintf(w, " %11s  %s\n", "unscheduled", "first wrong placements")
	for _, r := range rows {
		for _, res := range []Result{r.Stock, r.Isamatch} {
			mode := "stock"
			if res.Isamatch {
				mode = "isamatch"
			}
			fmt.Fprintf(w, "%-10s %-9s", r.Scenario.Name, mode)
			for _, n := range names {
				fmt.Fprintf(w, " %6d", res.PerNode[n])
			}
			fmt.Fprintf(w, " %11d  %s\n", res.PerNode[""], strings.Join(res.Wrong, " "))
		}
	}
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }
