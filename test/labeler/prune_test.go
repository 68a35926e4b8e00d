package labeler

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/isamatch/isamatch/internal/testbed"
)

// runPrune runs "labeler --prune" with kubeconfig and returns its exit code
// and output.
func runPrune(ctx SpecContext, kubeconfig string) (int, string) {
	GinkgoHelper()
	out, err := exec.CommandContext(ctx, labelerBin, "--prune", "--kubeconfig="+kubeconfig).CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exitErr):
		return exitErr.ExitCode(), string(out)
	default:
		Fail("run labeler --prune: " + err.Error())
		return -1, ""
	}
}

// pruneKubeconfig is the suite's admin kubeconfig impersonating the
// uninstall Job's ServiceAccount.
func pruneKubeconfig() string {
	GinkgoHelper()
	kc, err := clientcmd.LoadFromFile(cp.KubeconfigPath)
	Expect(err).NotTo(HaveOccurred())
	for _, ai := range kc.AuthInfos {
		ai.Impersonate = "system:serviceaccount:isamatch-uninstall:isamatch-pruner"
		ai.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:isamatch-uninstall", "system:authenticated"}
	}
	path := filepath.Join(workDir, "pruner.kubeconfig")
	Expect(clientcmd.WriteToFile(*kc, path)).To(Succeed())
	return path
}

// createUninstallRBAC creates the pruner's ClusterRole and binding as
// config/components/uninstall ships them.
func createUninstallRBAC(ctx SpecContext) {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "components", "uninstall", "rbac.yaml"))
	Expect(err).NotTo(HaveOccurred())
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			break
		} else {
			Expect(err).NotTo(HaveOccurred())
		}
		if obj.GetKind() == "ServiceAccount" {
			continue // impersonated, not needed as an object
		}
		Expect(cp.Client.Create(ctx, obj)).To(Succeed(), "create %s %s", obj.GetKind(), obj.GetName())
	}
}

var _ = Describe("labeler --prune", func() {
	It("removes every isamatch label and annotation from every node and nothing else", func(ctx SpecContext) {
		a := testbed.MakeNode("prune-a").Arch("riscv64").Label("team", "a").Annotation("note", "keep").Obj()
		b := testbed.MakeNode("prune-b").Arch("riscv64").Label("team", "b").Obj()
		for _, node := range []string{"prune-a", "prune-b"} {
			obj := a
			if node == "prune-b" {
				obj = b
			}
			Expect(testbed.CreateReadyNode(ctx, cp.Client, obj)).To(Succeed())
			code, out := runOnce(ctx, node, fixture("paper-node1"))
			Expect(code).To(Equal(0), out)
		}
		Expect(owned(getNode(ctx, "prune-a").Labels)).To(HaveKey(q + "riscv64"))
		Expect(owned(getNode(ctx, "prune-b").Annotations)).To(HaveKey(n + "source"))
		foreign := map[string]map[string]string{}
		for _, name := range []string{"prune-a", "prune-b"} {
			foreign[name] = map[string]string{}
			for k, v := range getNode(ctx, name).Labels {
				if _, ours := owned(map[string]string{k: v})[k]; !ours {
					foreign[name][k] = v
				}
			}
		}
		Expect(foreign["prune-a"]).To(HaveKeyWithValue("team", "a"))

		By("refusing, with the reason, while the policy isamatch-node-labels is installed")
		createUninstallRBAC(ctx)
		code, out := runPrune(ctx, pruneKubeconfig())
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("isamatch-node-labels"))
		Expect(out).To(ContainSubstring("run the prune after kubectl delete -k config"))
		Expect(owned(getNode(ctx, "prune-a").Labels)).NotTo(BeEmpty())

		By("pruning as a cluster admin")
		code, out = runPrune(ctx, cp.KubeconfigPath)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("node prune-a: removed"))
		for _, name := range []string{"prune-a", "prune-b"} {
			got := getNode(ctx, name)
			Expect(owned(got.Labels)).To(BeEmpty(), name)
			Expect(owned(got.Annotations)).To(BeEmpty(), name)
			Expect(got.Labels).To(Equal(foreign[name]), name)
		}
		Expect(getNode(ctx, "prune-a").Annotations).To(HaveKeyWithValue("note", "keep"))

		By("doing nothing on a second pass")
		code, out = runPrune(ctx, cp.KubeconfigPath)
		Expect(code).To(Equal(0), out)
		Expect(out).NotTo(ContainSubstring("prune-a"))
	})
})
