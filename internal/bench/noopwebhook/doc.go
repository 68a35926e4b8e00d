// Command noopwebhook is the floor of internal/bench: a mutating admission
// webhook that allows every pod with no patch, built like cmd/webhook (a
// controller-runtime manager and webhook server, HTTP/1.1 only unless
// --enable-http2, the serving certificate from --cert-dir, readiness from
// the server's StartedChecker) so that what isamatch costs on top of it is
// isamatch's own work, not the admission protocol's. It serves at
// /mutate-v1-pod like cmd/webhook. It also serves /annotate-v1-pod, which
// answers each pod with a patch adding one annotation: the least any
// mutation writes. With --replay-patches it also serves /replay-v1-pod,
// which answers each pod with a patch recorded from isamatch's answers:
// the cost of writing what isamatch writes, without deciding anything.
//
// The entry point is run, which parses flags with parseArgs.
package main
