package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql/parser"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	isametrics "github.com/isamatch/isamatch/internal/metrics"
	"github.com/isamatch/isamatch/internal/metricsauth"
	"github.com/isamatch/isamatch/pkg/imageisa"
	"github.com/isamatch/isamatch/pkg/labeler"
)

// kustomize renders a kustomization directory (kubectl kustomize) into
// unstructured objects.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("kubectl not installed (required when CI is set)")
		}
		t.Fatalf("kubectl not found: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), kubectl, "kustomize", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("split rendered YAML: %v", err)
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("decode rendered object: %v\n%s", err, doc)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

// monitoringOverlay writes an overlay of config with the monitoring
// component, as a user would, and returns its directory.
func monitoringOverlay(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rel := func(p string) string {
		r, err := filepath.Rel(dir, filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + rel("config") +
		"\ncomponents:\n  - " + rel(filepath.Join("config", "components", "monitoring")) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// metricNames returns the metric names a PromQL expression reads, as
// Prometheus's own parser finds its selectors.
func metricNames(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs.Name)
		}
		return nil
	})
	return out, nil
}

// registered reports whether reg holds a collector named name (or, for a
// histogram series, its base name): registering another metric of that
// name fails then.
func registered(reg prometheus.Registerer, name string) bool {
	for _, n := range []string{name, strings.TrimSuffix(name, "_bucket"), strings.TrimSuffix(name, "_sum"), strings.TrimSuffix(name, "_count")} {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: n, Help: "probe"})
		if err := reg.Register(g); err != nil {
			return true
		}
		reg.Unregister(g)
	}
	return false
}

func TestMonitoringComponent(t *testing.T) {
	objs := kustomize(t, monitoringOverlay(t))
	var (
		exprs    = map[string]string{} // where -> PromQL
		alerts   []string
		monitors []string
		runbooks = map[string]string{}
	)
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceMonitor":
			monitors = append(monitors, o.GetNamespace()+"/"+o.GetName())
			checkScrapeToken(t, o)
		case "PrometheusRule":
			groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
			for _, g := range groups {
				rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
				for _, r := range rules {
					rule := r.(map[string]any)
					name, _ := rule["alert"].(string)
					alerts = append(alerts, name)
					exprs["alert "+name], _ = rule["expr"].(string)
					runbooks[name], _, _ = unstructured.NestedString(rule, "annotations", "runbook_url")
				}
			}
		case "ConfigMap":
			if o.GetName() != "isamatch-dashboard" {
				continue
			}
			if diff := cmp.Diff("1", o.GetLabels()["grafana_dashboard"]); diff != "" {
				t.Errorf("dashboard ConfigMap label grafana_dashboard (-want +got):\n%s", diff)
			}
			raw, _, _ := unstructured.NestedString(o.Object, "data", "isamatch.json")
			var d struct {
				Panels []struct {
					Title   string `json:"title"`
					Targets []struct {
						Expr string `json:"expr"`
					} `json:"targets"`
				} `json:"panels"`
			}
			if err := json.Unmarshal([]byte(raw), &d); err != nil {
				t.Fatalf("dashboard JSON does not parse: %v", err)
			}
			for _, p := range d.Panels {
				for i, tg := range p.Targets {
					exprs["panel "+p.Title+" #"+string(rune('A'+i))] = tg.Expr
				}
			}
		}
	}
	slices.Sort(monitors)
	if diff := cmp.Diff([]string{"isamatch-labeler/isamatch-labeler", "isamatch-system/isamatch-rebalancer", "isamatch-system/isamatch-webhook"}, monitors); diff != "" {
		t.Errorf("ServiceMonitors (-want +got):\n%s", diff)
	}
	wantAlerts := []string{"IsamatchAdmissionLatencyHigh", "IsamatchCredentialProviderFailing", "IsamatchGateControllerDown", "IsamatchLabelerProbeFailing",
		"IsamatchMisplacedPods", "IsamatchNodesUnlabelled", "IsamatchPodsGatedTooLong", "IsamatchRebalancerErrors",
		"IsamatchRegistryFailureRatio", "IsamatchRuntimeMisplacement", "IsamatchWebhookDown", "IsamatchWebhookErrors", "IsamatchWebhookFailingOpen"}
	slices.Sort(alerts)
	if diff := cmp.Diff(wantAlerts, alerts); diff != "" {
		t.Errorf("alerts (-want +got):\n%s", diff)
	}

	// Each alert's runbook is a section of docs/runbook.md.
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			anchors[strings.ToLower(strings.TrimSpace(h))] = true
		}
	}
	for name, url := range runbooks {
		page, anchor, _ := strings.Cut(url, "#")
		if !strings.HasSuffix(page, "/docs/runbook.md") || !anchors[anchor] {
			t.Errorf("alert %s: runbook_url %q is not a section of docs/runbook.md", name, url)
		}
	}

	// Every metric read is one a binary registers: the webhook's and the
	// labeler's collectors, as their mains register them, and
	// controller-runtime's own (controller_runtime_webhook_*); or one
	// exported elsewhere, each listed with where it is proven.
	reg := prometheus.NewRegistry()
	if _, err := registerMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if err := isametrics.Register(reg, "labeler metrics", labeler.NewMetrics().Collectors()...); err != nil {
		t.Fatal(err)
	}
	// The ELF inference's, which newInferrer registers with --infer-elf.
	if err := isametrics.Register(reg, "ELF inference metrics", imageisa.NewMetrics().Collectors()...); err != nil {
		t.Fatal(err)
	}
	seen := 0
	read := map[string]bool{}
	for where, expr := range exprs {
		names, err := metricNames(expr)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", where, expr, err)
		}
		if len(names) == 0 {
			t.Errorf("%s: no metric in %q", where, expr)
		}
		for _, n := range names {
			seen++
			read[n] = true
			if _, ok := externalMetrics[n]; !ok && !registered(reg, n) && !registered(metrics.Registry, n) {
				t.Errorf("%s reads %s, which neither binary registers and externalMetrics does not list", where, n)
			}
		}
	}
	// What the registry exports about the digest cache and credential
	// provider plugins is read somewhere.
	for _, n := range []string{
		"isamatch_registry_digest_cache_hits_total", "isamatch_registry_requests_total",
		"isamatch_registry_credential_provider_runs_total", "isamatch_registry_credential_provider_cache_hits_total",
		"isamatch_registry_credential_provider_duration_seconds_bucket",
	} {
		if !read[n] {
			t.Errorf("neither the dashboard nor an alert reads %s", n)
		}
	}
	if len(exprs) < 10 || seen < 10 {
		t.Errorf("checked %d expressions, %d metric reads: too few, the component did not render as expected", len(exprs), seen)
	}
}

