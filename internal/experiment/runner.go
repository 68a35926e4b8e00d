package experiment

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Runner creates a scenario's pods one at a time through the API server,
// waits for the scheduler to bind each, and scores the placements.
type Runner struct {
	Client   client.Client
	Nodes    []NodeSpec
	Registry string // host:port the images were pushed to
	// Progress, if set, receives one line per run.
	Progress io.Writer
	// BindTimeout bounds the wait for one pod (default 30s).
	BindTimeout time.Duration
	// Prepare, if set, runs on each run's namespace before its pods are
	// created (democluster gives the namespace's default ServiceAccount the
	// registry's pull secret there, as a real cluster would have it).
	Prepare func(ctx context.Context, namespace string) error
}

// Run runs tasks as scenario sc, with or without isamatch, in a namespace of
// its own that it deletes afterwards. Admission warnings are not collected
// here; a denied pod is an error.
func (r *Runner) Run(ctx context.Context, sc Scenario, isamatch bool, tasks []Task) (Result, []Placement, error) {
	mode := "stock"
	if isamatch {
		mode = "isamatch"
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: fmt.Sprintf("%s-%s-", sc.Name, mode),
		Labels:       map[string]string{"app": "isamatch-experiment"},
	}}
	if !isamatch {
		// The stock run opts out: both runs share one cluster.
		ns.Labels[isa.IgnoreLabel] = "true"
	}
	if err := r.Client.Create(ctx, ns); err != nil {
		return Result{}, nil, fmt.Errorf("create namespace: %w", err)
	}
	defer r.cleanup(context.WithoutCancel(ctx), ns.Name)
	if r.Prepare != nil {
		if err := r.Prepare(ctx, ns.Name); err != nil {
			return Result{}, nil, fmt.Errorf("prepare namespace %s: %w", ns.Name, err)
		}
	}

	timeout := r.BindTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	start := time.Now()
	placements := make([]Placement, 0, len(tasks))
	for _, t := range tasks {
		pod := sc.Pod(t, isamatch, r.Registry)
		pod.Namespace = ns.Name
		if err := r.Client.Create(ctx, pod); err != nil {
			return Result{}, nil, fmt.Errorf("create pod %s for scenario %s: %w", t.Name, sc.Name, err)
		}
		node, err := waitBound(ctx, r.Client, client.ObjectKeyFromObject(pod), timeout)
		if err != nil {
			return Result{}, nil, err
		}
		placements = append(placements, Placement{Task: t, Node: node})
	}
	res := Evaluate(r.Nodes, sc, isamatch, placements)
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, "  %-9s %-8s %3d pods in %5.1fs: correct %3.0f%%, best fit %3.0f%%\n",
			sc.Name, mode, len(tasks), time.Since(start).Seconds(), 100*res.Correctness(), 100*res.BestFitRate())
	}
	return res, placements, nil
}

// waitBound waits until the pod has a node, or the scheduler has marked it
// unschedulable (then it returns "").
func waitBound(ctx context.Context, c client.Client, key client.ObjectKey, timeout time.Duration) (string, error) {
	var node string
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var p corev1.Pod
		if err := c.Get(ctx, key, &p); err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			node = p.Spec.NodeName
			return true, nil
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return "", fmt.Errorf("wait for pod %s to be scheduled: %w", key, err)
	}
	return node, nil
}

// cleanup force-deletes the run's pods (there is no kubelet to confirm a
// graceful deletion) and the namespace, and waits until the pods are gone so
// the next run starts on empty nodes.
func (r *Runner) cleanup(ctx context.Context, ns string) {
	_ = r.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := r.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		return len(pods.Items) == 0, nil
	})
	err := r.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsNotFound(err) && r.Progress != nil {
		fmt.Fprintf(r.Progress, "  warning: delete namespace %s: %v\n", ns, err)
	}
}
