package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// alertCase is series in promqltest's load syntax (a sample a minute from
// time 0) and whether the alert's expression returns anything at 60m: what
// promtool's rule tests check, without the rule's `for` (Prometheus's own
// business).
type alertCase struct {
	name   string
	series string
	fires  bool
}

// alertCases are, per alert of the monitoring component, series on which
// it fires and series on which it stays quiet.
var alertCases = map[string][]alertCase{
	"IsamatchWebhookDown": {
		{"both replicas up", `up{job="isamatch-webhook-metrics",pod="a"} 1+0x60
up{job="isamatch-webhook-metrics",pod="b"} 1+0x60`, false},
		{"one replica down", `up{job="isamatch-webhook-metrics",pod="a"} 0+0x60
up{job="isamatch-webhook-metrics",pod="b"} 1+0x60`, false},
		{"every replica down", `up{job="isamatch-webhook-metrics",pod="a"} 0+0x60`, true},
		{"no target at all", `up{job="other"} 1+0x60`, true},
	},
	"IsamatchWebhookFailingOpen": {
		{"calls succeed", `apiserver_admission_webhook_fail_open_count{name="pods.isa.isamatch.io",type="admit"} 3+0x60`, false},
		{"calls fail open", `apiserver_admission_webhook_fail_open_count{name="pods.isa.isamatch.io",type="admit"} 0+1x60`, true},
		{"another webhook fails open", `apiserver_admission_webhook_fail_open_count{name="other.example.com",type="admit"} 0+1x60`, false},
		{"calls fail closed", `apiserver_admission_webhook_rejection_count{name="pods.isa.isamatch.io",type="admit",operation="CREATE",error_type="calling_webhook_error",rejection_code="0"} 0+2x60`, true},
		{"the webhook denies pods", `apiserver_admission_webhook_rejection_count{name="pods.isa.isamatch.io",type="admit",operation="CREATE",error_type="no_error",rejection_code="403"} 0+2x60`, false},
	},
	"IsamatchNodesUnlabelled": {
		{"every node labelled", `isamatch_nodes{arch="amd64",labelled="false",pod="leader"} 0+0x60
isamatch_nodes{arch="amd64",labelled="true",pod="leader"} 5+0x60`, false},
		{"an unlabelled node, the other replica exports 0", `isamatch_nodes{arch="riscv64",labelled="false",pod="leader"} 1+0x60
isamatch_nodes{arch="riscv64",labelled="false",pod="follower"} 0+0x60`, true},
	},
	"IsamatchPodsGatedTooLong": {
		{"none overdue", `isamatch_gated_pods_overdue{pod="leader"} 0+0x60`, false},
		{"two overdue", `isamatch_gated_pods_overdue{pod="leader"} 2+0x60
isamatch_gated_pods_overdue{pod="follower"} 0+0x60`, true},
	},
	"IsamatchRuntimeMisplacement": {
		{"none lately", `isamatch_runtime_misplacements_total{reason="sigill"} 1+0x60`, false},
		{"a SIGILL in the last 15 minutes", `isamatch_runtime_misplacements_total{reason="sigill"} 1+0x50 2+0x10`, true},
		{"an exec format error just now", `isamatch_runtime_misplacements_total{reason="exec_format"} 0+0x59 1`, true},
	},
	"IsamatchMisplacedPods": {
		{"none", `isamatch_misplaced_pods{reason="undecided",pod="leader"} 0+0x60`, false},
		{"undecided pods", `isamatch_misplaced_pods{reason="undecided",pod="leader"} 3+0x60
isamatch_misplaced_pods{reason="undecided",pod="follower"} 0+0x60`, true},
	},
	"IsamatchRebalancerErrors": {
		{"evictions succeed", `descheduler_pods_evicted_total{result="success",strategy="ISAFit"} 0+1x60
up{job="isamatch-rebalancer-metrics"} 1+0x60`, false},
		{"evictions fail", `descheduler_pods_evicted_total{result="error",strategy="ISAFit"} 0+1x60
up{job="isamatch-rebalancer-metrics"} 1+0x60`, true},
		{"the rebalancer does not answer", `up{job="isamatch-rebalancer-metrics"} 0+0x60`, true},
		{"no rebalancer installed", `up{job="isamatch-webhook-metrics"} 1+0x60`, false},
	},
	"IsamatchGateControllerDown": {
		{"a leader holds the Lease", `isamatch_webhook_gate_controller_alive{pod="a"} 1+0x60
isamatch_webhook_gate_controller_alive{pod="b"} 1+0x60`, false},
		{"no leader", `isamatch_webhook_gate_controller_alive{pod="a"} 0+0x60`, true},
	},
}

// TestAlertsFireOnSeries evaluates each new alert's expression, as the
// component renders it, with Prometheus's own engine on series where it
// must fire and series where it must not.
func TestAlertsFireOnSeries(t *testing.T) {
	exprs := map[string]string{}
	for _, o := range kustomize(t, monitoringOverlay(t)) {
		if o.GetKind() != "PrometheusRule" {
			continue
		}
		groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				rule := r.(map[string]any)
				exprs[rule["alert"].(string)], _ = rule["expr"].(string)
			}
		}
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	for alert, cases := range alertCases {
		expr, ok := exprs[alert]
		if !ok {
			t.Errorf("alert %s: not in the rendered PrometheusRule", alert)
			continue
		}
		if !slices.ContainsFunc(cases, func(c alertCase) bool { return c.fires }) || !slices.ContainsFunc(cases, func(c alertCase) bool { return !c.fires }) {
			t.Errorf("alert %s: cases must include series it fires on and series it does not", alert)
		}
		for _, c := range cases {
			t.Run(alert+"/"+c.name, func(t *testing.T) {
				st := promqltest.LoadedStorage(t, "load 1m\n"+c.series)
				t.Cleanup(func() { _ = st.Close() })
				q, err := engine.NewInstantQuery(context.Background(), st, nil, expr, time.Unix(0, 0).Add(60*time.Minute))
				if err != nil {
					t.Fatalf("%s: %v", expr, err)
				}
				res := q.Exec(t.Context())
				if res.Err != nil {
					t.Fatalf("%s: %v", expr, res.Err)
				}
				v, err := res.Vector()
				if err != nil {
					t.Fatalf("%s: %v", expr, err)
				}
				if fired := len(v) > 0; fired != c.fires {
					t.Errorf("%s\non\n%s\nreturned %v, want firing %v", expr, c.series, v, c.fires)
				}
			})
		}
	}
}
