package engine

import "github.com/isamatch/isamatch/pkg/isa"

// Platform is what the decision reads of one platform of an image: the
// engine's own type, so that it needs no registry client. pkg/mutate
// converts the resolver's platforms to it.
type Platform struct {
	OS, Architecture, Variant string
	// ISARequest is the image config label isa.request for this platform
	// ("" if none, or if it was too large to read).
	ISARequest string
	// LabelIgnored is the size in bytes of an isa.request label the
	// resolver ignored unparsed because it is over LabelLimit bytes (0:
	// none was ignored); the decision warns about it.
	LabelIgnored, LabelLimit int
	// ConfigIgnored is the size in bytes of an image config the resolver
	// did not fetch because it is over ConfigLimit bytes (0: it was read):
	// the platform's label, if any, is unknown; the decision warns about it.
	ConfigIgnored, ConfigLimit int64
}

// ImageInfo is what resolution found for one image reference.
type ImageInfo struct {
	Ref       string
	Platforms []Platform
	// Err is set when the platforms are unknown; its kind ([ErrorKind]) is
	// recorded with the decision.
	Err error
	// Inferred is, per platform (nil when none was inferred), what its
	// entrypoint binary says it needs; used only when the pod asks nothing
	// itself.
	Inferred []*Inferred
}

// Inferred is what a platform's own binary says it needs.
type Inferred struct {
	ISA isa.ISA
	// Source names the file read: "ELF of /usr/bin/app".
	Source string
}

// Input is what a decision is made from.
type Input struct {
	// Request is the native need (annotation isa.request or label ARCH);
	// nil when the pod says nothing. RequestFrom names where it came from
	// and RequestText is what the pod wrote, for messages.
	Request                  *isa.Request
	RequestFrom, RequestText string
	// QEMU is the emulation/cross-compilation need (isa.qemu or QEMU).
	QEMU               *isa.Request
	QEMUFrom, QEMUText string
	// Images in pod order, each reference once.
	Images []ImageInfo
	// Fallback, when set, is required of the node when some image's
	// platforms are unknown and the pod asks no ISA itself.
	Fallback isa.Arch
	// Own is the pod's own node constraints (own.go): the groups are
	// ranked by the nodes they admit. Nil ranks over every node.
	Own NodeConstraints
}

// Warning is an admission warning and the metric reason it counts under.
type Warning struct {
	Reason string
	Text   string
}
