package registry

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
)

// TestNodeKeychain: an image only readable with the credentials every pod
// shares (Options.NodeKeychain, the kubelet's credential provider plugins
// in the webhook) resolves with them, after the pod's own keychain, as the
// kubelet orders them: a pod keychain that names the registry wins even
// when wrong.
func TestNodeKeychain(t *testing.T) {
	tr := newTestRegistry(t)
	tr.pushImage(t, "private/app:1", image(t, "linux", "riscv64", "rva23u64", nil))
	basicAuth(tr, "bob", "hunter2")
	node := staticKeychain{tr.host: {Username: "bob", Password: "hunter2"}}
	wrongPod := func(context.Context, PullAuth) (authn.Keychain, error) {
		return staticKeychain{tr.host: {Username: "bob", Password: "guess"}}, nil
	}
	otherPod := func(context.Context, PullAuth) (authn.Keychain, error) {
		return staticKeychain{"elsewhere.example": {Username: "bob", Password: "guess"}}, nil
	}
	tests := []struct {
		name string
		opts Options
		kind string // "" means success
	}{
		{name: "node credentials", opts: Options{NodeKeychain: node}},
		{name: "without them", kind: KindUnauthorized},
		{name: "pod keychain for another registry, then the node's", opts: Options{Keychains: otherPod, NodeKeychain: node}},
		{name: "pod keychain first even when wrong", opts: Options{NodeKeychain: node, Keychains: wrongPod}, kind: KindUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.InsecureRegistries = []string{tr.host}
			got, err := newResolver(t, o).Resolve(t.Context(), tr.ref("private/app:1"), PullAuth{Namespace: "team"})
			if tc.kind != "" {
				var re *Error
				if !errors.As(err, &re) || re.Kind != tc.kind {
					t.Fatalf("Resolve error = %v, want kind %s", err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff([]Platform{{OS: "linux", Architecture: "riscv64", Variant: "rva23u64"}}, got, ignoreDigest); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
}
