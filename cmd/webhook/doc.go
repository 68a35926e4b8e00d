// Command webhook serves isamatch's mutating admission webhook: at pod
// creation it resolves the pod's image platforms (pkg/registry), reads the
// node inventory (pkg/inventory) and writes node affinity (pkg/mutate) at
// /mutate-v1-pod. It also serves health, readiness and Prometheus metrics,
// and, in a cluster, generates and rotates its own serving certificate and
// injects the CA into the MutatingWebhookConfiguration "isamatch".
//
// The entry point is run, which reads the flags and the WebhookConfiguration
// file they name with parseArgs and wires the controller-runtime manager.
package main
