package registry_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/isamatch/isamatch/pkg/registry"
)

func ExampleResolver_Resolve() {
	// A registry holding a two-platform image; the RISC-V one declares
	// its ISA with LABEL isa.request=rv64gcv.
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	rv, _ := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "riscv64",
		Config: v1.Config{Labels: map[string]string{"isa.request": "rv64gcv"}}})
	x86, _ := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64", Variant: "v3"})
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: rv, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "riscv64"}}},
		mutate.IndexAddendum{Add: x86, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64", Variant: "v3"}}},
	)
	ref, _ := name.ParseReference(host+"/demo/app:1", name.Insecure)
	if err := remote.WriteIndex(ref, idx); err != nil {
		fmt.Println(err)
		return
	}

	r, err := registry.NewResolver(registry.Options{InsecureRegistries: []string{host}})
	if err != nil {
		fmt.Println(err)
		return
	}
	platforms, err := r.Resolve(context.Background(), host+"/demo/app:1", registry.PullAuth{Namespace: "default"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range platforms {
		fmt.Printf("%s/%s variant=%q isa.request=%q\n", p.OS, p.Architecture, p.Variant, p.ISARequest)
	}
	// Output:
	// linux/riscv64 variant="" isa.request="rv64gcv"
	// linux/amd64 variant="v3" isa.request=""
}
