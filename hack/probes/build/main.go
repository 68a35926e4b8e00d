package main

import (
	"context"
	"fmt"
	"os"

	"github.com/isamatch/isamatch/hack/probes"
)

func main() { os.Exit(run()) }

func run() int {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: build OUTDIR")
		return 2
	}
	if err := probes.Build(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		return 1
	}
	return 0
}
