package webhook

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/isamatch/isamatch/internal/testbed"
)

var _ = Describe("Images of a mirrored registry (--registry-mirror origin=reg)", func() {
	It("resolve through the mirror, and from the origin when the mirror lacks them", func(ctx SpecContext) {
		namespaceWith(ctx, "mirrored", reg.Password)
		// The origin's credentials too: the same account as the mirror's.
		Expect(cp.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "origincred", Namespace: "mirrored"},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: origin.DockerConfigJSON()},
		})).To(Succeed())
		before, _, err := testbed.MetricValue(scrapeMetrics(ctx), "isamatch_registry_mirror_fallbacks_total", nil)
		Expect(err).NotTo(HaveOccurred())

		for _, tc := range []struct {
			name, image, arch string
		}{
			// Only the mirror has app/amd64: the origin was never asked.
			{"via-mirror", origin.Ref(amdImage, "v1"), "amd64"},
			// Only the origin has it: the mirror answers 404, then the origin.
			{"via-origin", origin.Ref(originOnlyImage, "v1"), "riscv64"},
		} {
			pod := testbed.MakePod(tc.name, "mirrored").Image(tc.image).ImagePullSecret(secretName).ImagePullSecret("origincred").Obj()
			created, warnings, err := createPod(ctx, pod)
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty(), tc.name)
			terms := requiredTerms(created)
			Expect(terms).NotTo(BeEmpty(), describe(created))
			Expect(archesOf(terms)).To(Equal([]string{tc.arch}), describe(created))
		}
		after, ok, err := testbed.MetricValue(scrapeMetrics(ctx), "isamatch_registry_mirror_fallbacks_total", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue(), "isamatch_registry_mirror_fallbacks_total is exported")
		Expect(after-before).To(Equal(1.0), "one resolution fell back to the origin")
	})
})
