package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/isamatch/isamatch/internal/kubectlisa"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1 // an error, or match's "no"
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}

// run executes the command line args and returns the exit status.
func run(args []string, streams genericiooptions.IOStreams) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := kubectlisa.NewCommand(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return exitCode(err, streams.ErrOut)
}

// exitCode reports err as kubectl does (a message on stderr, a hint for
// usage errors) and returns the exit status.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitOK
	case kubectlisa.IsNoMatch(err):
		return exitFail
	case errors.Is(err, kubectlisa.ErrUsage), strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"):
		fmt.Fprintf(stderr, "error: %v\nSee 'kubectl isa --help' for usage.\n", err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "error: %v\n", err)
		return exitFail
	}
}
