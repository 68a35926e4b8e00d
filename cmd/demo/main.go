package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/experiment"
	"github.com/isamatch/isamatch/internal/rebalancecluster"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

type options struct {
	seed      uint64
	tasks     int
	scenarios []string
	listPods  bool
	timeout   time.Duration
}

func parseArgs(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	var scenarios string
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the workload (task needs and requests)")
	fs.IntVar(&o.tasks, "tasks", 100, "tasks per run (the paper's 100: 90 service, 10 compute)")
	fs.StringVar(&scenarios, "scenarios", "", "comma-separated scenarios to run (default all: "+strings.Join(scenarioNames(), ",")+")")
	fs.BoolVar(&o.listPods, "pods", false, "list every pod's node, not only the counts per need")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q: the demo takes flags only", fs.Args())
	}
	if o.tasks <= 0 || o.tasks > 1000 {
		return options{}, fmt.Errorf("-tasks=%d: use 1 to 1000", o.tasks)
	}
	if o.timeout <= 0 {
		return options{}, fmt.Errorf("-timeout=%s must be positive", o.timeout)
	}
	known := scenarioNames()
	if scenarios != "" {
		for _, s := range strings.Split(scenarios, ",") {
			s = strings.TrimSpace(s)
			if !slices.Contains(known, s) {
				return options{}, fmt.Errorf("-scenarios: unknown scenario %q: use some of %s", s, strings.Join(known, ","))
			}
			o.scenarios = append(o.scenarios, s)
		}
	}
	return o, nil
}

// scenarioNames are the paper's scenarios, then the scenes that run on a
// cluster of their own.
func scenarioNames() []string {
	var names []string
	for _, sc := range experiment.Scenarios() {
		names = append(names, sc.Name)
	}
	return append(names, rebalanceScene, leafScene)
}

// selected reports whether the run includes scenario name.
func (o options) selected(name string) bool {
	return len(o.scenarios) == 0 || slices.Contains(o.scenarios, name)
}

func main() { os.Exit(run()) }

func run() int {
	// envtest logs through controller-runtime; the tables are the output.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runWith(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

func runWith(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	start := time.Now()
	failures, err := demo(ctx, o, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "demo: FAILED after %.0fs: %v\n", time.Since(start).Seconds(), err)
		return exitFail
	}
	if len(failures) > 0 {
		fmt.Fprintf(stderr, "demo: FAILED after %.0fs: isamatch did not reach its target:\n  %s\n",
			time.Since(start).Seconds(), strings.Join(failures, "\n  "))
		return exitFail
	}
	fmt.Fprintf(stderr, "demo: OK in %.0fs: every scenario that ran met its target: each pod on a node that can run it, on a best-fit node whenever one had room\n",
		time.Since(start).Seconds())
	return exitOK
}

// demo runs the selected paper scenarios, then the selected scenes, each
// scene on a cluster of its own, and prints the results; it returns the
// targets isamatch missed. A scene whose binaries are missing is skipped
// with a line saying why.
func demo(ctx context.Context, o options, stdout, progress io.Writer) ([]string, error) {
	var failures []string
	paper := slices.ContainsFunc(experiment.Scenarios(), func(sc experiment.Scenario) bool { return o.selected(sc.Name) })
	if paper {
		f, err := paperDemo(ctx, o, stdout, progress)
		if err != nil {
			return nil, err
		}
		failures = append(failures, f...)
	}
	if o.selected(rebalanceScene) {
		if paper {
			fmt.Fprintln(stdout)
		}
		if _, err := rebalancecluster.NodeAssetsDir(); err != nil {
			fmt.Fprintf(stdout, "%s: skipped: %v\n", rebalanceScene, err)
		} else {
			f, err := rebalanceDemo(ctx, stdout, progress)
			if err != nil {
				return nil, err
			}
			failures = append(failures, f...)
		}
	}
	if o.selected(leafScene) {
		if paper || o.selected(rebalanceScene) {
			fmt.Fprintln(stdout)
		}
		if dir, why := kueueAssets(); dir == "" {
			fmt.Fprintf(stdout, "%s: skipped: %s\n", leafScene, why)
		} else {
			f, err := leafDemo(ctx, dir, stdout, progress)
			if err != nil {
				return nil, err
			}
			failures = append(failures, f...)
		}
	}
	return failures, nil
}

