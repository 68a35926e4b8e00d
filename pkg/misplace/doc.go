// Package misplace notices pods that isamatch exists to keep away from the
// wrong node and that got there anyway: a container that died of SIGILL
// (an instruction its node lacks) or could not start with "exec format
// error" (a binary of another architecture). Such a pod was admitted while
// the webhook failed open, before isamatch was installed, or with an image
// that does not say what it needs.
//
// The package is pure and links no Kubernetes client: [Detect] reads the
// failures from a pod's status; [PodNeeds] and [Decision] what a pod asks
// of its node and what isamatch decided; [NodeISA] and [TermString] say a
// node's ISA and a node selector term for people; [Note] is the text of
// the Event that reports a failure; [Slim] cuts a pod to what these read.
// The audit (package audit) and kubectl isa use it.
//
// Package pkg/misplace/watch runs it on the webhook's elected leader: an
// informer of the scheduled pods, the Events, the counter and the remedy
// that evicts.
package misplace
