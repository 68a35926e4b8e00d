package engine

import (
	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// maxUnresolvedRef bounds one reference in contract.DecisionCounts.Unresolved; real
// references are far shorter.
const maxUnresolvedRef = 256

func unresolvedImage(img ImageInfo) contract.UnresolvedImage {
	return contract.UnresolvedImage{Image: sanitize.Line(img.Ref, maxUnresolvedRef), Kind: ErrorKind(img.Err)}
}

func tierCounts(runs []tierRun) []contract.TierCounts {
	out := make([]contract.TierCounts, 0, len(runs))
	for _, run := range runs {
		n := 0
		for _, g := range run.groups {
			n += g.nodes
		}
		out = append(out, contract.TierCounts{Weight: run.weight, Groups: len(run.groups), Nodes: n})
	}
	return out
}
