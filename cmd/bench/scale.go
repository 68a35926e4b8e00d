package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/isamatch/isamatch/internal/bench"
)

// Bounds of the scale run: a 2-core machine holds these; past them the
// API server's memory grows past what such a machine has.
const (
	maxScaleNodes = 20000
	maxScalePods  = 200000
)

func parseScaleArgs(fs *flag.FlagSet, args []string) (bench.ScaleOptions, error) {
	var o bench.ScaleOptions
	fs.IntVar(&o.Nodes, "nodes", 5000, "Ready simulated nodes, in a realistic mix of machines")
	fs.IntVar(&o.Zones, "zones", 3, "zones each machine's nodes spread over (topology.kubernetes.io/zone), as a managed cluster's; -1 for no zone label")
	fs.IntVar(&o.Pods, "pods", 50000, "pods through isamatch's webhook (and as many through none)")
	fs.IntVar(&o.Batches, "batches", 10, "interleaved batches per variant")
	fs.IntVar(&o.Clients, "clients", 32, "concurrent clients creating pods")
	fs.IntVar(&o.JoinNodes, "join-nodes", 500, "nodes of a new ISA group that join while their ranking is timed")
	fs.Float64Var(&o.JoinRate, "join-rate", 100, "joining nodes per second")
	fs.IntVar(&o.Sample, "sample", 500, "pods of each variant read back as protobuf for the bytes row")
	fs.StringVar(&o.ProfileDir, "profile-dir", "", "write a heap profile of the webhook after the load into this directory")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q: bench scale takes flags only", fs.Args())
	}
	switch {
	case o.Nodes < 100 || o.Nodes > maxScaleNodes:
		return o, fmt.Errorf("--nodes=%d: want 100..%d", o.Nodes, maxScaleNodes)
	case o.Pods < 1 || o.Pods > maxScalePods:
		return o, fmt.Errorf("--pods=%d: want 1..%d", o.Pods, maxScalePods)
	case o.Batches < 1 || o.Pods%o.Batches != 0:
		return o, fmt.Errorf("--batches=%d: want a positive divisor of --pods=%d", o.Batches, o.Pods)
	case o.Clients < 1 || o.JoinNodes < 1 || o.Sample < 1:
		return o, errors.New("--clients, --join-nodes and --sample: want positive numbers")
	case !(o.JoinRate > 0 && o.JoinRate <= 1000):
		return o, fmt.Errorf("--join-rate=%g: want nodes per second in (0, 1000]", o.JoinRate)
	}
	if !*quiet {
		o.Progress = os.Stderr
	}
	return o, nil
}

// runScale is `bench scale`: make bench-scale.
func runScale(args []string, stdout, stderr io.Writer) int {
	return runTable("bench scale", args, stdout, stderr, parseScaleArgs, bench.RunScale)
}
