package labeler

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/isamatch/isamatch/internal/gobuild"
	"github.com/isamatch/isamatch/internal/testbed"
	"github.com/isamatch/isamatch/internal/testbed/configfile"
	"github.com/isamatch/isamatch/pkg/config/v1alpha1"
	"github.com/isamatch/isamatch/pkg/isa"
)

func TestLabeler(t *testing.T) {
	RegisterFailHandler(Fail)
	// controller-runtime's clients log (API warnings) through its logger:
	// to the spec's output, not a "SetLogger was never called" stack.
	logf.SetLogger(GinkgoLogr)
	RunSpecs(t, "Labeler suite")
}

const (
	namespace      = "isamatch-labeler"
	serviceAccount = "isamatch-labeler"
	saUser         = "system:serviceaccount:" + namespace + ":" + serviceAccount
	nodeNameExtra  = "authentication.kubernetes.io/node-name"
)

var (
	cp *testbed.ControlPlane
	// labelerBin is the cmd/labeler binary built for this suite.
	labelerBin string
	// repoRoot is the module root (config/, pkg/probe/testdata).
	repoRoot string
	// workDir holds kubeconfigs and host roots made by specs.
	workDir string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	repoRoot, err = filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	workDir = GinkgoT().TempDir()
	testdata := filepath.Join(repoRoot, "pkg", "probe", "testdata")
	staged, cleanup, err := testbed.StageHostRoots([]string{testdata})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cleanup)
	stagedFixtures = staged[testdata]

	bins, err := gobuild.Binaries(ctx, repoRoot, workDir, gobuild.Options{}, "./cmd/labeler")
	Expect(err).NotTo(HaveOccurred())
	labelerBin = bins[0]

	// A kubelet's real powers: the Node authorizer and NodeRestriction, so
	// that only ValidatingAdmissionPolicy isamatch-node-labels keeps it off
	// isamatch's labels on its own Node.
	cp, err = testbed.Start(ctx, testbed.Options{APIServerFlags: map[string][]string{
		"authorization-mode":       {"Node,RBAC"},
		"enable-admission-plugins": {"NodeRestriction"},
	}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cp.Stop()).To(Succeed()) })

	// Everything config/daemonset installs, as kustomize would (namespace
	// set on namespaced objects), so RBAC and the policy are the shipped ones.
	for _, obj := range kustomizeObjects(filepath.Join(repoRoot, "config", "daemonset")) {
		Expect(cp.Client.Create(ctx, obj)).To(Succeed(), "create %s %s", obj.GetKind(), obj.GetName())
	}
	waitForPolicy(ctx)
}, NodeTimeout(5*time.Minute))

// kustomizeObjects reads the resources a kustomization.yaml lists (each
// namespaced object names its namespace itself, as kustomize leaves it).
func kustomizeObjects(dir string) []*unstructured.Unstructured {
	GinkgoHelper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var k struct {
		Resources []string `json:"resources"`
	}
	Expect(yaml.Unmarshal(raw, &k)).To(Succeed())
	var objs []*unstructured.Unstructured
	for _, res := range k.Resources {
		data, err := os.ReadFile(filepath.Join(dir, res))
		Expect(err).NotTo(HaveOccurred())
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			if err := dec.Decode(&obj.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				Expect(err).NotTo(HaveOccurred(), "decode %s", res)
			}
			if len(obj.Object) == 0 {
				continue
			}
			objs = append(objs, obj)
		}
	}
	return objs
}

// saConfig is cp.Config acting as the labeler's ServiceAccount on node
// (empty node: a token without the node-name extra).
func saConfig(node string) *rest.Config {
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: saUser,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	if node != "" {
		cfg.Impersonate.Extra = map[string][]string{nodeNameExtra: {node}}
	}
	return cfg
}

func saClient(node string) client.Client {
	GinkgoHelper()
	c, err := client.New(saConfig(node), client.Options{Scheme: cp.Scheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// saKubeconfig writes a kubeconfig with the suite's admin credentials that
// impersonates the labeler's ServiceAccount on node, for the binary.
func saKubeconfig(node string) string {
	GinkgoHelper()
	kc, err := clientcmd.LoadFromFile(cp.KubeconfigPath)
	Expect(err).NotTo(HaveOccurred())
	for _, ai := range kc.AuthInfos {
		ai.Impersonate = saUser
		ai.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
		ai.ImpersonateUserExtra = map[string][]string{nodeNameExtra: {node}}
	}
	path := filepath.Join(workDir, "labeler-"+node+".kubeconfig")
	Expect(clientcmd.WriteToFile(*kc, path)).To(Succeed())
	return path
}

// fixture is the absolute path of a pkg/probe fixture host root.
func fixture(machine string) string {
	return filepath.Join(stagedFixtures, machine)
}

// stagedFixtures is a copy of pkg/probe/testdata that the labeler's
// unprivileged compiler user can reach wherever the repository is
// (testbed.StageHostRoots).
var stagedFixtures string

// runOnce runs "labeler --once" for node against a host root (its host
// commands run directly, no hwprobe) and returns its exit code and output.
func runOnce(ctx SpecContext, node, hostRoot string) (int, string) {
	GinkgoHelper()
	config, err := configfile.Labeler(GinkgoT().TempDir(), func(c *v1alpha1.LabelerConfiguration) {
		c.HostRoot, c.Commands.Exec, c.HWProbe = hostRoot, v1alpha1.ExecDirect, false
	})
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.CommandContext(ctx, labelerBin, "--once", "--node-name="+node, "--config="+config, "--kubeconfig="+saKubeconfig(node))
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exitErr):
		return exitErr.ExitCode(), string(out)
	default:
		Fail(fmt.Sprintf("run labeler: %v\n%s", err, out))
		return -1, ""
	}
}

// waitForPolicy waits until the API server enforces the policy (its
// informers pick new policies up asynchronously).
func waitForPolicy(ctx SpecContext) {
	GinkgoHelper()
	probe := testbed.MakeNode("policy-probe").Obj()
	Expect(cp.Client.Create(ctx, probe)).To(Succeed())
	c := saClient("some-other-node")
	Eventually(func() error {
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"`+isa.ArchLabel+`":"amd64"}}}`))
		return c.Patch(ctx, probe.DeepCopy(), patch)
	}).WithContext(ctx).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).
		Should(MatchError(ContainSubstring("may not change node policy-probe")), "the ValidatingAdmissionPolicy never started denying")
	// And the policy that keeps everyone else off isamatch's node labels.
	kubelet := nodeClient("policy-probe")
	try := 0
	Eventually(func() error {
		// A new value each time: a write the policy missed is not a change
		// the next time.
		try++
		patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{%q:"v%d"}}}`, isa.ArchLabel, try))
		return kubelet.Patch(ctx, probe.DeepCopy(), patch)
	}).WithContext(ctx).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).
		Should(MatchError(ContainSubstring("only the isamatch labeler")), "the ValidatingAdmissionPolicy isamatch-node-labels never started denying")
	Expect(cp.Client.Delete(ctx, probe)).To(Succeed())
}

// nodeClient acts as the kubelet of node: user system:node:<node> in group
// system:nodes.
func nodeClient(node string) client.Client {
	GinkgoHelper()
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// labelsWithPrefix returns the labels (or annotations) of m under the
// isamatch prefixes.
func owned(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if strings.HasPrefix(k, isa.NativePrefix) || strings.HasPrefix(k, isa.EmuPrefix) {
			out[k] = v
		}
	}
	return out
}
