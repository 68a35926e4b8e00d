package webhook

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/isamatch/isamatch/internal/testbed"
)

var _ = Describe("Images of a registry mirrored in a containerd hosts directory (--registry-hosts-dir)", func() {
	It("resolve through the mirror its hosts.toml names, the registry itself never being asked", func(ctx SpecContext) {
		// The pull secret is the mirror's: the webhook reads from it.
		namespaceWith(ctx, "hostsdir", reg.Password)
		for _, tc := range []struct {
			name, image, arch string
		}{
			{"hostsdir-amd64", amdImage, "amd64"},
			{"hostsdir-rvv", rvvImage, "riscv64"},
		} {
			// hostsDirRegistry has no DNS name: only the mirror can answer.
			ref := fmt.Sprintf("%s/%s:v1", hostsDirRegistry, tc.image)
			pod := testbed.MakePod(tc.name, "hostsdir").Image(ref).ImagePullSecret(secretName).Obj()
			created, warnings, err := createPod(ctx, pod)
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty(), tc.name)
			terms := requiredTerms(created)
			Expect(terms).NotTo(BeEmpty(), describe(created))
			Expect(archesOf(terms)).To(Equal([]string{tc.arch}), describe(created))
		}
	})
})
