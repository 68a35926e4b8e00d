package informer

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/isamatch/isamatch/pkg/isa"
)

// NodeTransform is the cache transform of the Node metadata informer. It
// keeps what the inventory, the emulator index, the audit and the
// misplacement watcher read: every label, and of the annotations only
// isamatch's (the labeler's native ISA and QEMU CPU records). Other
// annotations (CNI, CSI and cloud agents write kilobytes per node) and
// managed fields are dropped before the object is stored.
//
// The label keys and values are shared among nodes: a cluster's nodes
// carry the same few dozen keys, and the nodes of one ISA group the same
// values, but each decoded node has copies of its own. With 5,000 nodes
// the copies were a large share of the webhook's heap.
//
// Objects that have no metadata are returned unchanged. The transform is
// idempotent.
func NodeTransform() toolscache.TransformFunc {
	intern := (&interner{strings: map[string]string{}}).intern
	return func(in any) (any, error) {
		m, err := meta.Accessor(in)
		if err != nil {
			return in, nil
		}
		m.SetManagedFields(nil)
		if labels := m.GetLabels(); len(labels) > 0 {
			shared := make(map[string]string, len(labels))
			for k, v := range labels {
				shared[intern(k)] = intern(v)
			}
			m.SetLabels(shared)
		}
		if annotations := m.GetAnnotations(); len(annotations) > 0 {
			var kept map[string]string
			for k, v := range annotations {
				if !isa.IsOwnedLabel(k) {
					continue
				}
				if kept == nil {
					kept = map[string]string{}
				}
				kept[intern(k)] = v
			}
			m.SetAnnotations(kept)
		}
		return in, nil
	}
}

// maxInterned bounds the strings an interner keeps. Keys and the values
// nodes share are few; values of one node each (its hostname) are most of
// what it holds: 16,384 covers several thousand nodes. Past it, new
// strings are kept by their nodes alone, as without interning.
const maxInterned = 16384

// interner hands out one copy of each string it has seen. It does not
// forget: a string stays while the process runs, at most maxInterned of
// them.
type interner struct {
	mu      sync.Mutex
	strings map[string]string
}

// intern returns the copy of s that every node's map refers to.
func (in *interner) intern(s string) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.strings[s]; ok {
		return c
	}
	if len(in.strings) < maxInterned {
		in.strings[s] = s
	}
	return s
}
