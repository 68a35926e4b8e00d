package mutate

import (
	"fmt"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Grammar is the accepted request syntax, quoted in denials.
const Grammar = `one or more ISAs separated by "|", each a RISC-V ISA string or profile (rv64gc, rv64imafdcv_zba, RV64IMFDV, rva23u64), ` +
	`an x86-64 level with optional +features (x86-64-v3, x86-64-v2+avx512vnni, amd64) or arm64 with optional +features (arm64+sve2)`

// ImageResolver returns the platforms an image reference is built for. It
// podInput reads the pod's requests; msg is a denial for malformed ones.
func podInput(pod *podFields) (in Input, msg string) {
	parse := func(annotation, label string) (*isa.Request, string, string, string) {
		from, text := "annotation "+annotation, pod.Annotations[annotation]
		if _, ok := pod.Annotations[annotation]; !ok {
			v, ok := pod.Labels[label]
			if !ok {
				return nil, "", "", ""
			}
			from, text = "label "+label, v
		}
		r, err := isa.ParseRequest(text)
		if err != nil {
			return nil, from, text, fmt.Sprintf("%s %q is malformed: %v; accepted: %s", from, text, err, Grammar)
		}
		return &r, from, text, ""
	}
	in.Request, in.RequestFrom, in.RequestText, msg = parse(isa.BareRequestAnnotation, isa.RequestLabel)
	if msg != "" {
		return in, msg
	}
	in.QEMU, in.QEMUFrom, in.QEMUText, msg = parse(isa.BareQEMUAnnotation, isa.QEMULabel)
	return in, msg
}
