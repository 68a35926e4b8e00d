package watch

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/pkg/misplace"
)

// Evictor evicts a pod through the Eviction API, so PodDisruptionBudgets
// hold.
type Evictor interface {
	Evict(ctx context.Context, pod *corev1.Pod) error
}

// EvictorFunc adapts a function to Evictor.
type EvictorFunc func(ctx context.Context, pod *corev1.Pod) error

// Evict calls f.
func (f EvictorFunc) Evict(ctx context.Context, pod *corev1.Pod) error { return f(ctx, pod) }

// ClientEvictor evicts with c's pods/eviction subresource.
func ClientEvictor(c client.SubResourceClientConstructor) Evictor {
	return EvictorFunc(func(ctx context.Context, pod *corev1.Pod) error {
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}}
		if err := c.SubResource("eviction").Create(ctx, pod, ev); err != nil {
			return fmt.Errorf("evict pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		return nil
	})
}

// EvictBackoff is how long after evicting a pod of a controller no other
// pod of the same controller is evicted: if its replacement is misplaced
// again (the webhook still fails open), the remedy does not loop.
const EvictBackoff = 10 * time.Minute

// maxOwners bounds the controllers remembered for EvictBackoff.
const maxOwners = 4096

// evictable reports whether the remedy may evict pod: a pod a controller
// will replace (not a DaemonSet's, whose replacement lands on the same
// node, nor a static pod) that isamatch did not decide, so that its
// replacement gets a decision. A decided pod would get the same one again.
func evictable(pod *corev1.Pod) (owner types.UID, ok bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind == "DaemonSet" || ref.Kind == "Node" || pod.DeletionTimestamp != nil {
		return "", false
	}
	if _, decided := misplace.Decision(pod); decided {
		return "", false
	}
	return ref.UID, true
}

// backoff remembers when a controller's pod was last evicted.
type backoff struct {
	mu   sync.Mutex
	last *lru.Cache
	now  func() time.Time
}

func newBackoff(now func() time.Time) *backoff {
	return &backoff{last: lru.New(maxOwners), now: now}
}

// take reports whether owner may have a pod evicted now, and if so
// remembers it.
func (b *backoff) take(owner types.UID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if t, ok := b.last.Get(owner); ok && now.Sub(t.(time.Time)) < EvictBackoff {
		return false
	}
	b.last.Add(owner, now)
	return true
}
