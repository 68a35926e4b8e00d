package engine

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

// RequestKeys returns every annotation and label key a request may be
// read from, bare ones included: what a caller bounds with
// CheckRequestSize before it decodes a pod.
func RequestKeys() (annotations, labels []string) {
	return []string{nativeKeys.prefixed, nativeKeys.bare, qemuKeys.prefixed, qemuKeys.bare}, []string{nativeKeys.label, qemuKeys.label}
}

// ReadRequests reads a pod's requests from its annotations and labels
// with the keys o chooses: which key wins, how each is bounded and parsed.
// msg, when not empty, is the denial a malformed or oversized request
// gets; warnings name keys that disagree with the one used. Images and
// Own are left empty.
func ReadRequests(annotations, labels map[string]string, o KeyOptions) (in Input, warnings []Warning, msg string) {
	var w []Warning
	native, qemu := nativeKeys, qemuKeys
	if o.IgnoreBareKeys {
		native, qemu = requestKeys{prefixed: native.prefixed}, requestKeys{prefixed: qemu.prefixed}
	}
	in.Request, in.RequestFrom, in.RequestText, w, msg = parseKeys(annotations, labels, native)
	warnings = append(warnings, w...)
	if msg != "" {
		return in, warnings, msg
	}
	in.QEMU, in.QEMUFrom, in.QEMUText, w, msg = parseKeys(annotations, labels, qemu)
	return in, append(warnings, w...), msg
}

// parseKeys reads one need: the prefixed annotation wins over the bare
// annotation, which wins over the label; an empty key of k is not read.
// Every set key is bounded before anything is parsed.
func parseKeys(annotations, labels map[string]string, k requestKeys) (r *isa.Request, from, text string, warnings []Warning, msg string) {
	type found struct{ from, text string }
	var set []found
	for _, c := range []struct {
		m    map[string]string
		kind string
		key  string
	}{{annotations, "annotation", k.prefixed}, {annotations, "annotation", k.bare}, {labels, "label", k.label}} {
		if c.key == "" {
			continue
		}
		v, ok := c.m[c.key]
		if !ok {
			continue
		}
		f := found{c.kind + " " + c.key, v}
		if m := CheckRequestSize(f.from, v); m != "" {
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

// CheckRequestSize returns the denial of a request key's value text (from
// names the key) that exceeds MaxRequestBytes or MaxAlternatives, "" for
// one within them; it reads the text only to count, so a caller may bound
// a value before it decodes the pod.
func CheckRequestSize[T string | []byte](from string, text T) string {
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
