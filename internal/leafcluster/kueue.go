package leafcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
)

// Kueue's keys for plain pod groups and Topology Aware Scheduling (Kueue's
// API, not isamatch's: the module does not depend on Kueue).
const (
	KueueQueueLabel    = "kueue.x-k8s.io/queue-name"
	KueueGroupLabel    = "kueue.x-k8s.io/pod-group-name"
	KueueGroupCount    = "kueue.x-k8s.io/pod-group-total-count"
	KueuePreferredTopo = "kueue.x-k8s.io/podset-preferred-topology"
	KueueAdmissionGate = "kueue.x-k8s.io/admission"
	KueuePodFinalizer  = "kueue.x-k8s.io/managed"
	KueueAPIVersion    = "kueue.x-k8s.io/v1beta2"
)

// KueueComponent is the kustomize component that installs the Kueue
// objects: a Topology whose levels are the leaf group and the node (the
// hostname level makes Kueue filter nodes by the pods' required node
// affinity, isamatch's ISA constraint), a flavor over it and a ClusterQueue;
// localqueue.yaml is the per-namespace LocalQueue it shows.
const KueueComponent = "config/components/leaf-groups-kueue"

// Queues are the names of the queues CreateQueues created.
type Queues struct {
	// Local is the LocalQueue the pods name in KueueQueueLabel.
	Local string
	// Cluster is the ClusterQueue.
	Cluster string
}

// CreateQueues creates the objects of KueueComponent under repoRoot as
// shipped (their leaf label is LeafLabel), the LocalQueue in namespace.
func CreateQueues(ctx context.Context, c client.Client, repoRoot, namespace string) (Queues, error) {
	var q Queues
	for _, file := range []string{"topology.yaml", "clusterqueue.yaml", "localqueue.yaml"} {
		path := filepath.Join(repoRoot, KueueComponent, file)
		data, err := os.ReadFile(path)
		if err != nil {
			return q, fmt.Errorf("read kueue objects: %w", err)
		}
		for _, doc := range splitYAML(string(data)) {
			var u unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return q, fmt.Errorf("decode %s: %w", path, err)
			}
			switch u.GetKind() {
			case "LocalQueue":
				u.SetNamespace(namespace)
				q.Local = u.GetName()
			case "ClusterQueue":
				q.Cluster = u.GetName()
			}
			if err := c.Create(ctx, &u); err != nil {
				return q, fmt.Errorf("create %s %s from %s: %w", u.GetKind(), u.GetName(), path, err)
			}
		}
	}
	return q, nil
}

// Job returns n pods in namespace forming one Kueue pod group named name in
// localQueue, each asking for request with isa.request and ReplicaCPU,
// with a preferred topology at the leaf level: the group in one leaf group
// if one holds it, else spread. isamatch's webhook writes each pod's
// affinity at creation, before Kueue builds the group's Workload from the
// pods.
func Job(name, namespace string, n int, request, image, localQueue string) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = testbed.MakePod(name+"-"+strconv.Itoa(i), namespace).
			Image(image).
			Request(ReplicaCPU, "64Mi").
			Annotation(isa.BareRequestAnnotation, request).
			Label(KueueQueueLabel, localQueue).
			Label(KueueGroupLabel, name).
			Annotation(KueueGroupCount, strconv.Itoa(n)).
			Annotation(KueuePreferredTopo, LeafLabel).
			Obj()
	}
	return pods
}

// splitYAML splits a multi-document YAML string.
func splitYAML(s string) []string {
	var out []string
	for _, d := range strings.Split(s, "\n---\n") {
		if strings.TrimSpace(d) != "" {
			out = append(out, d)
		}
	}
	return out
}
