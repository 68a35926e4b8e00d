package smoke

import (
	"crypto/tls"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/test/framework"
)

var _ = Describe("control plane", func() {
	It("runs the pinned, versioned binaries", func(ctx SpecContext) {
		dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
		Expect(err).NotTo(HaveOccurred())
		info, err := dc.ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		Expect(info.GitVersion).To(MatchRegexp(`^v1\.\d+\.\d+$`), "kube-apiserver built without version ldflags")
		Expect(info.Major + "." + info.Minor).To(Equal(strings.Join(strings.Split(strings.TrimPrefix(info.GitVersion, "v"), ".")[:2], ".")))

		out, err := exec.CommandContext(ctx, filepath.Join(cp.AssetsDir, "kube-scheduler"), "--version").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(string(out)).To(ContainSubstring("Kubernetes " + info.GitVersion))

		out, err = exec.CommandContext(ctx, filepath.Join(cp.AssetsDir, "etcd"), "--version").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		Expect(string(out)).To(MatchRegexp(`etcd Version: 3\.\d+\.\d+`))
	})
})

var _ = Describe("simulated nodes and the real kube-scheduler", Ordered, func() {
	var ns string
	riscv := testbed.MakeNode("smoke-riscv").Arch("riscv64").CPU("8").Memory("32Gi").Pods(10).
		Label(isa.ArchLabel, "riscv64").Obj()
	amd := testbed.MakeNode("smoke-amd64").Arch("amd64").CPU("4").Memory("16Gi").Pods(10).
		Label(isa.ArchLabel, "amd64").Obj()

	BeforeAll(func(ctx SpecContext) {
		nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "smoke-"}}
		Expect(cp.Client.Create(ctx, nsObj)).To(Succeed())
		ns = nsObj.Name
		Expect(testbed.CreateReadyNodes(ctx, cp.Client, riscv, amd)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			for _, n := range []*corev1.Node{riscv, amd} {
				Expect(client.IgnoreNotFound(cp.Client.Delete(ctx, n))).To(Succeed())
			}
			Expect(cp.Client.Delete(ctx, nsObj)).To(Succeed())
		})
	})

	It("makes nodes Ready without the admission's not-ready taint", func(ctx SpecContext) {
		for _, want := range []*corev1.Node{riscv, amd} {
			var got corev1.Node
			Expect(cp.Client.Get(ctx, client.ObjectKeyFromObject(want), &got)).To(Succeed())
			Expect(testbed.NodeIsReady(&got)).To(BeTrue(), "node %s: taints %v, conditions %v", got.Name, got.Spec.Taints, got.Status.Conditions)
			Expect(got.Status.Allocatable.Cpu().Equal(*want.Status.Capacity.Cpu())).To(BeTrue())
		}
	})

	It("places each pod on the node its nodeSelector names", func(ctx SpecContext) {
		pods := []*corev1.Pod{
			testbed.MakePod("wants-riscv", ns).Request("1", "1Gi").NodeSelector(isa.ArchLabel, "riscv64").Obj(),
			testbed.MakePod("wants-amd64", ns).Request("1", "1Gi").NodeSelector(isa.ArchLabel, "amd64").Obj(),
			testbed.MakePod("wants-riscv-affinity", ns).Request("1", "1Gi").
				NodeAffinity(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "riscv64").Obj(),
		}
		for _, p := range pods {
			Expect(cp.Client.Create(ctx, p)).To(Succeed())
		}
		Expect(testbed.WaitScheduled(ctx, cp.Client, pods)).To(Succeed())
		got := map[string]string{}
		for _, p := range pods {
			got[p.Name] = p.Spec.NodeName
		}
		Expect(got).To(Equal(map[string]string{
			"wants-riscv":          riscv.Name,
			"wants-amd64":          amd.Name,
			"wants-riscv-affinity": riscv.Name,
		}))
	})

	It("leaves pods that fit no node unschedulable", func(ctx SpecContext) {
		pods := []*corev1.Pod{
			testbed.MakePod("wants-arm64", ns).NodeSelector(isa.ArchLabel, "arm64").Obj(),
			// 5 CPUs fit only the riscv64 node's 8, not amd64's 4.
			testbed.MakePod("too-big-for-amd64", ns).Request("5", "1Gi").NodeSelector(isa.ArchLabel, "amd64").Obj(),
			testbed.MakePod("fits-riscv", ns).Request("5", "1Gi").NodeSelector(isa.ArchLabel, "riscv64").Obj(),
		}
		for _, p := range pods {
			Expect(cp.Client.Create(ctx, p)).To(Succeed())
		}
		Expect(testbed.WaitSettled(ctx, cp.Client, pods)).To(Succeed())
		Expect(testbed.IsUnschedulable(pods[0])).To(BeTrue(), "pod %s went to %q", pods[0].Name, pods[0].Spec.NodeName)
		Expect(testbed.IsUnschedulable(pods[1])).To(BeTrue(), "pod %s went to %q", pods[1].Name, pods[1].Spec.NodeName)
		Expect(pods[2].Spec.NodeName).To(Equal(riscv.Name))
	})
})

