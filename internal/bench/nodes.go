package bench

import (
	"fmt"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
)

// fixedISAs are the amd64 and arm64 groups every cluster gets; RISC-V
// groups fill the rest.
var fixedISAs = []string{
	"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4",
	"arm64", "arm64+crc32", "arm64+sve", "arm64+sve2", "arm64+sha3",
}

// riscvOptional are combined, every subset in turn, onto rv64gc.
var riscvOptional = []string{"zba", "zbb", "zbs", "zicond", "zfa", "zbc", "zicbom", "v"}

// GroupISAs returns n distinct ISAs (distinct isa.GroupID): the fixed amd64
// and arm64 ones, then rv64gc with every subset of eight optional
// extensions. n is at most len(fixedISAs)+256.
func GroupISAs(n int) ([]isa.ISA, error) {
	if n > len(fixedISAs)+1<<len(riscvOptional) {
		return nil, fmt.Errorf("%d ISA groups asked for: at most %d", n, len(fixedISAs)+1<<len(riscvOptional))
	}
	var out []isa.ISA
	seen := map[string]bool{}
	add := func(s string) error {
		i, err := isa.Parse(s)
		if err != nil {
			return fmt.Errorf("parse group ISA %q: %w", s, err)
		}
		id := isa.GroupID(i)
		if seen[id] {
			return fmt.Errorf("group ISA %q repeats group %s", s, id)
		}
		seen[id] = true
		out = append(out, i)
		return nil
	}
	for _, s := range fixedISAs {
		if len(out) == n {
			return out, nil
		}
		if err := add(s); err != nil {
			return nil, err
		}
	}
	for mask := 0; len(out) < n; mask++ {
		s := "rv64gc"
		var multi []string
		for k, e := range riscvOptional {
			if mask&(1<<k) == 0 {
				continue
			}
			if len(e) == 1 {
				s += e
			} else {
				multi = append(multi, e)
			}
		}
		if len(multi) > 0 {
			s += "_" + strings.Join(multi, "_")
		}
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NodeSet is nodes spread round-robin over ISA groups: name -> labels as
// the labeler writes them, plus kubernetes.io/arch.
func NodeSet(prefix string, nodes int, groups []isa.ISA) map[string]map[string]string {
	out := make(map[string]map[string]string, nodes)
	for k := range nodes {
		g := groups[k%len(groups)]
		name := nodeName(prefix, k)
		labels := isa.WithGroupDomain(isa.NodeLabels(g, nil), name)
		labels[isa.KubeArchLabel] = string(g.Arch)
		out[name] = labels
	}
	return out
}

// NodeISAs is the native ISA of every node of NodeSet(prefix, nodes,
// groups).
func NodeISAs(prefix string, nodes int, groups []isa.ISA) map[string]isa.ISA {
	out := make(map[string]isa.ISA, nodes)
	for k := range nodes {
		out[nodeName(prefix, k)] = groups[k%len(groups)]
	}
	return out
}

func nodeName(prefix string, k int) string { return fmt.Sprintf("%s-%05d", prefix, k) }

// benchNodes is the prefix of make bench's node names.
const benchNodes = "node"

// isaT is isa.ISA, for signatures in files that do not import isa.
type isaT = isa.ISA
