package main

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/democluster"
	"github.com/isamatch/isamatch/internal/leafcluster"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// leafScene names the leaf-group scene in -scenarios.
const leafScene = "leafgroup"

const (
	leafNS = "leafgroup-demo"
	// leafReplicas V replicas: rv-b has 8 nodes and rv-c 16, but only 6
	// and 5 of them have V, so the smallest group that holds the job is
	// rv-c, not rv-b.
	leafReplicas = 5
)

// leafResult is where one Kueue job's pods went.
type leafResult struct {
	Groups []leafcluster.Group
	// Request is what each replica asks for; Replicas their number.
	Request  string
	Replicas int
	// Pods counts the bound pods per group; Wrong lists pods on a node
	// that cannot run Request.
	Pods  map[string]int
	Wrong []string
	// Took is the time from the pods' creation until all were bound.
	Took time.Duration
}

// leafDemo runs the scene: the leaf-group cluster (internal/leafcluster)
// with Kueue, one job of leafReplicas V replicas in one pod group with a
// preferred leaf-group topology. It prints the table of group to pods and
// returns what missed the target: every pod bound on a V node, all in the
// smallest group whose V nodes hold the job.
func leafDemo(ctx context.Context, kueueAssets string, stdout, progress io.Writer) (failures []string, err error) {
	cl, err := democluster.Start(ctx, democluster.Options{
		Nodes: leafcluster.Nodes(), ExtraNodeLabels: leafcluster.LeafLabels, Progress: progress,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if stopErr := cl.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("tear down: %w", stopErr)
		}
	}()
	fmt.Fprintf(progress, "demo: %s: start Kueue ...\n", leafScene)
	k, err := testbed.StartKueue(ctx, cl.CP, testbed.KueueOptions{Assets: kueueAssets})
	if err != nil {
		return nil, fmt.Errorf("scene %s: %w", leafScene, err)
	}
	defer func() {
		if stopErr := k.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("stop kueue: %w", stopErr)
		}
	}()
	res, err := leafJob(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("scene %s: %w\n%s\n%s", leafScene, err, cl.LogTails(20), k.LogTail(20))
	}
	printLeaf(stdout, res)
	return leafVerdict(res), nil
}

func leafJob(ctx context.Context, cl *democluster.Cluster) (leafResult, error) {
	res := leafResult{Groups: leafcluster.Groups, Request: leafcluster.Vector, Replicas: leafReplicas}
	if err := cl.PrepareNamespace(ctx, leafNS); err != nil {
		return res, err
	}
	q, err := leafcluster.CreateQueues(ctx, cl.Client, cl.RepoRoot, leafNS)
	if err != nil {
		return res, err
	}
	pods := leafcluster.Job("job", leafNS, leafReplicas, res.Request, cl.Registry.Ref("paper/base", "v1"), q.Local)
	start := time.Now()
	for _, p := range pods {
		if err := cl.Client.Create(ctx, p); err != nil {
			return res, fmt.Errorf("create pod %s: %w", p.Name, err)
		}
	}
	var bound int
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		bound = 0
		for _, p := range pods {
			if err := cl.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return false, err
			}
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound == len(pods), nil
	})
	if err != nil {
		return res, fmt.Errorf("%d of %d pods bound: %w", bound, len(pods), err)
	}
	res.Took = time.Since(start)
	res.Pods = leafcluster.Placement(pods)
	res.Wrong, err = wrongNodes(ctx, cl, pods, res.Request)
	return res, err
}

// wrongNodes lists the pods whose node's probed ISA does not satisfy
// request.
func wrongNodes(ctx context.Context, cl *democluster.Cluster, pods []*corev1.Pod, request string) ([]string, error) {
	want, err := isa.Parse(request)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", request, err)
	}
	isas, err := cl.NodeISA(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods {
		have, err := isa.Parse(isas[p.Spec.NodeName])
		if err != nil || !isa.Satisfies(have, want) {
			out = append(out, p.Name+"->"+p.Spec.NodeName)
		}
	}
	return out, nil
}

// capableNodes is how many nodes of g can run request: its V nodes for a
// V request, its RISC-V nodes otherwise.
func capableNodes(g leafcluster.Group, request string) int {
	if request == leafcluster.Vector {
		return g.Vector
	}
	return g.Vector + g.NoVector
}

// bestGroup is the smallest group whose capable nodes hold n replicas, or
// "" when none does (Kueue then spreads them).
func bestGroup(groups []leafcluster.Group, request string, n int) string {
	best, bestFree := "", 0
	for _, g := range groups {
		free := capableNodes(g, request)
		if free >= n && (best == "" || free < bestFree) {
			best, bestFree = g.Name, free
		}
	}
	return best
}

// printLeaf writes the table of group to pods.
func printLeaf(w io.Writer, r leafResult) {
	fmt.Fprintf(w, "leaf groups: one Kueue job of %d %s replicas (a pod group, preferred topology %s):\n",
		r.Replicas, r.Request, leafcluster.LeafLabel)
	fmt.Fprintf(w, "%-6s %5s %14s %4s\n", "group", "nodes", r.Request+" nodes", "pods")
	for _, g := range r.Groups {
		fmt.Fprintf(w, "%-6s %5d %14d %4d\n", g.Name, g.Size(), capableNodes(g, r.Request), r.Pods[g.Name])
	}
	fmt.Fprintf(w, "all %d bound in %.1fs; on a node that cannot run them: %d\n", r.Replicas, r.Took.Seconds(), len(r.Wrong))
}

// leafVerdict lists what the placement missed.
func leafVerdict(r leafResult) []string {
	var out []string
	if len(r.Wrong) > 0 {
		out = append(out, fmt.Sprintf("%s: %d pods on a node that cannot run %s: %v", leafScene, len(r.Wrong), r.Request, r.Wrong))
	}
	want := bestGroup(r.Groups, r.Request, r.Replicas)
	if want != "" && r.Pods[want] != r.Replicas {
		out = append(out, fmt.Sprintf("%s: %d of %d pods in %s, the smallest group whose %s nodes hold them (placement %v)",
			leafScene, r.Pods[want], r.Replicas, want, r.Request, r.Pods))
	}
	return out
}

// kueueAssets returns the Kueue assets directory, or "" and the one-line
// reason the scene is skipped.
func kueueAssets() (string, string) {
	dir, err := testbed.KueueAssetsDir()
	if err != nil {
		return "", err.Error()
	}
	return dir, ""
}
