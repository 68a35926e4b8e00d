// Package mutate is the isamatch admission webhook's adapter over the
// decision engine (pkg/mutate/engine): it decodes a pod, resolves its
// images within a budget, asks the engine for the decision and answers
// with a patch of node affinity that the stock kube-scheduler enforces.
//
// The entry point is [NewPodMutator]; its [PodMutator.Admit] answers the
// API server's AdmissionRequest for a Pod CREATE with an AdmissionResponse
// a webhook server sends as it is (cmd/webhook serves it with
// controller-runtime's). The package links no controller-runtime and no
// client, so tools that release or explain a pod as the webhook would
// (kubectl isa ungate) carry no webhook framework.
// [PodMutator.ReleaseGated] is the gate controller's decision for a pod
// admitted with the scheduling gate, [PodMutator.Explain] the readable
// decision line made again for a pod's Event. What the decision is, and
// its weights, is the engine's documentation.
//
// # Images
//
// Each image's platforms come from the resolver ([ImageResolver],
// pkg/registry), converted to the engine's platform type. An image platform
// with no variant and no label may still say what it needs through its
// entrypoint binary: with Options.Infer (a [PlatformInferrer],
// pkg/imageisa) and a gating Resolve mode, the gate controller reads it
// (ReleaseGated) and the binary's ISA is that platform's requirement, for
// pods that ask nothing themselves. Admission only uses what was read
// before; it never reads a layer. A pod with isa.qemu gets the QEMU_CPU its
// emulating nodes record in every container that sets none itself
// (qemuenv.go, Options.Emulators).
//
// # Failures
//
// The engine's denials (a malformed request, images that cannot serve it)
// are answered as the enforcement mode says (Options.Enforcement: denied,
// or admitted with a warning); so is a pod whose own required affinity or
// spec.nodeSelector excludes every node the images and request allow (it
// could never be scheduled). An image whose platforms cannot be resolved
// within the budget (Options.Budget, default 8s, bounded by the request's
// deadline) is left out of the decision, with an admission warning and the
// metric isamatch_webhook_image_errors_total; with
// Options.FallbackArchitecture a pod that asks no ISA itself then requires
// that architecture instead. When no node of the inventory satisfies the
// result the pod is admitted with a warning: nodes may join.
//
// Every decision is recorded on the pod in the annotation
// isa.isamatch.io/decision (contract.DecisionCounts); its readable line is
// logged and carried by the pod's Event. It is kept short: it is stored
// with the pod.
//
// # The patch
//
// Only the fields the webhook reads are decoded, and the JSON patch
// (as controller-runtime's PatchResponseFromRaw makes it) is the difference of a projection of the
// pod, its decision annotation, node affinity, scheduling gates, spread
// constraints and containers' env, before and after the decision. The
// patch therefore never touches the pod's other annotations, its pod
// (anti-)affinity, or fields of a newer API server this webhook's
// k8s.io/api does not know, and the whole pod is not parsed twice more.
package mutate