// externalMetrics are the metrics the component reads that neither the
// webhook nor the labeler exports, with who does and what proves the name.
var externalMetrics = map[string]string{
	"up": "Prometheus, for every scrape target",
	"apiserver_admission_webhook_fail_open_count": "kube-apiserver; test/webhook's failing-open spec scrapes it from the real one",
	"apiserver_admission_webhook_rejection_count": "kube-apiserver (k8s.io/apiserver/pkg/admission/metrics), labels name, error_type",
	"isamatch_rebalancer_cycles_total":            "the rebalancer (rebalance/cmd/rebalancer/serve.go)",
	"descheduler_pods_evicted_total":              "the rebalancer, descheduler's metrics package (sigs.k8s.io/descheduler/metrics)",
	"descheduler_loop_duration_seconds_bucket":    "the rebalancer, descheduler's metrics package (sigs.k8s.io/descheduler/metrics)",
}

func TestMetricNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`sum by (outcome) (rate(isamatch_webhook_decisions_total{outcome="error"}[5m]))`, []string{"isamatch_webhook_decisions_total"}},
		{`histogram_quantile(0.99, sum by (le) (rate(controller_runtime_webhook_latency_seconds_bucket{webhook="/a_b"}[5m]))) > 5`,
			[]string{"controller_runtime_webhook_latency_seconds_bucket"}},
		{`a_total / clamp_min(b_total, 1)`, []string{"a_total", "b_total"}},
		{`absent(up{job="x"} == 1) or rate(c_total{error_type="e",cluster=~"$cluster"}[5m])`, []string{"up", "c_total"}},
	}
	for _, tc := range tests {
		got, err := metricNames(tc.expr)
		if err != nil {
			t.Errorf("metricNames(%q): %v", tc.expr, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("metricNames(%q) (-want +got):\n%s", tc.expr, diff)
		}
	}
}

func TestUninstallRenders(t *testing.T) {
	objs := kustomize(t, filepath.Join("..", "..", "config", "components", "uninstall"))
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		if o.GetKind() == "Job" {
			args, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			c := args[0].(map[string]any)
			if diff := cmp.Diff([]any{"--prune"}, c["args"]); diff != "" {
				t.Errorf("Job args (-want +got):\n%s", diff)
			}
			sa, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
			if sa != "isamatch-pruner" {
				t.Errorf("Job runs as %q, want isamatch-pruner", sa)
			}
		}
	}
	slices.Sort(got)
	want := []string{
		"ClusterRole /isamatch-pruner", "ClusterRoleBinding /isamatch-pruner", "Job isamatch-uninstall/isamatch-prune",
		"Namespace /isamatch-uninstall", "ServiceAccount isamatch-uninstall/isamatch-pruner",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

// metricsTokenFile is where the monitoring component expects Prometheus to
// mount a ServiceAccount token projected for metricsauth.DefaultAudience.
const metricsTokenFile = "/var/run/secrets/isamatch-metrics/token"

// checkScrapeToken: every endpoint of a ServiceMonitor sends the token
// projected for the metrics audience, never Prometheus's own API token
// (which a labeler on a hostile node could replay to the API server).
func checkScrapeToken(t *testing.T, sm *unstructured.Unstructured) {
	t.Helper()
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) == 0 {
		t.Errorf("ServiceMonitor %s has no endpoints", sm.GetName())
	}
	for _, e := range endpoints {
		ep := e.(map[string]any)
		file, _, _ := unstructured.NestedString(ep, "bearerTokenFile")
		if file != metricsTokenFile {
			t.Errorf("ServiceMonitor %s sends the token in %q, want the projected %s (audience %s)", sm.GetName(), file, metricsTokenFile, metricsauth.DefaultAudience)
		}
		if _, ok := ep["authorization"]; ok {
			t.Errorf("ServiceMonitor %s sets authorization as well as bearerTokenFile", sm.GetName())
		}
	}
}
