package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
)

// joinISA is the ISA of the joining nodes: no node of scaleMix has Zbc, so
// a pod asking for it counts the joined nodes alone.
const joinISA = "rv64gc_zbc"

// scaleJoinRows times how long a joining node takes to be ranked: nodes of
// a new ISA group are created at o.JoinRate per second, labelled as the
// labeler labels them, while dry-run pods asking for that ISA are admitted
// back to back; a node is ranked once a decision counts it. The figure is
// from the node's creation to the first decision that counts it.
func scaleJoinRows(ctx context.Context, e *Env, o ScaleOptions, t *Table) error {
	i, err := isa.Parse(joinISA)
	if err != nil {
		return fmt.Errorf("parse %q: %w", joinISA, err)
	}
	ns := scaleNS(true)
	var mu sync.Mutex
	created := make([]time.Time, 0, o.JoinNodes)
	counted := make([]time.Time, o.JoinNodes) // when a decision first counted k+1 nodes
	seen := 0

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pollErr := make(chan error, 1)
	go func() {
		pod := testbed.MakePod("join-probe", ns).Image(e.Ref(WarmImage, "v1")).Annotation(isa.BareRequestAnnotation, joinISA).Obj()
		for ctx.Err() == nil {
			got, err := e.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				if ctx.Err() == nil {
					pollErr <- fmt.Errorf("dry-run join probe: %w", err)
				}
				return
			}
			at := time.Now()
			c, err := contract.ParseDecision(got.Annotations)
			if err != nil {
				pollErr <- fmt.Errorf("join probe decision: %w", err)
				return
			}
			mu.Lock()
			for ; seen < min(c.RequiredNodes, o.JoinNodes); seen++ {
				counted[seen] = at
			}
			done := seen == o.JoinNodes
			mu.Unlock()
			if done {
				pollErr <- nil
				return
			}
		}
	}()

	interval := time.Duration(float64(time.Second) / o.JoinRate)
	next := time.Now()
	for k := range o.JoinNodes {
		time.Sleep(time.Until(next)) // the join schedule, not a wait for a condition
		next = next.Add(interval)
		name := fmt.Sprintf("join-%04d", k)
		labels := isa.WithGroupDomain(isa.NodeLabels(i, nil), name)
		labels[isa.KubeArchLabel] = string(i.Arch)
		if o.Zones > 0 {
			labels[corev1.LabelTopologyZone] = zoneName(k % o.Zones)
		}
		n := testbed.MakeNode(name).Arch(string(i.Arch)).CPU("8").Memory("32Gi").Pods(110).Labels(labels).Obj()
		if _, err := e.Clientset.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create node %s: %w", name, err)
		}
		mu.Lock()
		created = append(created, time.Now())
		mu.Unlock()
	}
	joined := time.Since(created[0])
	select {
	case err := <-pollErr:
		if err != nil {
			return err
		}
	case <-time.After(2 * time.Minute):
		return errors.New("the webhook never counted every joined node within 2 minutes of the last join")
	}
	lat := make([]time.Duration, o.JoinNodes)
	for k := range lat {
		lat[k] = max(0, counted[k].Sub(created[k]))
	}
	t.Add(Row{Section: "4 scale", Name: fmt.Sprintf("a joining node ranked: %d nodes of a new group at %.0f/s (joined in %s), creation to the first decision counting it, p50 / p99 / max",
		o.JoinNodes, o.JoinRate, joined.Round(time.Millisecond)),
		Figure: fmt.Sprintf("%s / %s / %s", Percentile(lat, 0.5).Round(time.Millisecond), Percentile(lat, 0.99).Round(time.Millisecond), Percentile(lat, 1).Round(time.Millisecond)),
		Goal:   "measured", Verdict: Info})
	return nil
}
