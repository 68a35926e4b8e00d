package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/internal/kubectlisa"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/audit"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/misplace"
)

// result is one run of the plugin.
type result struct {
	code           int
	stdout, stderr string
}

func runPlugin(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return result{code, out.String(), errOut.String()}
}

// TestOffline runs the commands that need no cluster: help, usage errors,
// version, completion, normalize, match.
func TestOffline(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{name: "help lists the commands", args: []string{"--help"}, out: "audit"},
		{name: "per-command help with examples", args: []string{"audit", "--help"}, out: "kubectl isa audit -A"},
		{name: "help shows kubectl's flags", args: []string{"nodes", "--help"}, out: "--context string"},
		{name: "unknown command", args: []string{"frobnicate"}, code: exitUsage, err: `unknown command "frobnicate"`},
		{name: "output kubectl knows but the command does not print", args: []string{"ungate", "--all", "-o", "wide"}, code: exitUsage, err: `-o "wide": ungate prints json|yaml|name`},
		{name: "output nobody knows", args: []string{"nodes", "-o", "xml"}, code: exitUsage, err: `-o "xml"`},
		{name: "check without a request", args: []string{"check"}, code: exitUsage, err: "check takes REQUEST, got 0 argument(s)"},
		{name: "explain of a node", args: []string{"explain", "node/x"}, code: exitUsage, err: `"node/x": want pod/NAME or NAME`},
		{name: "ungate without a target", args: []string{"ungate"}, code: exitUsage, err: "ungate takes pod names, --all, -A or -l"},
		{name: "ungate with a mode that is none", args: []string{"ungate", "--all", "--enforcement=audit"}, code: exitUsage, err: `--enforcement "audit": want deny or warn`},
		{name: "ungate with a namespace mode that is none", args: []string{"ungate", "--all", "--namespace-enforcement=warn,audit"}, code: exitUsage, err: `"audit" is not a mode`},
		{name: "bad flag", args: []string{"nodes", "--frob"}, code: exitUsage, err: "unknown flag: --frob"},
		{name: "version", args: []string{"version"}, out: "kubectl-isa "},
		{name: "version as JSON", args: []string{"version", "-o", "json"}, out: `"goVersion"`},
		{name: "bash completion", args: []string{"completion", "bash"}, out: "__start_kubectl-isa"},
		{name: "normalize", args: []string{"normalize", "rv64imafdc"}, out: "short:      rv64imafdc_zicsr"},
		{name: "match yes", args: []string{"match", "rv64gc", "rv64gcv"}, out: ""},
		{name: "match no", args: []string{"match", "rv64gcv", "rv64gc"}, code: exitFail},
		{name: "normalize usage", args: []string{"normalize"}, code: exitUsage, err: "normalize needs one STRING"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runPlugin(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.out) || !strings.Contains(r.stderr, tc.err) {
				t.Errorf("kubectl isa %s: exit %d, want %d\nstdout (want %q):\n%s\nstderr (want %q):\n%s", strings.Join(tc.args, " "), r.code, tc.code, tc.out, r.stdout, tc.err, r.stderr)
			}
		})
	}
}

