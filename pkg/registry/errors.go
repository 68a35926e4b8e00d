package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/isamatch/isamatch/pkg/registry/internal/slots"
	"github.com/isamatch/isamatch/pkg/registry/netguard"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// The kinds of [Error].
const (
	KindUnauthorized = "unauthorized"
	KindForbidden    = "forbidden"
	KindNotFound     = "notFound"
	KindTimeout      = "timeout"
	KindUnreachable  = "unreachable"
	KindMalformed    = "malformed"
	KindTooLarge     = "tooLarge"
	KindRefused      = "refused"
	// KindRateLimited: the registry answered 429 Too Many Requests, or
	// did so with a Retry-After that has not passed yet (then nothing was
	// sent; see [MaxRetryAfter]).
	KindRateLimited = "rateLimited"
	KindOther       = "other"
	// KindLabelTooLarge is not a resolution failure: it names an image
	// config label over [MaxLabelBytes] that was ignored (see
	// [Platform.LabelIgnored]), for a warning.
	KindLabelTooLarge = "labelTooLarge"
)

// errTooLarge marks a registry response over the configured size limit.
var errTooLarge = errors.New("registry response too large")

// errMalformed marks content that parsed but does not describe an image.
var errMalformed = errors.New("malformed image")

// errRefused marks a connection the resolver would not make: a registry
// address that is not public (package netguard), or plain HTTP to a host
// not named insecure.
var errRefused = netguard.ErrRefused

// classify wraps err in an *Error with the kind that describes it best and
// a short sanitised message: never a registry's response body, which may
// be 64 KiB of HTML, carry control characters, or echo what an internal
// service answered.
func classify(ref string, err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: kindOf(err), Ref: ref, Err: errors.New(messageOf(err))}
}

// messageOf is what an *Error keeps of err.
func messageOf(err error) string {
	var te *transport.Error
	if errors.As(err, &te) {
		// The status and the registry's error codes (a fixed vocabulary),
		// never its messages or body.
		msg := fmt.Sprintf("registry answered HTTP %d", te.StatusCode)
		var codes []string
		for _, d := range te.Errors {
			if c := string(d.Code); isErrorCode(c) && len(codes) < 3 {
				codes = append(codes, c)
			}
		}
		if len(codes) > 0 {
			msg += " " + strings.Join(codes, ",")
		}
		return msg
	}
	// Our own limits and refusals say what was wrong and which limit
	// applies: keep that text rather than the URLs wrapped around it.
	for _, sentinel := range []error{errTooLarge, errRefused, slots.ErrWait, errMalformed, errRateLimited} {
		if own := wrapperOf(err, sentinel); own != nil {
			return sanitize.Line(own.Error(), maxMessageBytes)
		}
	}
	return sanitize.Line(err.Error(), maxMessageBytes)
}

// wrapperOf returns the outermost error in err's tree that wraps sentinel
// directly.
func wrapperOf(err, sentinel error) error {
	var inner []error
	switch u := err.(type) { //nolint:errorlint // walks the tree itself, one level at a time
	case interface{ Unwrap() error }:
		inner = []error{u.Unwrap()}
	case interface{ Unwrap() []error }:
		inner = u.Unwrap()
	}
	for _, e := range inner {
		if e == sentinel { //nolint:errorlint // a direct wrap is what is looked for
			return err
		}
	}
	for _, e := range inner {
		if e == nil {
			continue
		}
		if w := wrapperOf(e, sentinel); w != nil {
			return w
		}
	}
	return nil
}

// isErrorCode accepts distribution-spec error codes (MANIFEST_UNKNOWN).
func isErrorCode(c string) bool {
	if c == "" || len(c) > 32 {
		return false
	}
	for _, r := range c {
		if (r < 'A' || r > 'Z') && r != '_' {
			return false
		}
	}
	return true
}

func kindOf(err error) string {
	if errors.Is(err, slots.ErrWait) {
		return KindTimeout
	}
	if errors.Is(err, errTooLarge) {
		return KindTooLarge
	}
	if errors.Is(err, errRateLimited) {
		return KindRateLimited
	}
	if errors.Is(err, errMalformed) || errors.Is(err, remote.ErrSchema1) {
		return KindMalformed
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, os.ErrDeadlineExceeded) {
		return KindTimeout
	}
	// Certificate problems first: for a loopback or insecure registry the
	// HTTPS failure comes with a less telling plain-HTTP fallback failure.
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &verify) {
		return KindUnreachable
	}
	if errors.Is(err, errRefused) {
		return KindRefused
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return kindOfStatus(te)
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return KindMalformed
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return KindTimeout
	}
	var op *net.OpError
	var dns *net.DNSError
	if errors.As(err, &op) || errors.As(err, &dns) {
		return KindUnreachable
	}
	return KindOther
}

func kindOfStatus(te *transport.Error) string {
	for _, d := range te.Errors {
		switch d.Code {
		case transport.UnauthorizedErrorCode:
			return KindUnauthorized
		case transport.DeniedErrorCode:
			return KindForbidden
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode:
			return KindNotFound
		case transport.ManifestInvalidErrorCode:
			return KindMalformed
		case transport.TooManyRequestsErrorCode:
			return KindRateLimited
		}
	}
	switch te.StatusCode {
	case http.StatusUnauthorized:
		return KindUnauthorized
	case http.StatusForbidden:
		return KindForbidden
	case http.StatusNotFound:
		return KindNotFound
	case http.StatusTooManyRequests:
		return KindRateLimited
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return KindTimeout
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return KindUnreachable
	}
	return KindOther
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}

// maxMessageBytes bounds the message an [*Error] keeps from a failure.
const maxMessageBytes = 160