// paperDemo brings the paper's cluster up, runs its scenarios and prints
// the results; it returns the targets isamatch missed.
func paperDemo(ctx context.Context, o options, stdout, progress io.Writer) (failures []string, err error) {
	nodes := experiment.PaperCluster()
	c, err := democluster.Start(ctx, democluster.Options{Nodes: nodes, Progress: progress})
	if err != nil {
		return nil, err
	}
	defer func() {
		if stopErr := c.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("tear down: %w", stopErr)
		}
	}()
	isas, err := c.NodeISA(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(stdout, "nodes (ISA as the labeler probed it from the node's host root):")
	for _, n := range nodes {
		fmt.Fprintf(stdout, "  %-6s %-8s host root pkg/probe/testdata/%-12s isa %s\n", n.Name, n.Arch, n.Fixture, isas[n.Name])
	}
	fmt.Fprintln(stdout)

	runner := c.Runner(progress)
	var rows []experiment.Row
	var where []string
	for _, sc := range experiment.Scenarios() {
		if !o.selected(sc.Name) {
			continue
		}
		tasks := experiment.Workload(o.seed, o.tasks, sc.Needs)
		row := experiment.Row{Scenario: sc}
		for _, isamatch := range []bool{false, true} {
			res, placements, err := runner.Run(ctx, sc, isamatch, tasks)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w\n%s", sc.Name, err, c.LogTails(20))
			}
			if isamatch {
				row.Isamatch = res
			} else {
				row.Stock = res
			}
			where = append(where, whereWent(sc.Name, res, placements, o.listPods)...)
		}
		rows = append(rows, row)
		failures = append(failures, Verdict(row)...)
	}
	experiment.PrintTable(stdout, rows, nodes)
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "where the pods went, by need:")
	for _, l := range where {
		fmt.Fprintln(stdout, "  "+l)
	}
	return failures, nil
}

// Verdict lists what isamatch missed in one scenario: a pod on a node that
// cannot run it, or an eligible pod off its best-fit node.
func Verdict(row experiment.Row) []string {
	var out []string
	r := row.Isamatch
	if r.Correct != r.Pods {
		out = append(out, fmt.Sprintf("%s: %d of %d pods on a node that can run them (%s)",
			row.Scenario.Name, r.Correct, r.Pods, strings.Join(r.Wrong, " ")))
	}
	if r.BestFit != r.Eligible {
		out = append(out, fmt.Sprintf("%s: %d of %d eligible pods on a best-fit node",
			row.Scenario.Name, r.BestFit, r.Eligible))
	}
	return out
}

// whereWent summarises a run: per need, how many pods each node got; with
// all, one line per pod.
func whereWent(scenario string, res experiment.Result, placements []experiment.Placement, all bool) []string {
	mode := "stock"
	if res.Isamatch {
		mode = "isamatch"
	}
	byNeed := map[string]map[string]int{}
	for _, p := range placements {
		if byNeed[p.Task.Need] == nil {
			byNeed[p.Task.Need] = map[string]int{}
		}
		node := p.Node
		if node == "" {
			node = "unscheduled"
		}
		byNeed[p.Task.Need][node]++
	}
	var lines []string
	for _, need := range sortedKeys(byNeed) {
		var parts []string
		for _, node := range sortedKeys(byNeed[need]) {
			parts = append(parts, fmt.Sprintf("%s=%d", node, byNeed[need][node]))
		}
		lines = append(lines, fmt.Sprintf("%-9s %-8s %-10s %s", scenario, mode, need, strings.Join(parts, " ")))
	}
	if all {
		var b strings.Builder
		for i, p := range placements {
			if i%6 == 0 {
				if i > 0 {
					lines = append(lines, b.String())
				}
				b.Reset()
				fmt.Fprintf(&b, "%-9s %-8s pods:", scenario, mode)
			}
			node := p.Node
			if node == "" {
				node = "-"
			}
			fmt.Fprintf(&b, " %s(%s)->%s", p.Task.Name, p.Task.Need, node)
		}
		if b.Len() > 0 {
			lines = append(lines, b.String())
		}
	}
	return lines
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
