package registry

import (
	"fmt"

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Platform is one platform an image reference can run on.
type Platform struct {
	OS, Architecture, Variant string
	// Digest is the platform image's manifest digest ("sha256:..."), for
	// reading the image itself ([Resolver.Image]) and caching what is read
	// by content.
	Digest string
	// ISARequest is the image config label "isa.request" for this platform
	// ("" if none, or if it was over MaxLabelBytes).
	ISARequest string
	// LabelIgnored is the size in bytes of an "isa.request" label over
	// MaxLabelBytes, which was ignored unparsed (0: none was ignored).
	// Warn about it with the kind KindLabelTooLarge.
	LabelIgnored int
	// ConfigIgnored is the size in bytes of an image config over
	// MaxConfigBytes, which was not fetched: the platform comes from the
	// index and any label is unknown (0: the config was read).
	ConfigIgnored int64
}

// PullAuth names the credentials a pod pulls its images with.
type PullAuth struct {
	Namespace          string
	ServiceAccountName string   // "" means "default"
	ImagePullSecrets   []string // pod's own; the SA's are added by the keychain
}

// Error is a classified resolution failure. Kind is one of "unauthorized",
// "forbidden", "notFound", "timeout", "unreachable", "malformed",
// "tooLarge", "refused" or "other"; it is the metric label and part of the
// warning text. Err holds only a short sanitised message (at most
// maxMessageBytes of printable UTF-8, no registry response body), so the
// error can be cached, logged and shown to users as it is.
type Error struct {
	Kind string
	Ref  string
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("resolve %s: %s: %v", sanitize.Line(e.Ref, maxRefBytes), e.Kind, e.Err)
}

// maxRefBytes bounds the image reference in an error text.
const maxRefBytes = 256

func (e *Error) Unwrap() error { return e.Err }

// ErrorKind returns Kind: the decision engine classifies an image's error
// by this method, so it needs no import of the registry.
func (e *Error) ErrorKind() string { return e.Kind }
