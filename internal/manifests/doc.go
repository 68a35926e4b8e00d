// Package manifests renders the kustomize tree under config/ the way
// `kubectl apply -k` does and answers questions about what it renders (the
// objects of a kind and name, what an RBAC rule set grants). The manifest
// tests of every binary, in this module and in rebalance/, share it.
package manifests
