package testbed

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/pkg/isa"
)

// SimulatedKubeletVersion is what simulated nodes report as their kubelet.
const SimulatedKubeletVersion = "v1.37.2"

// NodeWrapper builds a Node for a simulated machine:
//
//	MakeNode("node1").Arch("riscv64").CPU("8").Memory("32Gi").Pods(110).Label(k, v).Obj()
type NodeWrapper struct{ node corev1.Node }

// MakeNode starts a linux/amd64 node with 4 CPUs, 16Gi of memory and room
// for 110 pods, labelled as a kubelet would label it.
func MakeNode(name string) *NodeWrapper {
	w := &NodeWrapper{node: corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				corev1.LabelHostname: name,
				corev1.LabelOSStable: "linux",
			},
		},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{},
			NodeInfo: corev1.NodeSystemInfo{OperatingSystem: "linux", KubeletVersion: SimulatedKubeletVersion},
		},
	}}
	return w.Arch("amd64").CPU("4").Memory("16Gi").Pods(110)
}

// Arch sets the kubernetes.io/arch label and the reported architecture.
func (w *NodeWrapper) Arch(arch string) *NodeWrapper {
	w.node.Labels[corev1.LabelArchStable] = arch
	w.node.Status.NodeInfo.Architecture = arch
	return w
}

// CPU sets the CPU capacity (and allocatable), a resource quantity: "8", "500m".
func (w *NodeWrapper) CPU(q string) *NodeWrapper {
	w.node.Status.Capacity[corev1.ResourceCPU] = resource.MustParse(q)
	return w
}

// Memory sets the memory capacity (and allocatable): "32Gi".
func (w *NodeWrapper) Memory(q string) *NodeWrapper {
	w.node.Status.Capacity[corev1.ResourceMemory] = resource.MustParse(q)
	return w
}

// Pods sets how many pods fit.
func (w *NodeWrapper) Pods(n int64) *NodeWrapper {
	w.node.Status.Capacity[corev1.ResourcePods] = *resource.NewQuantity(n, resource.DecimalSI)
	return w
}

// Label sets a label.
func (w *NodeWrapper) Label(k, v string) *NodeWrapper {
	w.node.Labels[k] = v
	return w
}

// Labels sets several labels.
func (w *NodeWrapper) Labels(labels map[string]string) *NodeWrapper {
	for k, v := range labels {
		w.node.Labels[k] = v
	}
	// The labeler adds the group's domain label of its own node
	// (isa.WithGroupDomain); so does a simulated node.
	isa.WithGroupDomain(w.node.Labels, w.node.Name)
	return w
}

// Annotation sets an annotation.
func (w *NodeWrapper) Annotation(k, v string) *NodeWrapper {
	if w.node.Annotations == nil {
		w.node.Annotations = map[string]string{}
	}
	w.node.Annotations[k] = v
	return w
}

// Taint adds a taint.
func (w *NodeWrapper) Taint(t corev1.Taint) *NodeWrapper {
	w.node.Spec.Taints = append(w.node.Spec.Taints, t)
	return w
}

// Obj returns a copy of the node, allocatable equal to capacity.
func (w *NodeWrapper) Obj() *corev1.Node {
	n := w.node.DeepCopy()
	n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	return n
}

// admissionTaints are the taints the API server's TaintNodesByCondition
// admission puts on a new node; the node lifecycle controller removes them
// once the kubelet reports Ready.
var admissionTaints = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable}

// CreateReadyNode creates node and makes it schedulable as a kubelet and the
// node lifecycle controller would: it posts a Ready status with capacity and
// allocatable through the status subresource, then removes the not-ready
// taint the API server added on create. node is updated to the stored
// object. No controller-manager runs, so the node stays Ready.
func CreateReadyNode(ctx context.Context, c client.Client, node *corev1.Node) error {
	status := node.Status.DeepCopy()
	if status.Allocatable == nil {
		status.Allocatable = status.Capacity.DeepCopy()
	}
	if err := c.Create(ctx, node); err != nil {
		return fmt.Errorf("create node %s: %w", node.Name, err)
	}
	now := metav1.Now()
	status.Conditions = []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message:           "kubelet is posting ready status (simulated by the isamatch testbed)",
			LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastHeartbeatTime: now, LastTransitionTime: now},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", LastHeartbeatTime: now, LastTransitionTime: now},
	}
	status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: node.Name}}
	status.Phase = ""
	// On a cluster with controllers (the node lifecycle controller, a
	// labeler) the node may change between the create and this update.
	fresh := false
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if fresh {
			if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
				return err
			}
		}
		fresh = true
		node.Status = *status
		return c.Status().Update(ctx, node)
	}); err != nil {
		return fmt.Errorf("post ready status of node %s: %w", node.Name, err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
			return err
		}
		kept := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool {
			return slices.Contains(admissionTaints, t.Key)
		})
		if len(kept) == len(node.Spec.Taints) {
			return nil
		}
		node.Spec.Taints = kept
		return c.Update(ctx, node)
	})
	if err != nil {
		return fmt.Errorf("remove not-ready taint of node %s: %w", node.Name, err)
	}
	return nil
}

// CreateReadyNodes calls CreateReadyNode for each node.
func CreateReadyNodes(ctx context.Context, c client.Client, nodes ...*corev1.Node) error {
	for _, n := range nodes {
		if err := CreateReadyNode(ctx, c, n); err != nil {
			return err
		}
	}
	return nil
}

// NodeIsReady reports whether a node is Ready and carries no NoSchedule or
// NoExecute taint the admission or lifecycle controller would have set.
func NodeIsReady(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if slices.Contains(admissionTaints, t.Key) {
			return false
		}
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
