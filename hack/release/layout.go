package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// refNameAnnotation names an index.json entry of an OCI image layout (what
// hack/images writes).
const refNameAnnotation = "org.opencontainers.image.ref.name"

// requiredApps are the images a release must have; the rebalancer is the
// optional component's.
var requiredApps = []string{"labeler", "webhook"}

// maxBinary bounds a binary read from a layer: isamatch's are about 35 MiB.
const maxBinary = 256 << 20

// layoutImage is one image index of the layout: an app's image for every
// platform.
type layoutImage struct {
	App   string
	Index v1.ImageIndex
}

// readLayout returns the image indexes of o.OCILayout tagged for o.Repo and
// o.Version, in the layout's order.
func readLayout(o options) ([]layoutImage, error) {
	lp, err := layout.FromPath(o.OCILayout)
	if err != nil {
		return nil, fmt.Errorf("read the OCI layout %s (write it with go run ./hack/images --oci-layout %s): %w", o.OCILayout, o.OCILayout, err)
	}
	root, err := lp.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("read the OCI layout %s: %w", o.OCILayout, err)
	}
	im, err := root.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read the OCI layout %s: %w", o.OCILayout, err)
	}
	var out []layoutImage
	var seen []string
	for _, d := range im.Manifests {
		ref := d.Annotations[refNameAnnotation]
		seen = append(seen, ref)
		app, ok := strings.CutPrefix(ref, o.Repo+"/")
		if !ok {
			continue
		}
		if app, ok = strings.CutSuffix(app, ":"+o.Version); !ok || strings.ContainsAny(app, "/:") {
			continue
		}
		idx, err := root.ImageIndex(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("image index %s (%s) in %s: %w", ref, d.Digest, o.OCILayout, err)
		}
		out = append(out, layoutImage{App: app, Index: idx})
	}
	for _, app := range requiredApps {
		if !slices.ContainsFunc(out, func(i layoutImage) bool { return i.App == app }) {
			return nil, fmt.Errorf("the OCI layout %s has no %s/%s:%s (it has %q): build it with go run ./hack/images --repo %s --tag %s --oci-layout %s",
				o.OCILayout, o.Repo, app, o.Version, seen, o.Repo, o.Version, o.OCILayout)
		}
	}
	return out, nil
}

// binaryOf returns the file /<app> of img's layers (the last layer that has
// it wins, as in the running container).
func binaryOf(img v1.Image, app string) ([]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	var bin []byte
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, err
		}
		b, err := fileInTar(rc, app)
		rc.Close()
		if err != nil {
			return nil, err
		}
		if b != nil {
			bin = b
		}
	}
	if bin == nil {
		return nil, fmt.Errorf("no /%s in the image", app)
	}
	return bin, nil
}

// fileInTar returns the contents of the regular file name in the tar
// stream r, nil when it has none.
func fileInTar(r io.Reader, name string) ([]byte, error) {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read layer: %w", err)
		}
		if strings.TrimPrefix(h.Name, "/") != name || h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Size > maxBinary {
			return nil, fmt.Errorf("/%s is %d bytes, over the %d a binary of isamatch may be", name, h.Size, maxBinary)
		}
		return io.ReadAll(io.LimitReader(tr, maxBinary))
	}
}
