package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/internal/memlimit"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// ScaleOptions configures RunScale (make bench-scale).
type ScaleOptions struct {
	// Nodes Ready simulated nodes, in the mix of scaleMix, each machine's
	// nodes spread over Zones zones (topology.kubernetes.io/zone), as a
	// managed cluster's are; Zones < 0 means no zone label.
	Nodes, Zones int
	// Pods created through isamatch's webhook, and as many again through
	// no webhook, in Batches interleaved batches each.
	Pods, Batches int
	// Clients create pods concurrently.
	Clients int
	// JoinNodes nodes of a new ISA group join at JoinRate per second while
	// their ranking is timed.
	JoinNodes int
	JoinRate  float64
	// Sample pods of each variant are read back as protobuf for the bytes
	// row.
	Sample int
	// ProfileDir, when set, receives a heap profile of the webhook after
	// the load (webhook-heap-scale.pprof).
	ProfileDir string
	Progress   io.Writer
}

func (o ScaleOptions) withDefaults() ScaleOptions {
	if o.Nodes <= 0 {
		o.Nodes = 5000
	}
	if o.Zones == 0 {
		o.Zones = 3
	}
	if o.Pods <= 0 {
		o.Pods = 50000
	}
	if o.Batches <= 0 {
		o.Batches = 10
	}
	if o.Clients <= 0 {
		o.Clients = 32
	}
	if o.JoinNodes <= 0 {
		o.JoinNodes = 500
	}
	if o.JoinRate <= 0 {
		o.JoinRate = 100
	}
	if o.Sample <= 0 {
		o.Sample = 500
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// scaleMix is a realistic cluster's machines: mostly x86-64 of three
// generations, a quarter arm64, and RISC-V boards of several kinds, with
// each machine's share of the nodes.
var scaleMix = []struct {
	isa   string
	share float64
}{
	{"x86-64-v2", 0.10}, {"x86-64-v3", 0.35}, {"x86-64-v4", 0.15},
	{"arm64", 0.05}, {"arm64+crc32+atomics+asimdrdm+dcpop", 0.12}, {"arm64+crc32+atomics+asimdrdm+dcpop+sve", 0.08},
	{"rv64gc", 0.04}, {"rv64gc_zba_zbb_zbs", 0.04}, {"rv64gcv", 0.03}, {"rva23u64", 0.04},
}

// scaleNodes returns n nodes in the shares of scaleMix (name -> labels as
// the labeler writes them, and a zone of zones in turn when zones > 0) and
// each node's native ISA.
func scaleNodes(n, zones int) (map[string]map[string]string, map[string]isa.ISA, error) {
	nodes := make(map[string]map[string]string, n)
	native := make(map[string]isa.ISA, n)
	k := 0
	for m, g := range scaleMix {
		i, err := isa.Parse(g.isa)
		if err != nil {
			return nil, nil, fmt.Errorf("parse %q: %w", g.isa, err)
		}
		count := int(g.share * float64(n))
		if m == len(scaleMix)-1 {
			count = n - k
		}
		for range count {
			name := fmt.Sprintf("node-%05d", k)
			labels := isa.WithGroupDomain(isa.NodeLabels(i, nil), name)
			labels[isa.KubeArchLabel] = string(i.Arch)
			if zones > 0 {
				labels[corev1.LabelTopologyZone] = zoneName(k % zones)
			}
			nodes[name], native[name] = labels, i
			k++
		}
	}
	return nodes, native, nil
}

// zonesText says how the nodes lie in zones.
func zonesText(zones int) string {
	if zones <= 0 {
		return "no zone"
	}
	return fmt.Sprintf("%d zones (each machine's nodes in turn)", zones)
}

// zoneName is the name of zone k.
func zoneName(k int) string { return fmt.Sprintf("zone-%c", 'a'+k) }

// RunScale is make bench-scale: a real control plane with Nodes nodes,
// Pods pods through isamatch's webhook and the stock scheduler, the same
// pods through no webhook in batches interleaved with them, and a group of
// nodes joining; it returns the table.
func RunScale(ctx context.Context, o ScaleOptions) (*Table, error) {
	o = o.withDefaults()
	start := time.Now()
	t := &Table{Header: []string{
		"isamatch scale benchmark (make bench-scale), " + start.UTC().Format("2006-01-02 15:04 MST"),
		ReadMachine().String(),
	}}
	nodes, native, err := scaleNodes(o.Nodes, o.Zones)
	if err != nil {
		return t, err
	}
	e, err := StartEnv(ctx, Options{Nodes: o.Nodes, Progress: o.Progress, Runs: 3}, nodes)
	if err != nil {
		return t, err
	}
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintf(o.Progress, "bench: stop cluster: %v\n", err)
		}
	}()
	t.Header = append(t.Header, fmt.Sprintf("cluster: kube-apiserver + etcd + kube-scheduler %s with its default configuration, %d Ready simulated nodes (%s) in %s, the webhook binary behind config/webhook's configuration; %d pods through it and %d through no webhook, in %d interleaved batches each, %d clients",
		filepath.Base(e.CP.AssetsDir), o.Nodes, mixText(), zonesText(o.Zones), o.Pods, o.Pods, o.Batches, o.Clients))

	var errs []error
	load, err := scaleLoad(ctx, e, o, native)
	if err != nil {
		errs = append(errs, err)
	} else {
		load.rows(t, o)
	}
	if err := scaleMemoryRows(ctx, e, o, t); err != nil {
		errs = append(errs, err)
	}
	if err := scaleJoinRows(ctx, e, o, t); err != nil {
		errs = append(errs, err)
	}
	t.Notes = append(t.Notes, fmt.Sprintf("wall time %s", time.Since(start).Round(time.Second)))
	return t, errors.Join(errs...)
}

