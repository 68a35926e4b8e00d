package registry

import "fmt"

// Platform is one platform an image reference can run on.
type Platform struct {
	OS, Architecture, Variant string
	// ISARequest is the image config label "isa.request" for this platform
	// ("" if none).
	ISARequest string
}

// PullAuth names the credentials a pod pulls its images with.
type PullAuth struct {
	Namespace          string
	ServiceAccountName string   // "" means "default"
	ImagePullSecrets   []string // pod's own; the SA's are added by the keychain
}

// Error is a classified resolution failure. Kind is one of "unauthorized",
// "forbidden", "notFound", "timeout", "unreachable", "malformed", "tooLarge"
// or "other"; it is the metric label and part of the warning text.
type Error struct {
	Kind string
	Ref  string
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("resolve %s: %s: %v", e.Ref, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
