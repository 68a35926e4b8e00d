package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	helmregistry "helm.sh/helm/v4/pkg/registry"
)

// Media types of the SBOM referrer (OCI image spec 1.1, artifacts).
const (
	sbomMediaType          = "application/spdx+json"
	emptyMediaType         = "application/vnd.oci.empty.v1+json"
	annotationSBOMFor      = "io.isamatch.sbom.image"
	annotationTitle        = "org.opencontainers.image.title"
	annotationSBOMCreation = "org.opencontainers.image.created"
)

// published is one image of the release, as pushed.
type published struct {
	App string
	// Tag is REPO/APP:VERSION, which points at Digest.
	Tag       name.Tag
	Digest    v1.Hash
	Platforms []platformDigest
	// SBOM is the SPDX document pushed as a referrer of Digest; SBOMDigest
	// is the digest of that referrer's manifest.
	SBOM       []byte
	SBOMDigest v1.Hash
}

type platformDigest struct {
	Platform string
	Digest   v1.Hash
}

// registry holds the remote options every push uses.
type registry struct {
	opts      []remote.Option
	insecure  bool
	transport http.RoundTripper
}

func newRegistry(ctx context.Context, o options) (*registry, error) {
	base, ok := remote.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("remote.DefaultTransport is not an *http.Transport")
	}
	t := base.Clone()
	if o.CA != "" || o.Insecure {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.CA != "" {
			pem, err := os.ReadFile(o.CA)
			if err != nil {
				return nil, fmt.Errorf("read --ca: %w", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--ca %s holds no PEM certificate", o.CA)
			}
			tc.RootCAs = pool
		}
		// The user asked for it: a lab registry.
		tc.InsecureSkipVerify = o.Insecure //nolint:gosec
		t.TLSClientConfig = tc
	}
	return &registry{insecure: o.Insecure, transport: t, opts: []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithTransport(t),
		remote.WithUserAgent("isamatch-hack-release"),
	}}, nil
}

func (r *registry) nameOpts() []name.Option {
	opts := []name.Option{name.StrictValidation}
	if r.insecure {
		opts = append(opts, name.Insecure)
	}
	return opts
}

// publish pushes img's index (its images by digest, then the tag), writes
// its SBOM and pushes that as a referrer of the index.
func publish(r *registry, o options, img layoutImage) (published, error) {
	tag, err := name.NewTag(o.Repo+"/"+img.App+":"+o.Version, r.nameOpts()...)
	if err != nil {
		return published{}, fmt.Errorf("image reference for %s: %w", img.App, err)
	}
	p := published{App: img.App, Tag: tag}
	if p.Digest, err = img.Index.Digest(); err != nil {
		return p, fmt.Errorf("digest of %s: %w", tag, err)
	}
	im, err := img.Index.IndexManifest()
	if err != nil {
		return p, fmt.Errorf("index of %s: %w", tag, err)
	}
	var bins []platformBinary
	for _, d := range im.Manifests {
		p.Platforms = append(p.Platforms, platformDigest{Platform: d.Platform.String(), Digest: d.Digest})
		pi, err := img.Index.Image(d.Digest)
		if err != nil {
			return p, fmt.Errorf("%s for %s: %w", tag, d.Platform, err)
		}
		bin, err := binaryOf(pi, img.App)
		if err != nil {
			return p, fmt.Errorf("%s for %s: %w", tag, d.Platform, err)
		}
		bins = append(bins, platformBinary{Platform: *d.Platform, Digest: d.Digest, Binary: bin})
	}
	if err := remote.WriteIndex(tag, img.Index, r.opts...); err != nil {
		return p, fmt.Errorf("push %s: %w", tag, err)
	}
	if p.SBOM, err = sbomFor(o, img.App, tag.Context().Name(), p.Digest, bins); err != nil {
		return p, fmt.Errorf("SBOM of %s: %w", tag, err)
	}
	subject := v1.Descriptor{MediaType: im.MediaType, Digest: p.Digest}
	if subject.Size, err = img.Index.Size(); err != nil {
		return p, err
	}
	if p.SBOMDigest, err = pushReferrer(r, tag.Context(), subject, img.App, p.SBOM, o); err != nil {
		return p, fmt.Errorf("push the SBOM of %s: %w", tag, err)
	}
	return p, nil
}

// pushReferrer pushes sbom as an OCI artifact (artifactType
// application/spdx+json, an empty config, the document as its one layer)
// whose subject is the image index: `oras discover`, `crane` and
// remote.Referrers list it under the index's digest. On a registry without
// the Referrers API, go-containerregistry keeps the fallback tag
// sha256-<digest> of the index up to date instead.
func pushReferrer(r *registry, repo name.Repository, subject v1.Descriptor, app string, sbom []byte, o options) (v1.Hash, error) {
	empty := static.NewLayer([]byte("{}"), emptyMediaType)
	doc := static.NewLayer(sbom, sbomMediaType)
	var descs []v1.Descriptor
	for _, l := range []v1.Layer{empty, doc} {
		if err := remote.WriteLayer(repo, l, r.opts...); err != nil {
			return v1.Hash{}, err
		}
		d, err := descriptorOf(l)
		if err != nil {
			return v1.Hash{}, err
		}
		descs = append(descs, d)
	}
	descs[0].Data = []byte("{}")
	descs[1].Annotations = map[string]string{annotationTitle: app + ".spdx.json"}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  sbomMediaType,
		Config:        descs[0],
		Layers:        descs[1:],
		Subject:       &subject,
		Annotations: map[string]string{
			annotationSBOMFor:      repo.Name() + "@" + subject.Digest.String(),
			annotationSBOMCreation: o.Epoch.Format("2006-01-02T15:04:05Z"),
		},
	}
	raw, err := jsonMarshal(m)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return v1.Hash{}, err
	}
	ref := repo.Digest(digest.String())
	if err := remote.Put(ref, rawManifest{raw: raw, mediaType: types.OCIManifestSchema1}, r.opts...); err != nil {
		return v1.Hash{}, err
	}
	return digest, nil
}

func descriptorOf(l v1.Layer) (v1.Descriptor, error) {
	d, err := l.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	size, err := l.Size()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := l.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Digest: d, Size: size}, nil
}

// rawManifest is a manifest already serialised, for remote.Put.
type rawManifest struct {
	raw       []byte
	mediaType types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mediaType, nil }

// pushChart pushes the packaged chart as an OCI artifact to
// REPO/charts/isamatch:<chart version> (`helm install oci://...`), with
// Helm's own registry client and the Docker config's credentials, and
// returns the reference by digest.
func pushChart(r *registry, o options, tgz []byte, chartVersion string) (string, error) {
	opts := []helmregistry.ClientOption{helmregistry.ClientOptHTTPClient(&http.Client{Transport: r.transport})}
	if r.insecure {
		opts = append(opts, helmregistry.ClientOptPlainHTTP())
	}
	c, err := helmregistry.NewClient(opts...)
	if err != nil {
		return "", fmt.Errorf("helm registry client: %w", err)
	}
	ref := o.Repo + "/charts/isamatch:" + chartVersion
	res, err := c.Push(tgz, ref, helmregistry.PushOptCreationTime(o.Epoch.Format("2006-01-02T15:04:05Z")))
	if err != nil {
		return "", fmt.Errorf("push the chart to %s: %w", ref, err)
	}
	return ref + "@" + res.Manifest.Digest, nil
}
