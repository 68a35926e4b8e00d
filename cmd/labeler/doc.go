// Command labeler is isamatch's node labeller: run as a DaemonSet, it probes
// its host (through the host's "/" mounted read-only at the configuration's
// hostRoot) with pkg/probe and keeps its own Node's isa.isamatch.io/ and
// qemu.isamatch.io/ labels and annotations true with pkg/labeler. Its
// settings are the fields of the LabelerConfiguration file --config names.
//
//	labeler --config FILE --print                    # probe only, print the labels
//	labeler --node-name NAME --config FILE --once    # probe, reconcile, exit
//	labeler --config FILE                            # daemon: NODE_NAME, every interval and on change
package main
