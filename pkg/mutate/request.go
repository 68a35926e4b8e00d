package mutate

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Grammar is the accepted request syntax, quoted in denials.
const Grammar = `one or more ISAs separated by "|", each a RISC-V ISA string or profile (rv64gc, rv64imafdcv_zba, RV64IMFDV, rva23u64), ` +
	`an x86-64 level with optional +features (x86-64-v3, x86-64-v2+avx512vnni, amd64), arm64 with optional +features (arm64+sve2), ` +
	`or a bare architecture (riscv64, riscv32, amd64, arm64), which means its base ISA (rv64i, rv32i, x86-64, arm64)`

// Limits on the pod's request text, checked before it is parsed: the text
// is untrusted and mutating admission runs before validation, so a key can
// be as large as the request body.
const (
	// MaxRequestBytes bounds one request key's value.
	MaxRequestBytes = 1024
	// MaxAlternatives bounds the "|"-separated alternatives of one key.
	MaxAlternatives = 16
)

// requestKeys are the keys one need is read from, in precedence order.
type requestKeys struct {
	prefixed, bare, label string
}

var (
	nativeKeys = requestKeys{isa.RequestAnnotation, isa.BareRequestAnnotation, isa.RequestLabel}
	qemuKeys   = requestKeys{isa.QEMUAnnotation, isa.BareQEMUAnnotation, isa.QEMULabel}
)

// podInput reads the pod's requests; msg is a denial for malformed or
// oversized ones. Warnings name keys that disagree with the one used.
func podInput(pod *podFields) (in Input, warnings []Warning, msg string) {
	var w []Warning
	in.Request, in.RequestFrom, in.RequestText, w, msg = parseKeys(pod, nativeKeys)
	warnings = append(warnings, w...)
	if msg != "" {
		return in, warnings, msg
	}
	in.QEMU, in.QEMUFrom, in.QEMUText, w, msg = parseKeys(pod, qemuKeys)
	return in, append(warnings, w...), msg
}

// parseKeys reads one need: the prefixed annotation wins over the bare
// annotation, which wins over the label. Every set key is bounded before
// anything is parsed.
func parseKeys(pod *podFields, k requestKeys) (r *isa.Request, from, text string, warnings []Warning, msg string) {
	type found struct{ from, text string }
	var set []found
	for _, c := range []struct {
		m    map[string]string
		kind string
		key  string
	}{{pod.Annotations, "annotation", k.prefixed}, {pod.Annotations, "annotation", k.bare}, {pod.Labels, "label", k.label}} {
		v, ok := c.m[c.key]
		if !ok {
			continue
		}
		f := found{c.kind + " " + c.key, v}
		if m := checkSize(f.from, v); m != "" {
			return nil, f.from, "", nil, m
		}
		set = append(set, f)
	}
	if len(set) == 0 {
		return nil, "", "", nil, ""
	}
	win := set[0]
	for _, o := range set[1:] {
		if strings.TrimSpace(o.text) != strings.TrimSpace(win.text) {
			warnings = append(warnings, Warning{Reason: "conflictingKeys", Text: fmt.Sprintf(
				"%s %q and %s %q differ; %s is used (precedence: %s, %s, %s)",
				win.from, win.text, o.from, o.text, win.from, k.prefixed, k.bare, k.label)})
		}
	}
	req, err := isa.ParseRequest(win.text)
	if err != nil {
		return nil, win.from, win.text, warnings, fmt.Sprintf("%s %q is malformed: %v; accepted: %s", win.from, win.text, err, Grammar)
	}
	return &req, win.from, win.text, warnings, ""
}

// checkSize returns a denial when text exceeds MaxRequestBytes or
// MaxAlternatives; it reads the text only to count.
func checkSize[T string | []byte](from string, text T) string {
	if len(text) > MaxRequestBytes {
		return fmt.Sprintf("%s is %d bytes; the limit is %d bytes: write at most %d alternatives of the form %s",
			from, len(text), MaxRequestBytes, MaxAlternatives, Grammar)
	}
	if n := bytes.Count([]byte(text), []byte("|")) + 1; n > MaxAlternatives {
		return fmt.Sprintf("%s has %d alternatives; the limit is %d: keep only the ones the image needs",
			from, n, MaxAlternatives)
	}
	return ""
}

// largePod is the object size above which precheck scans the raw pod
// before it is decoded.
const largePod = 64 << 10

// precheck denies a large pod whose request annotation is plainly over
// MaxRequestBytes without decoding it: decoding megabytes of JSON costs
// tens of milliseconds, walking its strings with memchr well under one. It
// visits every string of the object once and looks for each annotation
// key followed by a string value, as the API server writes it (compact
// JSON, `"key":"`); a key written otherwise is still bounded by podInput
// after decoding. Strings under these keys that long are valid only as
// annotations.
func precheck(raw []byte) string {
	if len(raw) <= largePod {
		return ""
	}
	for off := 0; off < len(raw); {
		i := bytes.IndexByte(raw[off:], '"')
		if i < 0 {
			return ""
		}
		start := off + i + 1
		n, _ := stringLen(raw[start:])
		end := start + n // the closing quote
		off = end + 1
		if n > len(isa.RequestAnnotation) || !bytes.HasPrefix(raw[end:], []byte(`":"`)) {
			continue
		}
		key := string(raw[start:end])
		if key != isa.RequestAnnotation && key != isa.BareRequestAnnotation && key != isa.QEMUAnnotation && key != isa.BareQEMUAnnotation {
			continue
		}
		vstart := end + 3
		vn, escaped := stringLen(raw[vstart:])
		off = vstart + vn + 1
		switch {
		case !escaped && vn > MaxRequestBytes:
			return checkSize("annotation "+key, raw[vstart:vstart+vn])
		case escaped && vn > 6*MaxRequestBytes: // an escape is at most 6 bytes per byte
			return fmt.Sprintf("annotation %s is more than %d bytes; the limit is %d bytes: write at most %d alternatives of the form %s",
				key, vn/6, MaxRequestBytes, MaxAlternatives, Grammar)
		}
	}
	return ""
}

// stringLen returns the length of the JSON string body at the start of b
// (up to its closing quote) and whether it holds escapes.
func stringLen(b []byte) (n int, escaped bool) {
	for {
		i := bytes.IndexByte(b[n:], '"')
		if i < 0 {
			return len(b), escaped
		}
		if j := bytes.IndexByte(b[n:n+i], '\\'); j >= 0 {
			escaped = true
		}
		n += i
		bs := 0
		for k := n - 1; k >= 0 && b[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return n, escaped
		}
		n++
	}
}
