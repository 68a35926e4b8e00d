package isacli

import (
	"fmt"
	"io"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Match reports whether the node satisfies the request; ok=false is not an
// error (exit 1 without a message on stderr).
func Match(args []string, stdout io.Writer) (bool, error) {
	rest, err := ParseFlags(NewFlags("match"), args, 2, "REQUEST and NODE_ISA")
	if err != nil {
		return false, err
	}
	req, err := isa.ParseRequest(rest[0])
	if err != nil {
		return false, fmt.Errorf("request: %w", err)
	}
	node, err := isa.Parse(rest[1])
	if err != nil {
		return false, fmt.Errorf("node: %w", err)
	}
	best, bestAff := -1, 0.0
	for k, alt := range req.Alternatives {
		if a := isa.Affinity(node, alt); a > bestAff {
			best, bestAff = k, a
		}
	}
	if best >= 0 {
		fmt.Fprintf(stdout, "match: %s\n", req.Alternatives[best].Short())
		fmt.Fprintf(stdout, "affinity: %.4f\n", bestAff)
		return true, nil
	}
	fmt.Fprintln(stdout, "no match")
	for _, alt := range req.Alternatives {
		fmt.Fprintf(stdout, "missing for %s: %s\n", alt.Short(), strings.Join(isa.Missing(node, alt), " "))
	}
	fmt.Fprintf(stdout, "affinity: %.4f\n", 0.0)
	return false, nil
}
