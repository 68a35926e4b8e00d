// Package kubectlisa is the kubectl-isa plugin's command tree: [NewCommand]
// builds it on k8s.io/cli-runtime (kubectl's kubeconfig flags) and cobra
// (per-command help, examples, completion). The cluster commands read
// nodes and pods through a client-go clientset: [Nodes], [Check],
// [Explain], [Audit] (package audit's judgement) and [Ungater] (package
// gate's release past the bound); each prints a table, -o wide, or -o
// json|yaml|name. The offline commands (normalize, match) live in
// internal/isacli.
package kubectlisa
