package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

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
	_, byDigest := ref.(name.Digest)
	return r.endpointsFor(ref.Context().RegistryStr(), byDigest)
}

// endpointsFor is endpointsOf for a registry's tags (byDigest false) or
// digests.
func (r *Resolver) endpointsFor(registry string, byDigest bool) []endpoint {
	if m, ok := r.cfg.mirrors[registry]; ok {
		return []endpoint{{host: m, scheme: "https", path: "/v2", resolve: true, pull: true}, originOf(registry)}
	}
	eps := r.cfg.hosts.endpoints(registry)
	if eps == nil {
		return []endpoint{originOf(registry)}
	}
	var out []endpoint
	for _, e := range eps {
		// Docker Hub may be named twice (server "https://docker.io", host
		// "https://registry-1.docker.io"): it is asked once.
		dup := slices.ContainsFunc(out, func(o endpoint) bool { return o.same(e) })
		if !dup && ((byDigest && e.pull) || (!byDigest && e.resolve)) {
			out = append(out, e)
		}
	}
	return out
}

// same reports whether e and o are one endpoint.
func (e endpoint) same(o endpoint) bool {
	return o.host == e.host && o.scheme == e.scheme && o.path == e.path && o.origin == e.origin
}

// contentHosts returns the hosts the content of a tag that e resolved is
// pulled from, in order, as containerd pulls it: the pull-only hosts
// before e (never asked to resolve), then e and the hosts after it that
// pull; a host before e that resolves too has failed already. nil when e
// is that list's first: the tag is read wholly from e.
func (r *Resolver) contentHosts(registry string, e endpoint) []endpoint {
	all := r.cfg.hosts.endpoints(registry)
	at := slices.IndexFunc(all, e.same)
	if _, mirrored := r.cfg.mirrors[registry]; mirrored || at < 0 {
		return nil
	}
	var out []endpoint
	for i, h := range all {
		if !h.pull || (i < at && h.resolve) || slices.ContainsFunc(out, h.same) {
			continue
		}
		out = append(out, h)
	}
	if len(out) == 0 || out[0].same(e) {
		return nil
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
	return r.fetchFromHosts(ctx, ref, r.endpointsOf(ref), kc)
}

// fetchFromHosts is fetchMirrored from the endpoints eps.
func (r *Resolver) fetchFromHosts(ctx context.Context, ref name.Reference, eps []endpoint, kc authn.Keychain) ([]Platform, error) {
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
			if pulls := r.contentHosts(ref.Context().RegistryStr(), e); pulls != nil && isTag(ref) {
				platforms, err = r.resolveThenPull(ctx, e, target, ref, pulls, kc)
			} else {
				platforms, err = r.fetchFrom(withEndpoint(ctx, e), target, ref.Context(), kc)
			}
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

// resolveThenPull reads tag ref as containerd does when its content is
// pulled from other hosts than the one resolving it: the tag's digest from
// e (a HEAD, which Docker Hub does not count against its pull limit), then
// the manifests by digest from pulls, in order. A host that
// does not answer HEAD usefully is read wholly, as before.
func (r *Resolver) resolveThenPull(ctx context.Context, e endpoint, target, ref name.Reference, pulls []endpoint, kc authn.Keychain) ([]Platform, error) {
	p, err := remote.NewPuller(r.remoteOptions(withEndpoint(ctx, e), markingKeychain{kc})...)
	if err != nil {
		return nil, err
	}
	desc, err := p.Head(withEndpoint(ctx, e), target)
	if err != nil {
		if headIsAnswer(err) {
			return nil, err
		}
		return r.fetchFrom(withEndpoint(ctx, e), target, ref.Context(), kc)
	}
	if c, ok := r.digests.get(digestKey(ref.Context(), desc.Digest)); ok {
		r.cfg.metrics.digestHit()
		return c.platforms, nil
	}
	return r.fetchFromHosts(ctx, ref.Context().Digest(desc.Digest.String()), pulls, kc)
}

// isTag reports whether ref names a tag (not a digest).
func isTag(ref name.Reference) bool {
	_, ok := ref.(name.Tag)
	return ok
}
