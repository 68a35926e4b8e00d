package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Options configures Run. The zero value of a field means its default.
type Options struct {
	// Runs is how many times each figure is measured (default 3); the
	// table shows the median.
	Runs int
	// Pods per admission and scheduling load (default 1000).
	Pods int
	// Clients is the number of concurrent creators (default 16).
	Clients int
	// Nodes is the number of Ready simulated nodes (default 500) in
	// NodeGroups ISA groups (default 50).
	Nodes, NodeGroups int
	// InventoryNodes is the node count of the memory row (default 5000).
	InventoryNodes int
	// InventoryGroups is the ISA group count of the memory row's
	// inventory (default 200).
	InventoryGroups int
	// ColdImages is the number of new images per run whose pods each have
	// one (default 24); ColdShared images get ColdPodsPerImage pods each
	// at once (default 16 and 8).
	ColdImages, ColdShared, ColdPodsPerImage int
	// OpenRate (pods per second, default 100) and OpenDuration (default
	// 10s) are the open-loop load of section 7.
	OpenRate     float64
	OpenDuration time.Duration
	// ProfileDir, when set, receives the webhook's CPU and allocation
	// profiles under the admission load.
	ProfileDir string
	// WebhookConfigDir, when set, is a directory of WebhookConfiguration
	// drop-ins the isamatch webhook (the first process, the one every
	// isamatch row measures) reads over the bench's configuration
	// (--config-dir), to measure a configuration other than the shipped
	// one.
	WebhookConfigDir string
	// ContentType is what the bench's clients send and accept:
	// ContentTypeProtobuf (the default, as kube-controller-manager, which
	// creates most pods, and kube-scheduler talk to the API server) or
	// ContentTypeJSON (as kubectl and most other clients).
	ContentType string
	// Only, when not empty, names the sections to run (SectionNames);
	// the others are left out of the table.
	Only []string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

// SectionNames are the sections Options.Only may name, in run order.
var SectionNames = []string{"admission", "open-loop", "scheduling", "cold", "labeler-pass", "labeler-memory", "webhook-memory"}

func (o Options) runs(section string) bool {
	return len(o.Only) == 0 || slices.Contains(o.Only, section)
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Runs, 3)
	def(&o.Pods, 1000)
	def(&o.Clients, 16)
	def(&o.Nodes, 500)
	def(&o.NodeGroups, 50)
	def(&o.InventoryNodes, 5000)
	def(&o.InventoryGroups, 200)
	def(&o.ColdImages, 24)
	def(&o.ColdShared, 16)
	def(&o.ColdPodsPerImage, 8)
	if o.OpenRate <= 0 {
		o.OpenRate = 100
	}
	if o.OpenDuration <= 0 {
		o.OpenDuration = 10 * time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

// Run measures everything and returns the table. A row that cannot be
// measured says so (verdict ERROR) and the others still run; the error is
// non-nil only when the cluster could not be brought up.
func Run(ctx context.Context, o Options) (*Table, error) {
	o = o.withDefaults()
	start := time.Now()
	t := &Table{Header: []string{
		"isamatch benchmark (make bench), " + start.UTC().Format("2006-01-02 15:04 MST"),
		ReadMachine().String(),
		fmt.Sprintf("each figure: median of %d runs; each comparison: a ratio against the baseline of the same run", o.Runs),
	}}

	e, err := StartEnv(ctx, o, NodeSet(benchNodes, o.Nodes, mustGroups(o.NodeGroups)))
	if err != nil {
		return t, err
	}
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintf(o.Progress, "bench: stop cluster: %v\n", err)
		}
	}()
	t.Header = append(t.Header, fmt.Sprintf("cluster: kube-apiserver + etcd + kube-scheduler %s (internal/testbed), %d Ready simulated nodes in %d ISA groups, webhook binary (stripped) behind config/webhook's MutatingWebhookConfiguration, a no-op webhook (same framework, TLS and configuration) and a second webhook process with admission.resolve: gate, each behind a copy of it, docker-registry (TLS, htpasswd) behind a counting proxy; the load's clients speak %s",
		filepath.Base(e.CP.AssetsDir), o.Nodes, o.NodeGroups, contentTypeOrDefault(o.ContentType)))

	sections := []struct {
		name, what string
		fn         func(context.Context, *Env, Options, *Table) error
		sec        string
	}{
		{"admission", "admission without a webhook, with the no-op webhook and with isamatch's", admissionRows, "1 admission"},
		{"open-loop", fmt.Sprintf("admission latency at a fixed %g pods/s", o.OpenRate), openLoopRows, "7 open loop"},
		{"scheduling", "scheduling with and without isamatch's affinity", schedulingRows, "2 scheduling"},
		{"cold", "cold image resolution", coldRows, "4 cold images"},
		{"labeler-pass", "labeler probe + reconcile pass", labelerPassRows, "6 labeler pass"},
		{"labeler-memory", "labeler daemon memory", labelerMemoryRows, "5 memory"},
		{"webhook-memory", "webhook memory with the big inventory", webhookMemoryRows, "5 memory"},
	}
	for _, s := range sections {
		if !o.runs(s.name) {
			continue
		}
		done := step(o.Progress, s.what)
		if err := s.fn(ctx, e, o, t); err != nil {
			fmt.Fprintf(o.Progress, "bench: %s: %v\n", s.what, err)
			t.Add(Row{Section: s.sec, Name: s.what, Figure: "not measured: " + oneLine(err), Verdict: Error})
		}
		done()
		if ctx.Err() != nil {
			return t, ctx.Err()
		}
	}
	t.Notes = append(t.Notes, fmt.Sprintf("whole run: %.0fs", time.Since(start).Seconds()))
	return t, nil
}

func mustGroups(n int) []isaT {
	gs, err := GroupISAs(n)
	if err != nil {
		panic(err) // n is checked by the caller's flag parsing
	}
	return gs
}

// oneLine is the first line of err, at most 120 bytes, for a table cell.
func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// loadPods builds n LoadPods named prefix-i.
func loadPods(ns, prefix, image, scheduler string, n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range n {
		pods[i] = LoadPod(ns, fmt.Sprintf("%s-%04d", prefix, i), image, scheduler, i)
	}
	return pods
}
