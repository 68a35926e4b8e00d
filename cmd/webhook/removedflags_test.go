package main

import (
	"flag"
	"io"
	"testing"

	"github.com/isamatch/isamatch/internal/config/webhookconfig"
	"github.com/isamatch/isamatch/internal/configflag/configflagtest"
)

// binary is the webhook as the removed-flag checks see it: its flags are
// --config, --config-dir, --kubeconfig, logging and --version; every other
// setting is in the file.
func binary(t *testing.T) configflagtest.Binary {
	return configflagtest.Binary{
		Name:       "webhook",
		Run:        func(args []string, stderr io.Writer) int { return run(args, io.Discard, stderr) },
		WithConfig: []string{"--config", writeConfig(t, "")},
		Load: func(data []byte) error {
			_, err := webhookconfig.Load(data)
			return err
		},
		Header: "apiVersion: config.isamatch.io/v1alpha1\nkind: WebhookConfiguration\n",
		Parse: func(fs *flag.FlagSet, args []string) error {
			_, err := parseArgs(fs, args)
			return err
		},
		Removed: removedFlags,
		Kept:    []string{"config", "config-dir", "kubeconfig", "log-format", "v", "version"},
	}
}

func TestRemovedFlags(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	configflagtest.RemovedFlags(t, binary(t))
}

func TestHelpListsKeptFlags(t *testing.T) { configflagtest.HelpListsKept(t, binary(t)) }
