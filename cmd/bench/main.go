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
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/isamatch/isamatch/internal/bench"
	"github.com/isamatch/isamatch/internal/testbed"
)

// Exit codes: a missed goal is not a failure of the command.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// Bounds of the open-loop load: the generator starts a goroutine per pod.
const (
	maxOpenRate = 5000
	maxOpenPods = 100000
)

func parseArgs(fs *flag.FlagSet, args []string) (bench.Options, error) {
	var o bench.Options
	fs.IntVar(&o.Runs, "runs", 3, "repetitions of every measurement; the table shows the median (>= 3)")
	fs.IntVar(&o.Pods, "pods", 1000, "pods per admission and scheduling load")
	fs.IntVar(&o.Clients, "clients", 16, "concurrent clients creating pods")
	fs.IntVar(&o.Nodes, "nodes", 500, "Ready simulated nodes the scheduler places pods on")
	fs.IntVar(&o.NodeGroups, "node-groups", 50, "ISA groups of those nodes (20..265)")
	fs.IntVar(&o.InventoryNodes, "inventory-nodes", 5000, "nodes in the webhook's inventory for the memory row")
	fs.IntVar(&o.InventoryGroups, "inventory-groups", 200, "ISA groups of the memory row's inventory (20..265)")
	fs.IntVar(&o.ColdImages, "cold-images", 24, "new images per run, one pod each")
	fs.IntVar(&o.ColdShared, "cold-shared", 16, "new images per run with --cold-pods-per-image concurrent pods each")
	fs.IntVar(&o.ColdPodsPerImage, "cold-pods-per-image", 8, "concurrent pods per shared new image")
	fs.Float64Var(&o.OpenRate, "open-rate", 100, "pods per second of the open-loop load (section 7), well below saturation")
	fs.DurationVar(&o.OpenDuration, "open-duration", 10*time.Second, "how long each open-loop load runs (rate x duration pods per variant and run)")
	fs.StringVar(&o.ProfileDir, "profile-dir", "", "write the webhook's CPU and allocation profiles under the admission load, and the scheduler's CPU profiles while it places each kind of pod (scheduling section, first run), here")
	fs.StringVar(&o.WebhookConfigDir, "webhook-config-dir", "", "a directory of WebhookConfiguration drop-ins (*.yaml, docs/configuration.md) the isamatch webhook reads over the bench's configuration, e.g. one setting events.pods: false: measure a configuration other than the shipped one")
	contentType := fs.String("api-content-type", "protobuf", "what the load's clients send and accept: protobuf (as kube-controller-manager, which creates most pods, and kube-scheduler) or json (as kubectl)")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	only := fs.String("only", "", "comma-separated sections to run (default all): "+strings.Join(bench.SectionNames, ","))
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q: bench takes flags only", fs.Args())
	}
	ct, err := bench.ParseContentType(*contentType)
	if err != nil {
		return o, err
	}
	o.ContentType = ct
	if *only != "" {
		for _, s := range strings.Split(*only, ",") {
			if !slices.Contains(bench.SectionNames, s) {
				return o, fmt.Errorf("--only: unknown section %q: use some of %s", s, strings.Join(bench.SectionNames, ","))
			}
			o.Only = append(o.Only, s)
		}
	}
	if o.WebhookConfigDir != "" {
		if err := checkWebhookConfigDir(o.WebhookConfigDir); err != nil {
			return o, err
		}
	}
	if o.Runs < 3 {
		return o, fmt.Errorf("--runs=%d: want at least 3 (the table reports medians)", o.Runs)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"pods", o.Pods}, {"clients", o.Clients}, {"nodes", o.Nodes}, {"cold-images", o.ColdImages}, {"cold-shared", o.ColdShared}, {"cold-pods-per-image", o.ColdPodsPerImage}} {
		if f.v < 1 {
			return o, fmt.Errorf("--%s=%d: want a positive number", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"node-groups", o.NodeGroups}, {"inventory-groups", o.InventoryGroups}} {
		if f.v < 20 || f.v > 265 {
			return o, fmt.Errorf("--%s=%d: want 20..265 (the request mix needs the first 20 groups; 265 ISAs are defined)", f.name, f.v)
		}
	}
	if !(o.OpenRate > 0 && o.OpenRate <= maxOpenRate) {
		return o, fmt.Errorf("--open-rate=%g: want pods per second in (0, %d]", o.OpenRate, maxOpenRate)
	}
	if o.OpenDuration <= 0 {
		return o, fmt.Errorf("--open-duration=%s: want a positive duration", o.OpenDuration)
	}
	if n := o.OpenRate * o.OpenDuration.Seconds(); n < 1 || n > maxOpenPods {
		return o, fmt.Errorf("--open-rate=%g x --open-duration=%s = %.0f pods: want 1..%d", o.OpenRate, o.OpenDuration, n, maxOpenPods)
	}
	if o.InventoryNodes < o.Nodes {
		return o, fmt.Errorf("--inventory-nodes=%d is below --nodes=%d: the memory row adds nodes to the cluster's", o.InventoryNodes, o.Nodes)
	}
	if !*quiet {
		o.Progress = os.Stderr
	}
	return o, nil
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "scale" {
		return runScale(args[1:], stdout, stderr)
	}
	return runTable("bench", args, stdout, stderr, parseArgs, bench.Run)
}

// runTable parses args with parse, runs the benchmark with the options and
// prints its table on stdout; name prefixes every message on stderr.
func runTable[O any](name string, args []string, stdout, stderr io.Writer,
	parse func(*flag.FlagSet, []string) (O, error), runBench func(context.Context, O) (*bench.Table, error)) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o, err := parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	if _, err := testbed.AssetsDir(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	// envtest logs through controller-runtime; the table is the output.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t, err := runBench(ctx, o)
	if t != nil {
		if perr := t.Print(stdout); perr != nil {
			fmt.Fprintf(stderr, "%s: print table: %v\n", name, perr)
			return exitFail
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitFail
	}
	return exitOK
}
