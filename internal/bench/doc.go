// Package bench measures what isamatch costs a cluster, side by side with
// the same cluster without it, and prints one table. Its entry
// point is [Run], which cmd/bench (`make bench`) calls.
//
// Every figure is the median of Options.Runs repetitions and every
// comparison a ratio against a baseline measured in the same run: the
// machines this runs on are shared and noisy. The cluster is a real
// kube-apiserver, etcd and kube-scheduler (internal/testbed), the real
// webhook binary behind the shipped MutatingWebhookConfiguration, the Debian
// docker-registry behind a counting reverse proxy ([CountingProxy]), and
// simulated Ready nodes labelled as the labeler would label them. Beside
// isamatch's webhook runs the floor, internal/bench/noopwebhook: a webhook
// built the same way that allows every pod unchanged, behind a copy of the
// shipped configuration ([HookConfiguration]) for the namespaces labelled
// [HookLabel], and a second isamatch webhook with admission.resolve: gate, the same
// way; admission is measured closed-loop (clients that wait for
// each answer, [CreatePods]) and open-loop (a fixed rate, [OpenLoop]).
package bench
