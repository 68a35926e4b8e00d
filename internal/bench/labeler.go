package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/internal/testbed/configfile"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/labeler"
	"github.com/isamatch/isamatch/pkg/probe"
)

// labelerFixtures are host roots (pkg/probe/testdata) the labeler probes in
// turn, so that every pass changes the node.
var labelerFixtures = []string{"spacemit-k1", "lichee-pi-4a"}

func (e *Env) fixture(name string) string {
	return filepath.Join(e.RepoRoot, "pkg", "probe", "testdata", name)
}

// labelerPass is one probe of root and one reconcile of node, as the
// daemon does it, against the real API server.
func labelerPass(ctx context.Context, c client.Client, node, root string) (time.Duration, labeler.Result, error) {
	start := time.Now()
	r := probe.NewRunner(root, 10*time.Second)
	r.Chroot = false
	res, err := probe.Probe(ctx, probe.Options{HostRoot: root, Runner: r, CommandTimeout: 10 * time.Second})
	if err != nil {
		return 0, labeler.Result{}, fmt.Errorf("probe %s: %w", root, err)
	}
	out, err := labeler.Reconcile(ctx, c, node, labeler.Desired{Labels: res.Labels(), Annotations: res.Annotations()})
	if err != nil {
		return 0, out, fmt.Errorf("reconcile node %s: %w", node, err)
	}
	return time.Since(start), out, nil
}

// labelerPassRows measures labeler passes that change the node (alternating
// fixtures) and steady passes (same fixture again: no patch).
func labelerPassRows(ctx context.Context, e *Env, o Options, t *Table) error {
	node := e.NodeNames[0]
	var changing, steady []float64
	for r := range o.Runs {
		for k := range 3 {
			root := e.fixture(labelerFixtures[(3*r+k)%len(labelerFixtures)])
			d, out, err := labelerPass(ctx, e.Client, node, root)
			if err != nil {
				return err
			}
			if !out.Patched {
				return fmt.Errorf("pass on %s changed nothing: the fixtures must differ", root)
			}
			changing = append(changing, ms(d))
			d, out, err = labelerPass(ctx, e.Client, node, root)
			if err != nil {
				return err
			}
			if out.Patched {
				return fmt.Errorf("second pass on %s patched again", root)
			}
			steady = append(steady, ms(d))
		}
	}
	const sec = "6 labeler pass"
	m := Median(changing)
	t.Add(Row{Section: sec, Name: "one probe + reconcile pass that patches the node (real API server)",
		Figure: fmt.Sprintf("%.1f ms", m), Goal: "< 200 ms", Verdict: verdict(m < 200), Runs: runsText("%.0f", changing)})
	m = Median(steady)
	t.Add(Row{Section: sec, Name: "steady pass (probe, nothing to patch)",
		Figure: fmt.Sprintf("%.1f ms", m), Goal: "< 200 ms", Verdict: verdict(m < 200), Runs: runsText("%.0f", steady)})
	return nil
}

// labelerVariants are the environments the daemon's memory is measured
// in: as config/daemonset runs it, and plain.
var labelerVariants = []struct {
	name string
	env  []string
}{
	{"GOMEMLIMIT=48MiB (config/daemonset)", []string{"GOMEMLIMIT=48MiB"}},
	{"GOMEMLIMIT=16MiB GOGC=25 (aggressive GC)", []string{"GOMEMLIMIT=16MiB", "GOGC=25"}},
}

// labelerMemoryRows measures the stripped labeler daemon's
// VmRSS at steady state (its node labelled, 3 s idle).
func labelerMemoryRows(ctx context.Context, e *Env, o Options, t *Table) error {
	node := e.NodeNames[1]
	for vi, v := range labelerVariants {
		var rss, anon, file []float64
		for r := range o.Runs {
			m, err := labelerDaemonRSS(ctx, e, node, e.fixture(labelerFixtures[(r+vi)%2]), v.env)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			rss, anon, file = append(rss, MiB(m.VmRSS)), append(anon, MiB(m.RssAnon)), append(file, MiB(m.RssFile))
		}
		med := Median(rss)
		t.Add(Row{Section: "5 memory", Name: "labeler daemon VmRSS at steady state, " + v.name,
			Figure: fmt.Sprintf("%.1f MiB (anon %.1f, file %.1f)", med, Median(anon), Median(file)), Goal: "< 30 MiB",
			Verdict: verdict(med < 30), Runs: runsText("%.1f", rss)})
	}
	return nil
}

