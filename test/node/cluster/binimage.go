package cluster

import (
	"context"
	"fmt"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// PushBinary pushes to ref (a plain-HTTP registry) a one-layer image of
// this machine's architecture holding the static binary bin at path, its
// entrypoint. It returns the image's digest.
func PushBinary(ctx context.Context, bin, path, ref string) (v1.Hash, error) {
	tag, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("parse %s: %w", ref, err)
	}
	img, err := BinaryImage(bin, path, runtime.GOARCH)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
		return v1.Hash{}, fmt.Errorf("push %s: %w", ref, err)
	}
	return img.Digest()
}
