// Package main is isactl, the command-line face of package isa for people who
// run clusters: normalise an ISA string, check whether a node satisfies a
// request, print the labels a node gets and the node affinity a pod gets.
//
//	isactl normalize [--json] [--from=user|cpuinfo|gcc|elf] STRING
//	isactl match REQUEST NODE_ISA
//	isactl labels [--emulated ISA]... NODE_ISA
//	isactl affinity [--emulated] REQUEST
//
// Exit status: 0 on success (match: the node satisfies the request), 1 on
// invalid input (the message names the bad token) or no match, 2 on a usage
// error. affinity prints, as YAML, the required node affinity the webhook
// writes on a pod with that isa.request (--emulated: isa.qemu), from the
// webhook's own code (engine.RequiredAffinity). The entry point is run(args, stdout, stderr), which tests call.
package main