var _ = Describe("registry", func() {
	platforms := []testbed.Platform{
		{Arch: "riscv64", Variant: "rva23u64", Labels: map[string]string{isa.BareImageRequestLabel: "rva23u64"}},
		{Arch: "riscv64"},
		{Arch: "amd64", Variant: "v3"},
		{Arch: "arm64"},
	}

	It("serves a pushed index with auth and TLS, and refuses it without", func(ctx SpecContext) {
		reg := framework.RequireRegistry(ctx, testbed.RegistryOptions{})
		digest, err := testbed.PushIndex(ctx, reg, "smoke/multi", "v1", platforms)
		Expect(err).NotTo(HaveOccurred())

		ref, err := name.ParseReference(reg.Ref("smoke/multi", "v1"))
		Expect(err).NotTo(HaveOccurred())
		idx, err := remote.Index(ref, reg.RemoteOptions(ctx)...)
		Expect(err).NotTo(HaveOccurred())
		Expect(idx.Digest()).To(Equal(digest))
		im, err := idx.IndexManifest()
		Expect(err).NotTo(HaveOccurred())
		var listed []string
		for _, d := range im.Manifests {
			listed = append(listed, d.Platform.String())
		}
		Expect(listed).To(Equal([]string{"linux/riscv64/rva23u64", "linux/riscv64", "linux/amd64/v3", "linux/arm64"}))
		img, err := idx.Image(im.Manifests[0].Digest)
		Expect(err).NotTo(HaveOccurred())
		cf, err := img.ConfigFile()
		Expect(err).NotTo(HaveOccurred())
		Expect(cf.Config.Labels).To(HaveKeyWithValue(isa.BareImageRequestLabel, "rva23u64"))

		By("refusing anonymous reads")
		_, err = remote.Index(ref, remote.WithContext(ctx), remote.WithTransport(reg.Transport()))
		var terr *transport.Error
		Expect(errors.As(err, &terr)).To(BeTrue(), "anonymous read error: %v", err)
		Expect(terr.StatusCode).To(Equal(http.StatusUnauthorized))

		By("refusing a wrong password")
		_, err = remote.Index(ref, remote.WithContext(ctx), remote.WithTransport(reg.Transport()),
			remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password + "x"}))
		Expect(errors.As(err, &terr)).To(BeTrue(), "wrong-password read error: %v", err)
		Expect(terr.StatusCode).To(Equal(http.StatusUnauthorized))

		By("refusing clients that do not trust its CA")
		untrusting := http.DefaultTransport.(*http.Transport).Clone()
		untrusting.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		_, err = remote.Index(ref, remote.WithContext(ctx), remote.WithAuth(reg.Auth()), remote.WithTransport(untrusting))
		Expect(err).To(MatchError(ContainSubstring("certificate")))
	})

	It("serves a single-platform image", func(ctx SpecContext) {
		reg := framework.RequireRegistry(ctx, testbed.RegistryOptions{Username: "bob", Password: "hunter2"})
		digest, err := testbed.PushImage(ctx, reg, "smoke/single", "latest", testbed.Platform{Arch: "riscv64", Variant: "rv64gc"})
		Expect(err).NotTo(HaveOccurred())
		ref, err := name.ParseReference(reg.Ref("smoke/single", "latest"))
		Expect(err).NotTo(HaveOccurred())
		desc, err := remote.Get(ref, reg.RemoteOptions(ctx)...)
		Expect(err).NotTo(HaveOccurred())
		Expect(desc.Digest).To(Equal(digest))
		img, err := desc.Image()
		Expect(err).NotTo(HaveOccurred())
		cf, err := img.ConfigFile()
		Expect(err).NotTo(HaveOccurred())
		Expect(v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}).
			To(Equal(v1.Platform{OS: "linux", Architecture: "riscv64", Variant: "rv64gc"}))
	})
})
