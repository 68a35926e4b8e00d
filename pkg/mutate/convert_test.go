package mutate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/registry"
)

// TestEnginePlatforms: the engine is told every field of a platform the
// decision reads, with the registry's limits, and warns under the reason
// the registry names.
func TestEnginePlatforms(t *testing.T) {
	got := enginePlatforms([]registry.Platform{
		{OS: "linux", Architecture: "riscv64", Variant: "rva23u64", Digest: "sha256:1", ISARequest: "rv64gcv", LabelIgnored: 300, ConfigIgnored: 70000},
	})
	want := []engine.Platform{{OS: "linux", Architecture: "riscv64", Variant: "rva23u64", ISARequest: "rv64gcv",
		LabelIgnored: 300, LabelLimit: registry.MaxLabelBytes, ConfigIgnored: 70000, ConfigLimit: registry.MaxConfigBytes}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	if engine.ReasonLabelTooLarge != registry.KindLabelTooLarge {
		t.Errorf("engine.ReasonLabelTooLarge %q, registry.KindLabelTooLarge %q", engine.ReasonLabelTooLarge, registry.KindLabelTooLarge)
	}
	if k := engine.ErrorKind(&registry.Error{Kind: registry.KindUnauthorized, Err: errNotFound}); k != registry.KindUnauthorized {
		t.Errorf("kind of a registry error %q, want %q", k, registry.KindUnauthorized)
	}
}
