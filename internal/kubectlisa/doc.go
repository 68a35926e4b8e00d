// Package kubectlisa is the cluster side of the kubectl-isa plugin: it reads
// nodes and pods through a client-go clientset and shows what isamatch sees
// and decided. [Execute] runs one command (nodes, check, explain) from
// [Options]; [NewClient] builds the clientset from the usual kubeconfig
// flags. The offline commands (normalize, match) live in internal/isacli.
package kubectlisa
