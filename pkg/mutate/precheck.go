package mutate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
)

// largePod is the object size above which precheck scans the raw pod
// before it is decoded.
const largePod = 64 << 10

// precheck denies a large pod whose request annotation or label
// (metadata.annotations and metadata.labels, the keys engine.ReadRequests
// reads) is over engine.MaxRequestBytes or engine.MaxAlternatives, without
// decoding the pod: decoding megabytes of JSON costs tens of milliseconds,
// walking its strings with memchr well under one. It walks the object's
// structure (strings skipped whole, never unquoted) up to the end of its
// metadata, unquotes only keys and values short enough to be a request,
// and gives the denial engine.ReadRequests would. Anything it cannot read
// is left to engine.ReadRequests after decoding.
func precheck(raw []byte) string {
	if len(raw) <= largePod {
		return ""
	}
	annotationKeys, labelKeys := engine.RequestKeys()
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
				kind, keys = "annotation", annotationKeys
			case "labels":
				kind, keys = "label", labelKeys
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

// checkRawSize is engine.CheckRequestSize of the JSON string body s,
// unquoted only when it holds escapes and is short enough to be within the
// limits.
func checkRawSize(from string, s []byte) string {
	if bytes.IndexByte(s, '\\') < 0 {
		return engine.CheckRequestSize(from, s)
	}
	if len(s) > 6*engine.MaxRequestBytes { // an escape is at most 6 bytes per byte
		return fmt.Sprintf("%s is more than %d bytes; the limit is %d bytes: write at most %d alternatives of the form %s",
			from, len(s)/6, engine.MaxRequestBytes, engine.MaxAlternatives, engine.Grammar)
	}
	var text string
	if err := json.Unmarshal(append(append([]byte{'"'}, s...), '"'), &text); err != nil {
		return "" // malformed: decoding the pod reports it
	}
	return engine.CheckRequestSize(from, text)
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
