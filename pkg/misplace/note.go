package misplace

import (
	"fmt"

	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// maxNote is the most an Event's note may hold (events.k8s.io/v1: 1 kB).
const maxNote = 1024

// Note is the text of the Warning Event recorded for f on node (whose ISA
// is nodeISA; package pkg/misplace/watch records it): what happened, what
// the pod needs, and what to do.
func Note(f Failure, node, nodeISA string, needs Needs) string {
	what := "died of SIGILL (exit code 132): it executed an instruction node " + node + " does not implement"
	fix := "give the pod (or its image, label " + isa.ImageRequestLabel + ") the ISA it needs with the annotation " + isa.RequestAnnotation + ", or build the image for a baseline this node has"
	if f.Reason == ReasonExecFormat {
		what = "could not start, exec format error: its binary is not for node " + node + "'s architecture"
		fix = "use an image with a platform for this architecture, or a multi-platform image, so isamatch can require it"
	}
	if !needs.Decided {
		fix = "create it again while isamatch's webhook answers, so the replacement is decided (a controller's pod: delete it; --evict-misplaced does so), and " + fix
	}
	kind := "container"
	if f.Init {
		kind = "init container"
	}
	s := fmt.Sprintf("%s %q (image %s) %s; node ISA: %s; the pod: %s; fix: %s",
		kind, f.Container, sanitize.Line(f.Image, maxShown), what, nodeISA, needs, fix)
	return sanitize.Line(s, maxNote)
}
