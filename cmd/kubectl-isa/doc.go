// Package main is kubectl-isa, the kubectl plugin of isamatch: installed on
// the PATH (go install github.com/isamatch/isamatch/cmd/kubectl-isa@latest)
// it answers `kubectl isa ...`.
//
//	kubectl isa nodes                 a table of nodes: arch, ISA, group, emulation
//	kubectl isa check REQUEST         the nodes that could run REQUEST, best first
//	kubectl isa explain pod/NAME      why a pod was placed where it is
//	kubectl isa normalize ISA         offline, as isactl normalize
//	kubectl isa match REQUEST NODEISA offline, as isactl match
//
// Cluster commands take --kubeconfig, --context, -n/--namespace and -o json.
// main only parses flags (parseArgs) and wires internal/kubectlisa.
package main