// cluster is a real kube-apiserver and etcd (internal/testbed), its admin
// kubeconfig, and nodes as isamatch's labeler leaves them.
type cluster struct {
	cp         *testbed.ControlPlane
	kubeconfig string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	if _, err := testbed.AssetsDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err.Error())
	}
	cp, err := testbed.Start(t.Context(), testbed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	c := &cluster{cp: cp, kubeconfig: cp.KubeconfigPath}
	for name, s := range map[string]string{"rv-gc": "rv64gc", "rv-gcv": "rv64gcv", "x86-v3": "x86-64-v3"} {
		native, err := isa.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		c.create(t, testbed.MakeNode(name).Arch(string(native.Arch)).Labels(isa.NodeLabels(native, nil)).Obj())
	}
	c.create(t, testbed.MakeNode("new-arm").Arch("arm64").Obj())
	for _, ns := range []string{"shop", "lab", "quiet"} {
		c.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	return c
}

func (c *cluster) create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := c.cp.Client.Create(t.Context(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// run runs the plugin with the cluster's kubeconfig and wants exit 0.
func (c *cluster) run(t *testing.T, args ...string) string {
	t.Helper()
	r := runPlugin(t, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	if r.code != exitOK {
		t.Fatalf("kubectl isa %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// boundPod is a pod bound to node (no kubelet runs: it stays Pending, as
// isamatch's audit counts any bound pod that has not finished).
func boundPod(name, ns, node string, annotations ...string) *corev1.Pod {
	w := testbed.MakePod(name, ns).Image("registry.example/app:v1")
	for k := 0; k+1 < len(annotations); k += 2 {
		w = w.Annotation(annotations[k], annotations[k+1])
	}
	p := w.Obj()
	p.Spec.NodeName = node
	return p
}

// TestAgainstAPIServer runs the plugin's cluster commands against a real
// API server: kubectl's flags, every output format, -A.
func TestAgainstAPIServer(t *testing.T) {
	c := startCluster(t)
	decided := `{"requiredNodes":2}`
	for _, p := range []*corev1.Pod{
		boundPod("web", "shop", "x86-v3"), // undecided
		boundPod("vec", "shop", "x86-v3", isa.RequestAnnotation, "rv64gcv", isa.DecisionAnnotation, decided), // request
		boundPod("ok", "shop", "rv-gcv", isa.RequestAnnotation, "rv64gc", isa.DecisionAnnotation, decided),
		boundPod("lab", "lab", "rv-gc"), // undecided, another namespace
		boundPod("q", "quiet", "rv-gc"), // its namespace is outside the webhook's selector
		boundPod("sys", "kube-system", "rv-gc"),
	} {
		c.create(t, p)
	}
	c.create(t, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "isamatch"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "pods.isa.isamatch.io", AdmissionReviewVersions: []string{"v1"}, SideEffects: ptrTo(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy: ptrTo(admissionregistrationv1.Ignore),
			ClientConfig:  admissionregistrationv1.WebhookClientConfig{URL: ptrTo("https://127.0.0.1:1/mutate-v1-pod")},
			// Only CONNECT (never sent for pods here): the API server never
			// calls this webhook, only its selectors are read.
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Connect},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "isamatch-system", "quiet"}}}},
		}}})

	t.Run("nodes -o yaml", func(t *testing.T) {
		var rows []kubectlisa.NodeRow
		if err := yaml.Unmarshal([]byte(c.run(t, "nodes", "-o", "yaml")), &rows); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.Name+" "+r.Arch+" "+r.ISA)
		}
		want := []string{"new-arm arm64 ", "rv-gc riscv64 rv64gc", "rv-gcv riscv64 rv64gcv", "x86-v3 amd64 x86-64-v3"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("nodes (-want +got):\n%s", diff)
		}
	})
	t.Run("nodes -l -o name", func(t *testing.T) {
		got := c.run(t, "nodes", "-l", isa.KubeArchLabel+"=riscv64", "-o", "name")
		if diff := cmp.Diff("node/rv-gc\nnode/rv-gcv\n", got); diff != "" {
			t.Errorf("nodes -o name (-want +got):\n%s", diff)
		}
	})
	t.Run("nodes -o wide", func(t *testing.T) {
		if got := c.run(t, "nodes", "-o", "wide"); !strings.Contains(got, "LABELLED") || !strings.Contains(got, "new-arm") {
			t.Errorf("nodes -o wide:\n%s", got)
		}
	})
	t.Run("check -o json", func(t *testing.T) {
		var res kubectlisa.CheckResult
		if err := json.Unmarshal([]byte(c.run(t, "check", "rv64gc", "-o", "json")), &res); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Nodes {
			got = append(got, r.Node)
		}
		if diff := cmp.Diff([]string{"rv-gc", "rv-gcv"}, got); diff != "" {
			t.Errorf("check rv64gc (-want +got):\n%s", diff)
		}
	})
	t.Run("explain -n -o yaml", func(t *testing.T) {
		var ex kubectlisa.Explanation
		if err := yaml.Unmarshal([]byte(c.run(t, "explain", "pod/vec", "-n", "shop", "-o", "yaml")), &ex); err != nil {
			t.Fatal(err)
		}
		if !ex.Decided || ex.Counts == nil || ex.Counts.RequiredNodes != 2 || ex.Node != "x86-v3" || ex.RequestNeedsNodes != 1 || ex.Request == nil || ex.Request.Text != "rv64gcv" {
			t.Errorf("explain pod/vec: %+v", ex)
		}
	})
	t.Run("--context and --as", func(t *testing.T) {
		if got := c.run(t, "--context", currentContext(t, c.kubeconfig), "nodes", "-o", "name"); !strings.Contains(got, "node/x86-v3") {
			t.Errorf("nodes with --context: %q", got)
		}
		r := runPlugin(t, "--kubeconfig", c.kubeconfig, "--context", "nope", "nodes")
		if r.code != exitFail || !strings.Contains(r.stderr, "nope") {
			t.Errorf("--context nope: exit %d, stderr %q", r.code, r.stderr)
		}
		r = runPlugin(t, "--kubeconfig", c.kubeconfig, "--as", "system:serviceaccount:shop:nobody", "nodes")
		if r.code != exitFail || !strings.Contains(r.stderr, `"system:serviceaccount:shop:nobody" cannot list resource "nodes"`) {
			t.Errorf("--as nobody: exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("audit -A -o json", func(t *testing.T) {
		var res kubectlisa.AuditResult
		if err := json.Unmarshal([]byte(c.run(t, "audit", "-A", "-o", "json")), &res); err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{}
		for _, f := range res.Findings {
			got[f.Namespace+"/"+f.Pod] = f.Reasons
		}
		want := map[string][]string{
			"lab/lab":  {audit.ReasonUndecided},
			"shop/vec": {audit.ReasonRequest},
			"shop/web": {audit.ReasonUndecided},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("audit -A (-want +got):\n%s\nscope: %s", diff, res.Scope)
		}
	})
	t.Run("audit -n -o name", func(t *testing.T) {
		if diff := cmp.Diff("pod/vec\npod/web\n", c.run(t, "audit", "-n", "shop", "-o", "name")); diff != "" {
			t.Errorf("audit -n shop (-want +got):\n%s", diff)
		}
	})
	t.Run("audit -A table", func(t *testing.T) {
		got := c.run(t, "audit", "-A")
		if !strings.HasPrefix(got, "NAMESPACE") || !strings.Contains(got, "lab") {
			t.Errorf("audit -A table:\n%s", got)
		}
	})
	t.Run("ungate", func(t *testing.T) { testUngate(t, c) })
	t.Run("ungate follows the enforcement", func(t *testing.T) { testUngateEnforcement(t, c) })
}

// testUngateEnforcement: a gated pod isamatch would deny is released onto
// no node in a deny namespace, and without isamatch's affinity, as would
// deny, in a namespace whose label chooses warn.
func testUngateEnforcement(t *testing.T, c *cluster) {
	c.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "relaxed", Labels: map[string]string{isa.EnforcementLabel: "warn"}}})
	pods := map[string]*corev1.Pod{}
	for _, ns := range []string{"shop", "relaxed"} {
		p := testbed.MakePod("malformed", ns).Image("registry.example/app:v1").Annotation(isa.RequestAnnotation, "rv64q!").Obj()
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}
		c.create(t, p)
		pods[ns] = p
		if r := runPlugin(t, "--kubeconfig", c.kubeconfig, "ungate", "malformed", "-n", ns); r.code != exitOK {
			t.Fatalf("ungate -n %s: exit %d, stderr:\n%s", ns, r.code, r.stderr)
		}
		if err := c.cp.Client.Get(t.Context(), client.ObjectKeyFromObject(p), p); err != nil {
			t.Fatal(err)
		}
		if len(p.Spec.SchedulingGates) != 0 {
			t.Errorf("%s: gates left %v", ns, p.Spec.SchedulingGates)
		}
	}
	denied, warned := pods["shop"], pods["relaxed"]
	if a := denied.Spec.Affinity; a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Errorf("deny namespace: no required affinity keeping the pod off every node: %+v", denied.Spec.Affinity)
	}
	if c, _ := misplace.Decision(denied); c.WouldDeny || c.Gate != contract.GateDenied {
		t.Errorf("deny namespace: decision %+v, want gate denied", c)
	}
	if warned.Spec.Affinity != nil {
		t.Errorf("warn namespace: affinity written %+v, want none", warned.Spec.Affinity)
	}
	if c, _ := misplace.Decision(warned); !c.WouldDeny {
		t.Errorf("warn namespace: decision %+v, want would-deny", c)
	}
}

