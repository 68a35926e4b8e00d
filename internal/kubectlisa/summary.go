package kubectlisa

import "strings"

// The readable decision (mutate's summary, in the pod's isamatch Event, or
// in the decision annotation of pods admitted before it held the numbers)
// is a line for people:
//
//	request="..." (from); images: REF [os/arch ...] REF [error kind]; required: TEXT (N nodes now); tiers: ...
//
// explain takes the two parts it cannot recompute from the pod, the image
// platforms and the description of the required affinity, from that line.

// maxDecision bounds the annotation explain reads.
const maxDecision = 16 << 10

// summaryPart returns the text after "; name: " (or "name=" at the start)
// up to the next "; ".
func summaryPart(s, name string) (string, bool) {
	if len(s) > maxDecision {
		s = s[:maxDecision]
	}
	k := strings.Index(s, "; "+name+":")
	if k < 0 {
		return "", false
	}
	rest := strings.TrimPrefix(s[k+len(name)+3:], " ")
	if e := strings.Index(rest, "; "); e >= 0 {
		rest = rest[:e]
	}
	return rest, true
}

// summaryImages reads "REF [p1 p2] REF [error kind]" into ref -> platforms
// (or the error).
func summaryImages(s string) map[string][]string {
	part, ok := summaryPart(s, "images")
	if !ok {
		return nil
	}
	out := map[string][]string{}
	for part != "" {
		open := strings.Index(part, " [")
		end := strings.IndexByte(part, ']')
		if open < 0 || end < open {
			break
		}
		out[strings.TrimSpace(part[:open])] = strings.Fields(part[open+2 : end])
		part = strings.TrimPrefix(part[end+1:], " ")
	}
	return out
}
