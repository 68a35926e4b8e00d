package labeler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/pkg/isa"
)

// NodeClient is what the labeler needs from a Kubernetes client: read one
// Node and patch it. A controller-runtime client.Client satisfies it.
type NodeClient interface {
	Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
	Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error
}

var _ NodeClient = client.Client(nil)

// Desired is the complete set of isamatch labels and annotations a node
// should carry.
type Desired struct {
	Labels      map[string]string
	Annotations map[string]string
}

// Change is what one reconcile must do: a value to set, or nil to delete.
// It only ever holds keys owned by isamatch.
type Change struct {
	Labels      map[string]*string
	Annotations map[string]*string
}

// Empty reports whether the change needs no API write.
func (c Change) Empty() bool { return len(c.Labels) == 0 && len(c.Annotations) == 0 }

// Diff compares a node's current labels or annotations with the desired
// ones. Desired keys must be owned (isa.IsOwnedLabel); keys we own that are
// not desired are deleted; keys we do not own are never named.
func Diff(current, desired map[string]string) (map[string]*string, error) {
	out := map[string]*string{}
	for k, v := range desired {
		if !isa.IsOwnedLabel(k) {
			return nil, fmt.Errorf("desired key %q is outside isamatch's prefixes %s and %s", k, isa.NativePrefix, isa.EmuPrefix)
		}
		if cur, ok := current[k]; !ok || cur != v {
			out[k] = &v
		}
	}
	for k := range current {
		if _, keep := desired[k]; !keep && isa.IsOwnedLabel(k) {
			out[k] = nil
		}
	}
	return out, nil
}

// ChangeFor computes the change that brings node to desired.
func ChangeFor(node *corev1.Node, desired Desired) (Change, error) {
	l, err := Diff(node.Labels, desired.Labels)
	if err != nil {
		return Change{}, fmt.Errorf("labels: %w", err)
	}
	a, err := Diff(node.Annotations, desired.Annotations)
	if err != nil {
		return Change{}, fmt.Errorf("annotations: %w", err)
	}
	return Change{Labels: l, Annotations: a}, nil
}

// MergePatch renders a change as a JSON merge patch (RFC 7386) that names
// only the changed keys; deletions are null.
func (c Change) MergePatch() ([]byte, error) {
	meta := map[string]map[string]*string{}
	if len(c.Labels) > 0 {
		meta["labels"] = c.Labels
	}
	if len(c.Annotations) > 0 {
		meta["annotations"] = c.Annotations
	}
	b, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return nil, fmt.Errorf("marshal merge patch: %w", err)
	}
	return b, nil
}

// Result tells what a reconcile did.
type Result struct {
	// Patched is true when a patch was sent.
	Patched bool
	// Set and Deleted count the label and annotation keys changed.
	Set, Deleted int
	// Added, Changed and Removed are the label keys (not annotations)
	// the patch added, gave a new value or removed, sorted.
	Added, Changed, Removed []string
	// Node is the node as the API server returned it after the patch, or
	// as read when nothing changed.
	Node *corev1.Node
}

// Reconcile brings the named node's isamatch labels and annotations to
// desired with at most one merge patch, and none when nothing changed.
func Reconcile(ctx context.Context, c NodeClient, nodeName string, desired Desired) (Result, error) {
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return Result{}, fmt.Errorf("get node %s: %w", nodeName, err)
	}
	return reconcileNode(ctx, c, node, desired)
}

// reconcileNode patches node, as read, to desired.
func reconcileNode(ctx context.Context, c NodeClient, node *corev1.Node, desired Desired) (Result, error) {
	nodeName := node.Name
	change, err := ChangeFor(node, desired)
	if err != nil {
		return Result{}, fmt.Errorf("node %s: %w", nodeName, err)
	}
	if change.Empty() {
		return Result{Node: node}, nil
	}
	res := Result{Patched: true, Node: node}
	for k, v := range change.Labels {
		_, had := node.Labels[k]
		switch {
		case v == nil:
			res.Removed = append(res.Removed, k)
		case had:
			res.Changed = append(res.Changed, k)
		default:
			res.Added = append(res.Added, k)
		}
	}
	for _, keys := range [][]string{res.Added, res.Changed, res.Removed} {
		slices.Sort(keys)
	}
	data, err := change.MergePatch()
	if err != nil {
		return Result{}, err
	}
	if err := c.Patch(ctx, node, client.RawPatch(types.MergePatchType, data)); err != nil {
		return Result{}, fmt.Errorf("patch node %s: %w", nodeName, err)
	}
	for _, m := range []map[string]*string{change.Labels, change.Annotations} {
		for _, v := range m {
			if v == nil {
				res.Deleted++
			} else {
				res.Set++
			}
		}
	}
	return res, nil
}
