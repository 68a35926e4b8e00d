package bench

import "fmt"

// The content types Options.ContentType may name.
const (
	ContentTypeProtobuf = "application/vnd.kubernetes.protobuf"
	ContentTypeJSON     = "application/json"
)

// contentTypeOrDefault is ct, ContentTypeProtobuf when empty.
func contentTypeOrDefault(ct string) string {
	if ct == "" {
		return ContentTypeProtobuf
	}
	return ct
}

// ParseContentType maps a flag's value (protobuf or json) to its content
// type.
func ParseContentType(v string) (string, error) {
	switch v {
	case "protobuf":
		return ContentTypeProtobuf, nil
	case "json":
		return ContentTypeJSON, nil
	}
	return "", fmt.Errorf("--api-content-type=%q: want protobuf (as kube-controller-manager) or json (as kubectl)", v)
}