// labelerDaemonRSS runs the labeler daemon for node on root until the
// node carries root's ISA, waits 3 s, and reads its memory.
func labelerDaemonRSS(ctx context.Context, e *Env, node, root string, env []string) (MemStatus, error) {
	want, err := probe.Probe(ctx, probe.Options{HostRoot: root, Runner: &probe.ExecRunner{Root: root}})
	if err != nil {
		return MemStatus{}, fmt.Errorf("probe %s: %w", root, err)
	}
	var ports [2]int
	for i := range ports {
		if ports[i], err = testbed.FreePort(); err != nil {
			return MemStatus{}, err
		}
	}
	config, err := configfile.Labeler(e.Dir, func(c *v1alpha1.LabelerConfiguration) {
		c.HostRoot, c.Commands.Exec, c.HWProbe = root, v1alpha1.ExecDirect, false
		c.Interval = metav1.Duration{Duration: time.Hour}
		c.Metrics.BindAddress = "127.0.0.1:" + strconv.Itoa(ports[0])
		c.Health.BindAddress = "127.0.0.1:" + strconv.Itoa(ports[1])
	})
	if err != nil {
		return MemStatus{}, err
	}
	args := []string{"--node-name=" + node, "--config=" + config, "--kubeconfig=" + e.CP.KubeconfigPath}
	p, err := testbed.StartProcess("labeler", e.LabelerBin, args, env, filepath.Join(e.Dir, "labeler-daemon.log"))
	if err != nil {
		return MemStatus{}, err
	}
	defer func() { _ = p.Stop(10 * time.Second) }()
	wantISA := want.Annotations()[isa.NativeISAAnnotation]
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("labeler exited: %v\n%s", err, p.LogTail(20)) //nolint:errorlint // err is nil after a clean exit
		}
		var n corev1.Node
		if err := e.Client.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
			return false, fmt.Errorf("get node %s: %w", node, err)
		}
		return wantISA != "" && n.Annotations[isa.NativeISAAnnotation] == wantISA, nil
	})
	if err != nil {
		return MemStatus{}, fmt.Errorf("labeler never labelled %s from %s: %w", node, root, err)
	}
	time.Sleep(3 * time.Second)
	pid, err := PidOf(e.LabelerBin)
	if err != nil {
		return MemStatus{}, err
	}
	return ReadMemStatus(pid)
}

// webhookMemoryRows measures the webhook's memory: more (not Ready) nodes until the
// inventory holds o.InventoryNodes in o.InventoryGroups groups; the VmRSS of
// the webhook that served the sections before (in a whole run, tens of
// thousands of admissions, whose peak stays resident), reported; then, the
// row judged against the goal, a new webhook process after one admission
// load, its VmRSS read o.Runs times a second apart.
func webhookMemoryRows(ctx context.Context, e *Env, o Options, t *Table) error {
	extra := o.InventoryNodes - len(e.NodeNames)
	if extra > 0 {
		gs, err := GroupISAs(o.InventoryGroups)
		if err != nil {
			return err
		}
		if err := e.CreateNodes(ctx, NodeSet("inv", extra, gs), false); err != nil {
			return err
		}
	}
	if err := e.WaitInventory(ctx, o.InventoryNodes); err != nil {
		return err
	}
	served, err := ReadMemStatus(e.Webhook.Pid())
	if err != nil {
		return err
	}
	t.Add(Row{Section: "5 memory", Name: fmt.Sprintf("webhook VmRSS, %d nodes in its inventory, after every section before this one", o.InventoryNodes),
		Figure: fmt.Sprintf("%.1f MiB (anon %.1f, file %.1f)", MiB(served.VmRSS), MiB(served.RssAnon), MiB(served.RssFile)), Verdict: Info})
	if err := e.Webhook.Stop(10 * time.Second); err != nil {
		return fmt.Errorf("stop the webhook: %w", err)
	}
	if err := e.startWebhook(ctx, "webhook-memory.log"); err != nil {
		return fmt.Errorf("start a new webhook: %w", err)
	}
	if err := e.WaitInventory(ctx, o.InventoryNodes); err != nil {
		return err
	}
	if _, err := admissionPhase(ctx, e, o, nsName("adm", Isamatch), Isamatch, "mem"); err != nil {
		return err
	}
	pid := e.Webhook.Pid()
	var rss, anon, file []float64
	for r := range o.Runs {
		if r > 0 {
			time.Sleep(time.Second)
		}
		m, err := ReadMemStatus(pid)
		if err != nil {
			return err
		}
		rss, anon, file = append(rss, MiB(m.VmRSS)), append(anon, MiB(m.RssAnon)), append(file, MiB(m.RssFile))
	}
	if o.ProfileDir != "" {
		if err := os.MkdirAll(o.ProfileDir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", o.ProfileDir, err)
		}
		if err := fetch(ctx, e, "heap", filepath.Join(o.ProfileDir, "webhook-heap.pprof")); err != nil {
			return err
		}
	}
	med := Median(rss)
	t.Add(Row{Section: "5 memory", Name: fmt.Sprintf("webhook VmRSS, %d nodes in its inventory, a new process after %d admissions", o.InventoryNodes, o.Pods),
		Figure: fmt.Sprintf("%.1f MiB (anon %.1f, file %.1f)", med, Median(anon), Median(file)), Goal: "< 100 MiB",
		Verdict: verdict(med < 100), Runs: runsText("%.1f", rss)})
	return nil
}
