package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/isamatch/isamatch/pkg/sanitize"
)

// maxMirrors bounds the registries Options.Mirrors may map to a mirror.
const maxMirrors = 16

// parseMirror parses a mirror mapping "REGISTRY=MIRROR", both host or
// host:port as written in image references ("docker.io=mirror.local:5000").
// The registry "docker.io" stands for Docker Hub under any of its names.
func parseMirror(s string) (from, to string, err error) {
	from, to, ok := strings.Cut(s, "=")
	if !ok || from == "" || to == "" || strings.Contains(to, "=") {
		return "", "", fmt.Errorf("mirror %q: want REGISTRY=MIRROR, e.g. docker.io=mirror.local:5000", sanitize.Line(s, maxRefBytes))
	}
	for _, h := range []string{from, to} {
		if strings.Contains(h, "/") {
			return "", "", fmt.Errorf("mirror %q: %q: want a host or host:port without scheme or path", sanitize.Line(s, maxRefBytes), sanitize.Line(h, maxRefBytes))
		}
		if _, err := name.NewRegistry(h, name.StrictValidation); err != nil {
			return "", "", fmt.Errorf("mirror %q: %q is not a registry host: %w", sanitize.Line(s, maxRefBytes), sanitize.Line(h, maxRefBytes), err)
		}
	}
	// name.Registry spells Docker Hub "index.docker.io" whatever was written.
	r, _ := name.NewRegistry(from)
	return r.RegistryStr(), to, nil
}

// ParseMirrors parses the mappings of Options.Mirrors ("REGISTRY=MIRROR",
// both host or host:port as written in image references) into a map from
// origin registry to mirror host, refusing a registry mapped to two
// mirrors and more than 16 registries.
func ParseMirrors(specs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range specs {
		from, to, err := parseMirror(s)
		if err != nil {
			return nil, err
		}
		if prev, ok := out[from]; ok && prev != to {
			return nil, fmt.Errorf("mirror %q: registry %s already mirrored by %s; give one mirror per registry", sanitize.Line(s, maxRefBytes), from, prev)
		}
		out[from] = to
	}
	if len(out) > maxMirrors {
		return nil, fmt.Errorf("%d mirrored registries: the limit is %d", len(out), maxMirrors)
	}
	return out, nil
}

// mirrorOf returns ref moved to its registry's mirror, if it has one.
func (r *Resolver) mirrorOf(ref name.Reference) (name.Reference, bool) {
	host, ok := r.cfg.mirrors[ref.Context().RegistryStr()]
	if !ok {
		return nil, false
	}
	var opts []name.Option
	if r.cfg.insecure[host] {
		opts = append(opts, name.Insecure)
	}
	reg, err := name.NewRegistry(host, opts...)
	if err != nil {
		return nil, false
	}
	repo := ref.Context()
	repo.Registry = reg
	switch v := ref.(type) {
	case name.Digest:
		d, err := name.NewDigest(repo.Name()+"@"+v.DigestStr(), opts...)
		return d, err == nil
	case name.Tag:
		t, err := name.NewTag(repo.Name()+":"+v.TagStr(), opts...)
		return t, err == nil
	}
	return nil, false
}

// fetchMirrored resolves ref through its mirror, falling back to ref itself
// when the mirror fails; without a mirror it resolves ref.
func (r *Resolver) fetchMirrored(ctx context.Context, ref name.Reference, kc authn.Keychain) ([]Platform, error) {
	m, ok := r.mirrorOf(ref)
	if !ok {
		return r.fetchFrom(ctx, ref, ref.Context(), kc)
	}
	platforms, merr := r.fetchFrom(ctx, m, ref.Context(), kc)
	if merr == nil || ctx.Err() != nil {
		return platforms, merr
	}
	r.cfg.metrics.mirrorFallback()
	platforms, err := r.fetchFrom(ctx, ref, ref.Context(), kc)
	if err != nil {
		// The origin's kind; the message names the mirror's failure too.
		e := classify(ref.String(), err)
		msg := fmt.Sprintf("mirror %s failed (%s), then the origin: %v", m.Context().RegistryStr(), kindOf(merr), e.Err)
		return nil, &Error{Kind: e.Kind, Ref: e.Ref, Err: errors.New(sanitize.Line(msg, maxMessageBytes))}
	}
	return platforms, nil
}
