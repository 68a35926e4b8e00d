package main

import (
	"flag"
	"io"
	"testing"

	componentconfig "github.com/isamatch/isamatch/internal/config"
	"github.com/isamatch/isamatch/internal/configflag/configflagtest"
)

// binary is the labeler as the removed-flag checks see it: its flags are
// --config, --config-dir, --kubeconfig, logging, --version and the node
// and mode flags; every other setting is in the file.
func binary(t *testing.T) configflagtest.Binary {
	return configflagtest.Binary{
		Name:       "labeler",
		Run:        func(args []string, stderr io.Writer) int { return runWith(t.Context(), args, io.Discard, stderr) },
		WithConfig: []string{"--print", "--config", writeConfig(t, header)},
		Load: func(data []byte) error {
			_, err := componentconfig.LoadLabeler(data)
			return err
		},
		Header: header,
		Parse: func(fs *flag.FlagSet, args []string) error {
			_, err := parseArgs(fs, args)
			return err
		},
		Removed: removedFlags,
		Kept:    []string{"config", "config-dir", "kubeconfig", "log-format", "node-name", "once", "print", "prune", "v", "version"},
	}
}

func TestRemovedFlags(t *testing.T) {
	t.Setenv("NODE_NAME", "n1")
	configflagtest.RemovedFlags(t, binary(t))
}

func TestHelpListsKeptFlags(t *testing.T) { configflagtest.HelpListsKept(t, binary(t)) }
