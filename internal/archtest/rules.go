package archtest

// Module is the root module's path; package patterns below are relative to
// it ("pkg/isa", "cmd/...").
const Module = "github.com/isamatch/isamatch"

// A Rule forbids the packages matching From (a path relative to the
// repository, "..." matching any suffix) to import the packages matching
// any of Deny: directly, or anywhere in what they link when Linked is set.
// A Deny entry is an import path prefix ("k8s.io/"), a path of the root
// module relative to it ("internal/..."), or NonStandard (any package
// outside the standard library and the root module's own). Except lists
// patterns of From that the rule does not cover; Allow lists entries, of
// the same forms as Deny, that Deny matches but the rule permits (a layer
// that may use a few packages of one it is otherwise denied).
type Rule struct {
	From   string
	Except []string
	Deny   []string
	Allow  []string
	Linked bool
	Why    string
}

// NonStandard stands for every package outside the standard library and
// the root module.
const NonStandard = "<non-standard>"

// kubernetes are the Kubernetes client libraries.
var kubernetes = []string{"k8s.io/", "sigs.k8s.io/"}

// clients are the Kubernetes client libraries a pure package does not
// link.
var clients = []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go"}

// offlineReadable is why the node inventory, the audit and the
// misplacement description link no client (their subpackages wire them to
// a manager).
const offlineReadable = "the node inventory, the audit and the misplacement description are read by the kubectl plugin and offline tools without a client: " +
	"their wiring to a manager lives in pkg/inventory/informer, pkg/audit/scanner and pkg/misplace/watch"

// Rules is the map of ARCHITECTURE.md in checkable form.
var Rules = []Rule{
	{From: "pkg/isa", Except: []string{"pkg/isa/internal/gen"}, Deny: []string{NonStandard}, Linked: true,
		Why: "pkg/isa is the pure core: the standard library only"},
	{From: "pkg/mutate/engine", Deny: []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", "pkg/...", "internal/..."},
		Allow: []string{"pkg/isa", "pkg/contract", "pkg/sanitize"}, Linked: true,
		Why: "the decision engine is pure: pkg/isa, the contract, text cleaning and the core/v1 types, no client and no other pkg/ package"},
	{From: "pkg/contract", Deny: []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", "pkg/mutate/...", "pkg/inventory/...",
		"pkg/gate/...", "pkg/registry/...", "pkg/podevents/...", "pkg/labeler/...", "pkg/probe/...", "pkg/imageisa/...", "pkg/misplace/...", "pkg/audit/..."},
		Linked: true, Why: "the contract is what programs read back from pods: pkg/isa and the core/v1 types only, no client"},
	{From: "pkg/inventory", Deny: clients, Linked: true, Why: offlineReadable},
	{From: "pkg/audit", Deny: clients, Linked: true, Why: offlineReadable},
	{From: "pkg/misplace", Deny: clients, Linked: true, Why: offlineReadable},
	{From: "pkg/probe", Deny: kubernetes, Linked: true, Why: "the host probe knows no Kubernetes"},
	{From: "pkg/sanitize", Deny: []string{NonStandard, "pkg/...", "internal/..."}, Linked: true,
		Why: "text cleaning depends on nothing, so everything may use it"},
	{From: "pkg/registry/netguard", Deny: []string{NonStandard, "pkg/...", "internal/..."}, Linked: true,
		Why: "the dial guard depends on nothing"},
	{From: "pkg/registry/...", Deny: []string{"pkg/mutate/...", "pkg/inventory/...", "pkg/gate/...", "pkg/podevents/...",
		"pkg/imageisa/...", "pkg/labeler/...", "pkg/probe/..."},
		Why: "the registry packages sit below the webhook's decision; they import only pkg/isa, pkg/sanitize and each other"},
	{From: "pkg/...", Deny: []string{"internal/...", "cmd/...", "test/...", "hack/..."},
		Why: "pkg/ is the library: it imports no helper, binary, test or build tool"},
	{From: "internal/...", Deny: []string{"cmd/...", "test/...", "hack/..."},
		Why: "internal/ serves the binaries and the suites, never the other way round"},
	{From: "hack/...", Deny: []string{"internal/testbed/...", "test/..."},
		Why: "the release build does not import the test harness"},
	{From: "cmd/...", Deny: []string{"test/..."}, Why: "binaries import no suite"},
	{From: "...", Except: []string{"test/..."}, Deny: []string{"github.com/onsi/"}, Linked: true,
		Why: "only the suites under test/ link ginkgo and gomega: binaries and their libraries never do"},
	{From: "cmd/isactl", Deny: []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go"}, Linked: true,
		Why: "isactl is an offline tool: it links no Kubernetes client"},
	{From: "cmd/kubectl-isa", Deny: []string{"sigs.k8s.io/controller-runtime"}, Linked: true,
		Why: "the kubectl plugin reads and releases with client-go alone"},
	{From: "pkg/mutate", Deny: []string{"sigs.k8s.io/controller-runtime"}, Linked: true,
		Why: "the admission adapter answers with the API's AdmissionResponse; cmd/webhook serves it with controller-runtime, and kubectl isa ungate releases with it over client-go"},
	{From: "pkg/gate/release", Deny: []string{"sigs.k8s.io/controller-runtime"}, Linked: true,
		Why: "the release write is shared by the gate controller and kubectl isa ungate, which links no controller-runtime"},
	{From: "cmd/labeler", Deny: []string{"pkg/mutate/...", "pkg/registry/...", "pkg/imageisa/...", "pkg/gate/...", "pkg/podevents/...",
		"pkg/audit/...", "pkg/misplace/...", "pkg/inventory/...", "github.com/google/go-containerregistry"},
		Allow: []string{"pkg/gate/unresolved", "pkg/mutate/engine"}, Linked: true,
		Why: "the labeler runs privileged on every node: it links none of the webhook (its configuration is internal/config/webhookconfig) and no registry client; its --prune releases gated pods with pkg/gate/unresolved"},
	{From: "rebalance/...", Deny: []string{"pkg/mutate/...", "pkg/inventory/...", "pkg/gate/...", "pkg/registry/...",
		"pkg/podevents/...", "pkg/labeler/...", "pkg/probe/...", "pkg/imageisa/...", "internal/...", "cmd/..."},
		Why: "the rebalancer imports only the core (pkg/isa) and the contract (pkg/contract) of the root module"},
}

// An Allowance is a violation of a rule tolerated until a planned change
// removes it: package From may import Dep (a Deny entry of the rule) for
// now. The test fails when the violation is gone, so the allowance is
// removed with it.
type Allowance struct {
	From, Dep string
	TODO      string
}

// Allowances are today's known violations.
var Allowances = []Allowance{}
