// Command labeler is isamatch's node labeller: run as a DaemonSet, it probes
// its host (through the host's "/" mounted read-only at --host-root) with
// pkg/probe and keeps its own Node's isa.isamatch.io/ and qemu.isamatch.io/
// labels and annotations true with pkg/labeler.
//
//	labeler --host-root DIR --print                       # probe only, print the labels
//	labeler --node-name NAME --host-root DIR --once       # probe, reconcile, exit
//	labeler                                               # daemon: NODE_NAME, /host, every 10m and on change
package main