// testUngate: a pod held by the gate is released by `kubectl isa ungate`
// as the gate controller releases one past its bound: its images
// unresolved, its own request kept as affinity, the decision saying so,
// and an Event.
func testUngate(t *testing.T, c *cluster) {
	gated := testbed.MakePod("held", "shop").Image("registry.example/app:v1").Annotation(isa.RequestAnnotation, "rv64gc").Obj()
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}, {Name: "example.com/other"}}
	c.create(t, gated)
	plain := testbed.MakePod("free", "shop").Image("registry.example/app:v1").Obj()
	c.create(t, plain)

	var rs []kubectlisa.UngateResult
	r := runPlugin(t, "--kubeconfig", c.kubeconfig, "ungate", "--all", "-n", "shop", "-o", "json")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("ungate --all: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &rs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]kubectlisa.UngateResult{{Namespace: "shop", Pod: "held", Result: kubectlisa.UngateReleased}}, rs); diff != "" {
		t.Errorf("ungate --all (-want +got):\n%s", diff)
	}
	if err := c.cp.Client.Get(t.Context(), client.ObjectKeyFromObject(gated), gated); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]corev1.PodSchedulingGate{{Name: "example.com/other"}}, gated.Spec.SchedulingGates); diff != "" {
		t.Errorf("gates after ungate (-want +got):\n%s", diff)
	}
	counts, ok := misplace.Decision(gated)
	if !ok || counts.Gate != contract.GateTimeout || len(counts.Unresolved) != 1 || counts.Unresolved[0].Image != "registry.example/app:v1" {
		t.Errorf("decision after ungate: %+v (decided %v); want gate timeout with the image unresolved", counts, ok)
	}
	if a := gated.Spec.Affinity; a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Errorf("no required affinity for the pod's own request rv64gc: %+v", gated.Spec.Affinity)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var evs eventsv1.EventList
		if err := c.cp.Client.List(ctx, &evs, client.InNamespace("shop")); err != nil {
			return false, err
		}
		return slices.ContainsFunc(evs.Items, func(e eventsv1.Event) bool {
			return e.Regarding.UID == gated.UID && e.ReportingController == "isamatch.io/kubectl-isa" && e.Type == corev1.EventTypeWarning
		}), nil
	})
	if err != nil {
		t.Errorf("no Warning event by kubectl-isa on the released pod: %v", err)
	}
	if got := c.run(t, "ungate", "free", "-n", "shop"); !strings.Contains(got, kubectlisa.UngateNotGated) {
		t.Errorf("ungate of a pod without the gate:\n%s", got)
	}
}

func ptrTo[T any](v T) *T { return &v }

// currentContext reads the kubeconfig's current context.
func currentContext(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kc struct {
		Current string `json:"current-context"`
	}
	if err := yaml.Unmarshal(b, &kc); err != nil || kc.Current == "" {
		t.Fatalf("kubeconfig %s: current context %q, %v", path, kc.Current, err)
	}
	return kc.Current
}
