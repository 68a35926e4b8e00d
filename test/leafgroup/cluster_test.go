package leafgroup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/isamatch/isamatch/internal/leafcluster"
	"github.com/isamatch/isamatch/pkg/isa"
)

// The cluster's leaf groups, nodes and requests (internal/leafcluster,
// shared with the demo's leaf-group scene).
const (
	leafLabel  = leafcluster.LeafLabel
	namespace  = "leafgroup"
	vector     = leafcluster.Vector
	plain      = leafcluster.Plain
	replicaCPU = leafcluster.ReplicaCPU
)

// capable returns the nodes whose labelled ISA satisfies request, read from
// the labeler's annotation.
func capable(ctx context.Context, request string) map[string]bool {
	want, err := isa.Parse(request)
	Expect(err).NotTo(HaveOccurred())
	isas, err := cluster.NodeISA(ctx)
	Expect(err).NotTo(HaveOccurred())
	out := map[string]bool{}
	for name, s := range isas {
		have, err := isa.Parse(s)
		Expect(err).NotTo(HaveOccurred(), "node %s ISA %q", name, s)
		if isa.Satisfies(have, want) {
			out[name] = true
		}
	}
	return out
}

// placement counts bound pods per leaf group.
func placement(pods []*corev1.Pod) map[string]int { return leafcluster.Placement(pods) }

// refresh re-reads pods in place; a deleted pod keeps its last state.
func refresh(ctx context.Context, pods []*corev1.Pod) error {
	for _, p := range pods {
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// bound returns how many pods are bound to a node, after refreshing them.
func bound(ctx context.Context, pods []*corev1.Pod) (int, error) {
	if err := refresh(ctx, pods); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n, nil
}

// expectAllBound waits until every pod is bound and checks that each node
// satisfies request.
func expectAllBound(ctx context.Context, pods []*corev1.Pod, request string) {
	eventually(ctx, 90*time.Second, func(ctx context.Context) (int, error) { return bound(ctx, pods) }).
		Should(Equal(len(pods)), "pods bound")
	ok := capable(ctx, request)
	for _, p := range pods {
		Expect(ok).To(HaveKey(p.Spec.NodeName), "pod %s on node %s, which cannot run %s", p.Name, p.Spec.NodeName, request)
	}
}

// expectNoneBound checks for a while that no pod is bound.
func expectNoneBound(ctx context.Context, pods []*corev1.Pod, d time.Duration) {
	Consistently(ctx, func(ctx context.Context) (int, error) { return bound(ctx, pods) }).
		WithTimeout(d).WithPolling(500*time.Millisecond).Should(BeZero(), "pods bound")
}

// complete marks the pods Succeeded, as kubelets would when a job ends:
// the scheduler and Kueue then count their nodes free.
// kueueGated reports whether p still waits for Kueue's admission.
func kueueGated(p *corev1.Pod) bool {
	for _, g := range p.Spec.SchedulingGates {
		if g.Name == kueueAdmissionGate {
			return true
		}
	}
	return false
}

func complete(ctx context.Context, pods []*corev1.Pod) {
	for _, p := range pods {
		// Kueue updates the pods too (gates, finalizers): retry on conflict.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return err
			}
			p.Status.Phase = corev1.PodSucceeded
			return cluster.Client.Status().Update(ctx, p)
		})
		Expect(err).NotTo(HaveOccurred(), "mark %s Succeeded", p.Name)
	}
}

// deleteAll ends and deletes pods and waits until they are gone. No kubelet
// runs, so the suite does what one would: every pod Kueue admitted (its
// gate removed), bound or not yet, is marked Succeeded, and the pods are
// deleted only once Kueue has finished every admitted Workload. Deleting
// a pod of a group still running makes Kueue count it failed and wait for
// a replacement, holding the group's quota: that was a flaky clean-up.
// A deleted pod's Kueue finalizer is removed when Kueue keeps it (it does
// for the pods of a group it never admitted, which would stay
// Terminating; Kueue's own integration tests remove it the same way).
func deleteAll(ctx context.Context, pods []*corev1.Pod) {
	// Kueue may ungate a group's pods while this runs: each poll ends the
	// pods admitted by then.
	eventually(ctx, 2*time.Minute, func(ctx context.Context) ([]string, error) {
		err := eachExisting(ctx, pods, func(p *corev1.Pod) error {
			if !kueueGated(p) && p.DeletionTimestamp.IsZero() &&
				p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				complete(ctx, []*corev1.Pod{p})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return unfinishedWorkloads(ctx)
	}).Should(BeEmpty(), "admitted Workloads not finished once their pods succeeded")
	for _, p := range pods {
		Expect(client.IgnoreNotFound(cluster.Client.Delete(ctx, p, client.GracePeriodSeconds(0)))).To(Succeed())
	}
	eventually(ctx, 60*time.Second, func(ctx context.Context) ([]string, error) {
		var left []string
		err := eachExisting(ctx, pods, func(p *corev1.Pod) error {
			left = append(left, p.Name)
			if controllerutil.RemoveFinalizer(p, leafcluster.KueuePodFinalizer) {
				if err := cluster.Client.Update(ctx, p); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
					return err
				}
			}
			return nil
		})
		return left, err
	}).Should(BeEmpty(), "pods left")
}

// eachExisting refreshes each pod and calls f with those that still exist.
func eachExisting(ctx context.Context, pods []*corev1.Pod, f func(*corev1.Pod) error) error {
	for _, p := range pods {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(p), p)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := f(p); err != nil {
			return err
		}
	}
	return nil
}

// describe renders a placement for failure messages and the report.
func describe(p map[string]int) string {
	keys := slices.Sorted(maps.Keys(p))
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf("%s:%d ", k, p[k])
	}
	return s
}
