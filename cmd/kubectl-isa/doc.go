// Package main is kubectl-isa, the kubectl plugin of isamatch: installed on
// the PATH (go install github.com/isamatch/isamatch/cmd/kubectl-isa@latest,
// or krew with the manifest in this directory) it answers `kubectl isa ...`.
//
//	kubectl isa nodes                 nodes with their ISA, group, emulation
//	kubectl isa check REQUEST         the nodes that could run REQUEST, best first
//	kubectl isa explain pod/NAME      why a pod is placed where it is
//	kubectl isa audit [-A]            running pods isamatch would not have placed there
//	kubectl isa ungate NAME|--all     release pods held by isamatch's scheduling gate
//	kubectl isa normalize ISA         offline, as isactl normalize
//	kubectl isa match REQUEST NODEISA offline, as isactl match
//	kubectl isa version
//	kubectl isa completion SHELL      shell completion (cobra)
//
// Cluster commands take kubectl's flags (k8s.io/cli-runtime: --kubeconfig,
// --context, -n, --as, ...) and -o json|yaml|wide|name. main only runs the
// command tree of internal/kubectlisa and maps its errors to exit codes.
package main
