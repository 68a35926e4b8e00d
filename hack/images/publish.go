package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// placeholderRepo is the image prefix config/ ships with.
const placeholderRepo = "ghcr.io/isamatch"

// refNameAnnotation names an index.json entry of an OCI image layout.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// result is one published image index.
type result struct {
	App       App
	Ref       name.Tag
	Digest    v1.Hash
	Platforms []platformDigest
}

type platformDigest struct {
	Platform string
	Digest   v1.Hash
}

// publisher sends an image index where the options say.
type publisher struct {
	opts      options
	transport http.RoundTripper
}

func newPublisher(o options) (*publisher, error) {
	p := &publisher{opts: o}
	if o.Push {
		t, err := newTransport(o.CA, o.Insecure)
		if err != nil {
			return nil, err
		}
		p.transport = t
	}
	return p, nil
}

// newTransport is remote.DefaultTransport trusting caFile too and, with
// insecure, any certificate.
func newTransport(caFile string, insecure bool) (http.RoundTripper, error) {
	base, ok := remote.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("remote.DefaultTransport is not an *http.Transport")
	}
	t := base.Clone()
	if caFile == "" && !insecure {
		return t, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("read --ca: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca %s holds no PEM certificate: pass the registry CA's certificate in PEM (-----BEGIN CERTIFICATE-----)", caFile)
		}
		tc.RootCAs = pool
	}
	// The user asked for it: a lab registry with a self-signed certificate.
	tc.InsecureSkipVerify = insecure //nolint:gosec
	t.TLSClientConfig = tc
	return t, nil
}

// publish pushes idx to its tag, writes it to the OCI layout, or does
// neither, and returns what a push gives.
func (p *publisher) publish(ctx context.Context, app App, idx v1.ImageIndex) (result, error) {
	ref, err := p.opts.tag(app)
	if err != nil {
		return result{}, fmt.Errorf("image reference for %s: %w", app.Name, err)
	}
	res, err := describe(app, ref, idx)
	if err != nil {
		return result{}, err
	}
	switch {
	case p.opts.Push:
		err = remote.WriteIndex(ref, idx,
			remote.WithContext(ctx),
			remote.WithAuthFromKeychain(authn.DefaultKeychain),
			remote.WithTransport(p.transport),
			remote.WithUserAgent("isamatch-hack-images"))
		if err != nil {
			return result{}, fmt.Errorf("push %s: %w", ref, err)
		}
	case p.opts.OCILayout != "":
		if err := writeLayout(p.opts.OCILayout, ref, idx); err != nil {
			return result{}, fmt.Errorf("write %s to the OCI layout %s: %w", ref, p.opts.OCILayout, err)
		}
	}
	return res, nil
}

func describe(app App, ref name.Tag, idx v1.ImageIndex) (result, error) {
	digest, err := idx.Digest()
	if err != nil {
		return result{}, fmt.Errorf("digest of %s: %w", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return result{}, fmt.Errorf("index of %s: %w", ref, err)
	}
	res := result{App: app, Ref: ref, Digest: digest}
	for _, d := range im.Manifests {
		res.Platforms = append(res.Platforms, platformDigest{Platform: d.Platform.String(), Digest: d.Digest})
	}
	return res, nil
}

// writeLayout adds idx to the OCI image layout at dir (created if
// missing) under the ref.name ref, replacing an earlier entry of that name.
func writeLayout(dir string, ref name.Tag, idx v1.ImageIndex) error {
	var lp layout.Path
	_, err := os.Stat(filepath.Join(dir, "index.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if lp, err = layout.Write(dir, empty.Index); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if lp, err = layout.FromPath(dir); err != nil {
			return err
		}
	}
	refName := ref.String()
	return lp.ReplaceIndex(idx, match.Name(refName),
		layout.WithAnnotations(map[string]string{refNameAnnotation: refName}))
}

// writeSummary prints each image's digests and a kustomize images: block
// that points config/ at them.
func writeSummary(w io.Writer, o options, results []result) {
	verb := "built (not pushed; --push or --oci-layout DIR to publish)"
	switch {
	case o.Push:
		verb = "pushed"
	case o.OCILayout != "":
		verb = "written to the OCI layout " + o.OCILayout
	}
	for _, r := range results {
		fmt.Fprintf(w, "%s %s@%s\n", verb, r.Ref, r.Digest)
		for _, p := range r.Platforms {
			fmt.Fprintf(w, "  %-14s %s\n", p.Platform, p.Digest)
		}
	}
	fmt.Fprintf(w, "\n# config/kustomization.yaml or an overlay that has config/ as a resource:\nimages:\n")
	for _, r := range results {
		fmt.Fprintf(w, "  - name: %s/%s\n    newName: %s\n    digest: %s\n",
			placeholderRepo, r.App.Name, o.Repo+"/"+r.App.Name, r.Digest)
	}
	fmt.Fprintf(w, "\n# or, in config/:\n")
	for _, r := range results {
		fmt.Fprintf(w, "#   kustomize edit set image %s/%s=%s@%s\n",
			placeholderRepo, r.App.Name, o.Repo+"/"+r.App.Name, r.Digest)
	}
}
