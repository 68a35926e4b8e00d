package bench

import (
	"strings"
	"testing"
)

func TestParseContentType(t *testing.T) {
	for in, want := range map[string]string{"protobuf": ContentTypeProtobuf, "json": ContentTypeJSON} {
		if got, err := ParseContentType(in); err != nil || got != want {
			t.Errorf("ParseContentType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseContentType("yaml"); err == nil || !strings.Contains(err.Error(), `"yaml"`) {
		t.Errorf("ParseContentType(yaml): %v, want an error naming it", err)
	}
	if got := contentTypeOrDefault(""); got != ContentTypeProtobuf {
		t.Errorf("default %q, want protobuf", got)
	}
}
