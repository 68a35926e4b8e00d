package mutate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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
func podInput(pod *podFields, o KeyOptions) (in Input, warnings []Warning, msg string) {
	var w []Warning
	native, qemu := nativeKeys, qemuKeys
	if o.IgnoreBareKeys {
		native, qemu = requestKeys{prefixed: native.prefixed}, requestKeys{prefixed: qemu.prefixed}
	}
	in.Request, in.RequestFrom, in.RequestText, w, msg = parseKeys(pod, native)
	warnings = append(warnings, w...)
	if msg != "" {
		return in, warnings, msg
	}
	in.QEMU, in.QEMUFrom, in.QEMUText, w, msg = parseKeys(pod, qemu)
	in.own = ownConstraints(pod)
	return in, append(warnings, w...), msg
}

// parseKeys reads one need: the prefixed annotation wins over the bare
// annotation, which wins over the label; an empty key of k is not read.
// Every set key is bounded before anything is parsed.
func parseKeys(pod *podFields, k requestKeys) (r *isa.Request, from, text string, warnings []Warning, msg string) {
	type found struct{ from, text string }
	var set []found
	for _, c := range []struct {
		m    map[string]string
		kind string
		key  string
	}{{pod.Annotations, "annotation", k.prefixed}, {pod.Annotations, "annotation", k.bare}, {pod.Labels, "label", k.label}} {
		if c.key == "" {
			continue
		}
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

// precheck denies a large pod whose request annotation or label
// (metadata.annotations and metadata.labels, the keys podInput reads) is
// over MaxRequestBytes or MaxAlternatives, without decoding the pod:
// decoding megabytes of JSON costs tens of milliseconds, walking its
// strings with memchr well under one. It walks the object's structure
// (strings skipped whole, never unquoted) up to the end of its metadata,
// unquotes only keys and values short enough to be a request, and gives
// the denial podInput would. Anything it cannot read is left to podInput
// after decoding.
func precheck(raw []byte) string {
	if len(raw) <= largePod {
		return ""
	}
	var msg string
	walkObject(raw, skipSpace(raw, 0), func(key []byte, v int) int {
		if msg != "" || string(key) != "metadata" || v >= len(raw) || raw[v] != '{' {
			return skipValue(raw, v)
		}
		return walkObject(raw, v, func(key []byte, v int) int {
			var keys []string
			kind := ""
			switch string(key) {
			case "annotations":
				kind, keys = "annotation", []string{nativeKeys.prefixed, nativeKeys.bare, qemuKeys.prefixed, qemuKeys.bare}
			case "labels":
				kind, keys = "label", []string{nativeKeys.label, qemuKeys.label}
			}
			if msg != "" || kind == "" || v >= len(raw) || raw[v] != '{' {
				return skipValue(raw, v)
			}
			return walkObject(raw, v, func(key []byte, v int) int {
				end := skipValue(raw, v)
				if msg == "" && v < len(raw) && raw[v] == '"' && slices.Contains(keys, string(key)) {
					msg = checkRawSize(kind+" "+string(key), raw[v+1:max(end-1, v+1)])
				}
				return end
			})
		})
	})
	return msg
}

// checkRawSize is checkSize of the JSON string body s, unquoted only when
// it holds escapes and is short enough to be within the limits.
func checkRawSize(from string, s []byte) string {
	if bytes.IndexByte(s, '\\') < 0 {
		return checkSize(from, s)
	}
	if len(s) > 6*MaxRequestBytes { // an escape is at most 6 bytes per byte
		return fmt.Sprintf("%s is more than %d bytes; the limit is %d bytes: write at most %d alternatives of the form %s",
			from, len(s)/6, MaxRequestBytes, MaxAlternatives, Grammar)
	}
	var text string
	if err := json.Unmarshal(append(append([]byte{'"'}, s...), '"'), &text); err != nil {
		return "" // malformed: decoding the pod reports it
	}
	return checkSize(from, text)
}

// maxKeyBytes bounds the raw keys walkObject unquotes: a key longer than
// this, escaped, is none of the keys precheck looks for.
const maxKeyBytes = 256

// walkObject walks the members of the JSON object at raw[i] ('{'): for
// each it calls member with the key (unquoted when it holds escapes and
// is at most maxKeyBytes; nil for a longer escaped key) and the index of
// the value; member returns the index just past the value. walkObject
// returns the index just past the object, or len(raw) when it is cut off
// or malformed.
func walkObject(raw []byte, i int, member func(key []byte, v int) int) int {
	if i >= len(raw) || raw[i] != '{' {
		return len(raw)
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return i + 1
	}
	for i < len(raw) && raw[i] == '"' {
		n, escaped := stringLen(raw[i+1:])
		key := raw[i+1 : i+1+n]
		if escaped {
			var k string
			if n > maxKeyBytes || json.Unmarshal(raw[i:min(i+n+2, len(raw))], &k) != nil {
				k = ""
			}
			key = []byte(k)
		}
		i = skipSpace(raw, i+n+2)
		if i >= len(raw) || raw[i] != ':' {
			return len(raw)
		}
		i = skipSpace(raw, member(key, skipSpace(raw, i+1)))
		if i >= len(raw) {
			return len(raw)
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return i + 1
		default:
			return len(raw)
		}
	}
	return len(raw)
}

// skipValue returns the index just past the JSON value at raw[i]: strings
// are skipped whole with stringLen, objects and arrays by their brackets.
func skipValue(raw []byte, i int) int {
	depth := 0
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			n, _ := stringLen(raw[i+1:])
			i += n + 1
			if depth == 0 {
				return min(i+1, len(raw))
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of the enclosing value
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 { // the end of a number or literal
				return i
			}
		}
	}
	return len(raw)
}

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
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
