package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// endpointsOf returns where ref is read from, in order: its registry's
// --registry-mirror then the registry; or the hosts of its hosts.toml (its
// own, else _default's) that can serve ref (resolve for a tag, pull for a
// digest), ending with the server; or the registry alone.
func (r *Resolver) endpointsOf(ref name.Reference) []endpoint {
	registry := ref.Context().RegistryStr()
	if m, ok := r.cfg.mirrors[registry]; ok {
		return []endpoint{{host: m, scheme: "https", path: "/v2", resolve: true, pull: true}, originOf(registry)}
	}
	eps := r.cfg.hosts.endpoints(registry)
	if eps == nil {
		return []endpoint{originOf(registry)}
	}
	_, byDigest := ref.(name.Digest)
	var out []endpoint
	for _, e := range eps {
		// Docker Hub may be named twice (server "https://docker.io", host
		// "https://registry-1.docker.io"): it is asked once.
		dup := slices.ContainsFunc(out, func(o endpoint) bool {
			return o.host == e.host && o.scheme == e.scheme && o.path == e.path && o.origin == e.origin
		})
		if !dup && ((byDigest && e.pull) || (!byDigest && e.resolve)) {
			out = append(out, e)
		}
	}
	return out
}

// originOf is the endpoint of registry itself.
func originOf(registry string) endpoint {
	return endpoint{origin: true, host: registry, scheme: "https", path: "/v2", resolve: true, pull: true}
}

// refAt returns ref read from e: ref itself for its own registry, else
// ref with e's host as registry.
func (r *Resolver) refAt(ref name.Reference, e endpoint) (name.Reference, error) {
	if e.origin {
		return ref, nil
	}
	var opts []name.Option
	if e.scheme == "http" || r.cfg.insecure[e.host] {
		opts = append(opts, name.Insecure)
	}
	reg, err := name.NewRegistry(e.host, opts...)
	if err != nil {
		return nil, err
	}
	repo := ref.Context()
	repo.Registry = reg
	switch v := ref.(type) {
	case name.Digest:
		return name.NewDigest(repo.Name()+"@"+v.DigestStr(), opts...)
	case name.Tag:
		return name.NewTag(repo.Name()+":"+v.TagStr(), opts...)
	}
	return nil, fmt.Errorf("reference %s is neither a tag nor a digest", ref)
}

// fetchMirrored resolves ref from its endpoints in order, each asked when
// the one before failed for any reason (unreachable, not found, rate
// limited...), within the one fetch timeout. The error of a resolution
// that tried several is the last one's kind, naming every failure.
func (r *Resolver) fetchMirrored(ctx context.Context, ref name.Reference, kc authn.Keychain) ([]Platform, error) {
	eps := r.endpointsOf(ref)
	if len(eps) == 0 {
		need := "resolve"
		if _, ok := ref.(name.Digest); ok {
			need = "pull"
		}
		return nil, &Error{Kind: KindRefused, Ref: ref.String(), Err: fmt.Errorf(
			"no host of registry %s has the %s capability in the registry hosts dir; add it to a host's capabilities", ref.Context().RegistryStr(), need)}
	}
	var failed []string
	var err error
	for i, e := range eps {
		if i == 1 {
			r.cfg.metrics.mirrorFallback()
		}
		var target name.Reference
		if target, err = r.refAt(ref, e); err == nil {
			var platforms []Platform
			platforms, err = r.fetchFrom(withEndpoint(ctx, e), target, ref.Context(), kc)
			if err == nil || ctx.Err() != nil {
				return platforms, err
			}
		}
		if i < len(eps)-1 {
			failed = append(failed, fmt.Sprintf("%s %s failed (%s)", e.role(), e.host, kindOf(err)))
		}
	}
	if len(failed) == 0 {
		return nil, err
	}
	// The last one's kind; the message names every failure.
	e := classify(ref.String(), err)
	last := eps[len(eps)-1]
	msg := fmt.Sprintf("%s, then %s: %v", strings.Join(failed, ", "), last.lastRole(), e.Err)
	return nil, &Error{Kind: e.Kind, Ref: e.Ref, Err: errors.New(sanitize.Line(msg, maxMessageBytes))}
}

// role names an endpoint tried before others in messages.
func (e endpoint) role() string {
	if e.origin {
		return "origin"
	}
	return "mirror"
}

// lastRole names the endpoint tried last in messages.
func (e endpoint) lastRole() string {
	if e.origin {
		return "the origin"
	}
	return "server " + e.host
}
