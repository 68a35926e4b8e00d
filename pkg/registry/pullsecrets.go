package registry

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	kauth "github.com/google/go-containerregistry/pkg/authn/kubernetes"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/kubernetes"
)

// Bounds of the pull-secret reads of [KubernetesKeychain].
const (
	// MaxPullSecrets bounds the distinct pull secrets one keychain reads
	// (the pod's and its ServiceAccount's together, duplicates removed).
	// The kubelet sets none; a pod naming more is refused, not truncated,
	// so its credentials are never silently a subset.
	MaxPullSecrets = 32
	// pullSecretTTL is how long a Secret or ServiceAccount read (or its
	// absence) is reused: a changed pull secret is seen within it.
	pullSecretTTL = 10 * time.Second
	// pullSecretCacheEntries bounds the objects cached; with
	// maxCachedSecretBytes, their memory (a larger Secret is read, used
	// and not kept).
	pullSecretCacheEntries = 1024
	maxCachedSecretBytes   = 64 << 10
	// pullSecretQPS and pullSecretBurst bound the API reads made for one
	// namespace's pods; a read past them waits, within the resolution's
	// deadline.
	pullSecretQPS   = 5
	pullSecretBurst = 20
	// maxNamespaceLimiters bounds the namespaces whose rate is tracked
	// (least recently used forgotten: a forgotten one starts with a full
	// burst).
	maxNamespaceLimiters = 4096
)

// pullSecretReader reads Secrets and ServiceAccounts for keychains through
// a short-lived bounded cache, each namespace within its own rate.
type pullSecretReader struct {
	client   kubernetes.Interface
	objects  *cache.LRUExpireCache // "kind/namespace/name" -> object, or nil when absent
	mu       sync.Mutex
	limiters *cache.LRUExpireCache // namespace -> *rate.Limiter
}

// KubernetesKeychain returns a KeychainFactory that reads the pod's
// imagePullSecrets and those of its ServiceAccount through client, like the
// kubelet does, and falls back to anonymous access for registries none of them
// names. Names are deduplicated and at most [MaxPullSecrets] read; reads
// are cached for 10 seconds and limited to 5 a second (bursts of 20) per
// namespace.
func KubernetesKeychain(client kubernetes.Interface) KeychainFactory {
	r := &pullSecretReader{
		client:   client,
		objects:  cache.NewLRUExpireCache(pullSecretCacheEntries),
		limiters: cache.NewLRUExpireCache(maxNamespaceLimiters),
	}
	return r.keychain
}

func (r *pullSecretReader) keychain(ctx context.Context, auth PullAuth) (authn.Keychain, error) {
	ns := auth.Namespace
	if ns == "" {
		ns = "default"
	}
	sa := auth.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	names, err := uniqueSecretNames(auth.ImagePullSecrets, ns)
	if err != nil {
		return nil, err
	}
	if obj, err := r.get(ctx, "serviceaccounts", ns, sa); err != nil {
		return nil, err
	} else if acct, ok := obj.(*corev1.ServiceAccount); ok {
		var saNames []string
		for _, s := range acct.ImagePullSecrets {
			saNames = append(saNames, s.Name)
		}
		if names, err = uniqueSecretNames(append(names, saNames...), ns); err != nil {
			return nil, fmt.Errorf("with ServiceAccount %s's: %w", sa, err)
		}
	}
	var secrets []corev1.Secret
	for _, n := range names {
		obj, err := r.get(ctx, "secrets", ns, n)
		if err != nil {
			return nil, err
		}
		if s, ok := obj.(*corev1.Secret); ok {
			secrets = append(secrets, *s)
		}
	}
	kc, err := kauth.NewFromPullSecrets(ctx, secrets)
	if err != nil {
		return nil, fmt.Errorf("read pull credentials of namespace %q: %w", ns, err)
	}
	return kc, nil
}

// uniqueSecretNames returns names without duplicates (first spelling
// order kept), or an error naming the limit past MaxPullSecrets.
func uniqueSecretNames(names []string, namespace string) ([]string, error) {
	seen := make(map[string]bool, min(len(names), MaxPullSecrets+1))
	var out []string
	for _, n := range names {
		if seen[n] {
			continue
		}
		if len(out) == MaxPullSecrets {
			return nil, fmt.Errorf("pull secrets of namespace %q: more than %d distinct imagePullSecrets (%d names given); name at most %d", namespace, MaxPullSecrets, len(names), MaxPullSecrets)
		}
		seen[n] = true
		out = append(out, n)
	}
	return slices.Clip(out), nil
}

// get returns the Secret or ServiceAccount kind/namespace/name, nil (no
// error) when it does not exist; from the cache when read within the TTL,
// else from the API server within namespace's rate.
func (r *pullSecretReader) get(ctx context.Context, kind, namespace, name string) (any, error) {
	key := kind + "/" + namespace + "/" + name
	if v, ok := r.objects.Get(key); ok {
		return v, nil
	}
	if err := r.limiter(namespace).Wait(ctx); err != nil {
		return nil, fmt.Errorf("read %s %s/%s: over namespace %q's %d API reads a second: %w", kind, namespace, name, namespace, pullSecretQPS, err)
	}
	var obj any
	var size int
	var err error
	switch kind {
	case "secrets":
		var s *corev1.Secret
		s, err = r.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			obj = s
			for _, v := range s.Data {
				size += len(v)
			}
		}
	default:
		var sa *corev1.ServiceAccount
		sa, err = r.client.CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			obj, size = sa, 64*len(sa.ImagePullSecrets)
		}
	}
	switch {
	case k8serrors.IsNotFound(err):
		r.objects.Add(key, nil, pullSecretTTL)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read pull credentials of namespace %q: %w", namespace, err)
	}
	if size <= maxCachedSecretBytes {
		r.objects.Add(key, obj, pullSecretTTL)
	}
	return obj, nil
}

// limiter returns namespace's rate limiter.
func (r *pullSecretReader) limiter(namespace string) *rate.Limiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.limiters.Get(namespace); ok {
		return v.(*rate.Limiter)
	}
	l := rate.NewLimiter(pullSecretQPS, pullSecretBurst)
	r.limiters.Add(namespace, l, time.Hour)
	return l
}
