package credprov

import (
	"net"
	"net/url"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// Image patterns, as the kubelet matches a provider's matchImages and the
// keys of a plugin's auth map against an image ("registry/repository",
// without tag or digest): the host is split at dots, each part a glob
// ("*.dkr.ecr.*.amazonaws.com"; "*" never spans a dot), with the same
// number of parts as the image's host; the port must be equal; the path, if
// any, must be a prefix of the image's path (no glob).

// parseImagePattern splits a pattern or an image into its host's parts, its
// port and its path.
func parseImagePattern(s string) (parts []string, port, urlPath string, err error) {
	u, err := url.Parse("https://" + s)
	if err != nil {
		return nil, "", "", err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, ""
	}
	parts = strings.Split(host, ".")
	for _, p := range parts {
		if _, err := path.Match(p, ""); err != nil {
			return nil, "", "", err
		}
	}
	return parts, port, u.Path, nil
}

// imageMatches reports whether image matches pattern, as the kubelet's
// URLsMatchStr does.
func imageMatches(pattern, image string) bool {
	gParts, gPort, gPath, err := parseImagePattern(pattern)
	if err != nil {
		return false
	}
	tParts, tPort, tPath, err := parseImagePattern(image)
	if err != nil {
		return false
	}
	if gPort != tPort || len(gParts) != len(tParts) || !strings.HasPrefix(tPath, gPath) {
		return false
	}
	for i, g := range gParts {
		if ok, _ := path.Match(g, tParts[i]); !ok {
			return false
		}
	}
	return true
}

// registryOfImage is the registry part of an image, the kubelet's cache
// key for cacheKeyType Registry.
func registryOfImage(image string) string {
	registry, _, _ := strings.Cut(image, "/")
	return registry
}

// dockerHubRegistry is how the kubelet names Docker Hub in the image it
// sends a plugin ("docker.io/library/nginx"); go-containerregistry says
// index.docker.io.
const dockerHubRegistry = "docker.io"

// imageOfResource is the image the kubelet would send a plugin for target:
// the normalised repository name without tag or digest.
func imageOfResource(target authn.Resource) string {
	s := target.String()
	if target.RegistryStr() == name.DefaultRegistry {
		if rest, ok := strings.CutPrefix(s, name.DefaultRegistry); ok {
			s = dockerHubRegistry + rest
		}
	}
	return s
}

// authKey normalises a key of a plugin's auth map as the kubelet's keyring
// does: no scheme, no /v1/ or /v2/ API prefix, no trailing slash.
func authKey(k string) string {
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	host, p, _ := strings.Cut(k, "/")
	p = "/" + p
	if strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/v2/") {
		p = p[3:]
	}
	if p == "/" {
		return host
	}
	return host + p
}

// isDockerHubImage reports whether image is on Docker Hub, for an auth
// key naming index.docker.io (the kubelet's default registry match).
func isDockerHubImage(image string) bool {
	first, _, ok := strings.Cut(image, "/")
	if first == "" {
		return false
	}
	if !ok || first == dockerHubRegistry || first == name.DefaultRegistry {
		return true
	}
	return !strings.ContainsAny(first, ".:")
}
