package labeler

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeListClient is what [Prune] needs: list Nodes, then patch them.
type NodeListClient interface {
	NodeClient
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

var _ NodeListClient = client.Client(nil)

// Pruned is what [Prune] did to one node.
type Pruned struct {
	Node string
	// Labels and Annotations count the keys removed.
	Labels, Annotations int
}

// Prune removes every label and annotation under isa.isamatch.io/ and
// qemu.isamatch.io/ from every Node, one merge patch per node that has
// any, and never names another key. It goes on past a node it cannot
// patch and returns every error joined, with the nodes it did prune.
func Prune(ctx context.Context, c NodeListClient) ([]Pruned, error) {
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var (
		out  []Pruned
		errs []error
	)
	for i := range nodes.Items {
		node := &nodes.Items[i]
		res, err := reconcileNode(ctx, c, node, Desired{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			err = fmt.Errorf("%w (while isamatch is installed, the ValidatingAdmissionPolicy isamatch-node-labels lets only the labeler and cluster admins change these keys: run the prune after kubectl delete -k config, or as a cluster admin)", err)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if res.Patched {
			out = append(out, Pruned{Node: node.Name, Labels: len(res.Removed), Annotations: res.Deleted - len(res.Removed)})
		}
	}
	return out, errors.Join(errs...)
}