func mixText() string {
	var b strings.Builder
	for k, g := range scaleMix {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.0f%% %s", 100*g.share, g.isa)
	}
	return b.String()
}

// scaleMemoryRows are the webhook's resident memory after the load and its
// peak, and how much of it the Go heap holds: live, and freed but not yet
// returned to the kernel. With ProfileDir set, a heap profile follows.
func scaleMemoryRows(ctx context.Context, e *Env, o ScaleOptions, t *Table) error {
	m, err := ReadMemStatus(e.Webhook.Pid())
	if err != nil {
		return err
	}
	t.Add(Row{Section: "4 scale", Name: fmt.Sprintf("webhook VmRSS after %d pods, %d nodes (anon / file; peak VmHWM)", o.Pods, o.Nodes),
		Figure:  fmt.Sprintf("%.1f MiB (%.1f / %.1f; peak %.1f)", MiB(m.VmRSS), MiB(m.RssAnon), MiB(m.RssFile), MiB(m.VmHWM)),
		Goal:    "<= 150 MiB",
		Verdict: verdict(MiB(m.VmHWM) <= 150)})
	h, err := readHeap(ctx, e.MetricsAddr)
	if err != nil {
		return err
	}
	t.Add(Row{Section: "4 scale", Name: "webhook Go heap then: in use / idle, not yet returned to the kernel / returned (" + softLimit(e.WebhookEnv) + ")",
		Figure: fmt.Sprintf("%.1f / %.1f / %.1f MiB", h.inuse/(1<<20), (h.idle-h.released)/(1<<20), h.released/(1<<20))})
	cpu, err := CPUTime(e.Webhook.Pid())
	if err != nil {
		return err
	}
	t.Add(Row{Section: "4 scale", Name: "webhook CPU time since it started / garbage collections (what a soft memory limit costs)",
		Figure: fmt.Sprintf("%.0f s / %d", cpu.Seconds(), h.gcs)})
	if o.ProfileDir == "" {
		return nil
	}
	if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", o.ProfileDir, err)
	}
	return fetch(ctx, e, "heap?gc=1", filepath.Join(o.ProfileDir, "webhook-heap-scale.pprof"))
}

// softLimit says what the webhook's environment env makes its Go
// runtime's soft memory limit.
func softLimit(env []string) string {
	var request string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOMEMLIMIT="); ok {
			return "GOMEMLIMIT=" + v
		}
		if v, ok := strings.CutPrefix(kv, memlimit.RequestEnv+"="); ok {
			request = v
		}
	}
	if n, err := strconv.ParseInt(request, 10, 64); err == nil && n > 0 {
		return fmt.Sprintf("soft memory limit %.0f MiB, the Deployment's memory request", float64(n)/(1<<20))
	}
	return "no soft memory limit"
}

// heapStats are the Go heap's bytes as client_golang's Go collector
// exports them.
type heapStats struct {
	inuse, idle, released float64
	gcs                   uint64
}

func readHeap(ctx context.Context, addr string) (heapStats, error) {
	var h heapStats
	body, err := scrape(ctx, addr)
	if err != nil {
		return h, err
	}
	for name, v := range map[string]*float64{
		"go_memstats_heap_inuse_bytes": &h.inuse, "go_memstats_heap_idle_bytes": &h.idle, "go_memstats_heap_released_bytes": &h.released,
	} {
		val, found, err := testbed.MetricValue(string(body), name, nil)
		if err != nil {
			return h, err
		}
		if !found {
			return h, fmt.Errorf("the webhook's metrics at %s have no %s", addr, name)
		}
		*v = val
	}
	gcs, found, err := testbed.MetricCount(string(body), "go_gc_duration_seconds", nil)
	if err != nil {
		return h, err
	}
	if !found {
		return h, fmt.Errorf("the webhook's metrics at %s have no go_gc_duration_seconds", addr)
	}
	h.gcs = gcs
	return h, nil
}
