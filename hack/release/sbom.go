package main

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdx/v2/common"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// platformBinary is the binary of one platform's image.
type platformBinary struct {
	Platform v1.Platform
	Digest   v1.Hash
	Binary   []byte
}

// sbomFor is the SPDX 2.3 document of one image index: the index (what the
// document describes) contains one package per platform, the binary, with
// its SHA-256 and its Go build settings; each binary depends on the Go
// toolchain's standard library and on every module its build information
// lists (debug/buildinfo: the modules actually linked, at the version and
// go.sum hash built), each with a pkg:golang purl. The time is o.Epoch, so
// the same release gives the same document.
func sbomFor(o options, app, repo string, index v1.Hash, bins []platformBinary) ([]byte, error) {
	imageID := common.ElementID("Image-" + app)
	doc := &spdx.Document{
		SPDXVersion:       spdx.Version,
		DataLicense:       spdx.DataLicense,
		SPDXIdentifier:    "DOCUMENT",
		DocumentName:      repo + ":" + o.Version,
		DocumentNamespace: "https://github.com/isamatch/isamatch/spdx/" + app + "/" + o.Version + "/" + index.Hex,
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: "isamatch-hack-release-" + o.Version}},
			Created:  o.Epoch.Format("2006-01-02T15:04:05Z"),
		},
		Packages: []*spdx.Package{{
			PackageName:             repo,
			PackageSPDXIdentifier:   imageID,
			PackageVersion:          o.Version,
			PackageDownloadLocation: "NOASSERTION",
			PackageChecksums:        []common.Checksum{{Algorithm: common.SHA256, Value: index.Hex}},
			PackageExternalReferences: []*spdx.PackageExternalReference{{
				Category: "PACKAGE-MANAGER", RefType: "purl",
				Locator: "pkg:oci/" + app + "@" + index.String() + "?repository_url=" + repo + "&tag=" + o.Version,
			}},
			PrimaryPackagePurpose: "CONTAINER",
		}},
		Relationships: []*spdx.Relationship{{
			RefA:         common.MakeDocElementID("", "DOCUMENT"),
			RefB:         common.MakeDocElementID("", string(imageID)),
			Relationship: common.TypeRelationshipDescribe,
		}},
	}
	modules := map[string]*spdx.Package{}
	for _, b := range bins {
		info, err := buildinfo.Read(bytes.NewReader(b.Binary))
		if err != nil {
			return nil, fmt.Errorf("Go build information of /%s for %s: %w", app, b.Platform, err)
		}
		sum := sha256.Sum256(b.Binary)
		binID := common.ElementID("Binary-" + app + "-" + spdxID(b.Platform.String()))
		doc.Packages = append(doc.Packages, &spdx.Package{
			PackageName:             "/" + app + " (" + b.Platform.String() + ")",
			PackageSPDXIdentifier:   binID,
			PackageVersion:          info.Main.Version,
			PackageFileName:         "/" + app,
			PackageDownloadLocation: "NOASSERTION",
			PackageChecksums:        []common.Checksum{{Algorithm: common.SHA256, Value: hex.EncodeToString(sum[:])}},
			PackageSourceInfo:       "built by " + info.GoVersion + " from " + info.Path + " (" + info.Main.Path + "); settings: " + settings(info),
			PrimaryPackagePurpose:   "APPLICATION",
			PackageComment:          "image " + b.Digest.String(),
		})
		doc.Relationships = append(doc.Relationships, &spdx.Relationship{
			RefA:         common.MakeDocElementID("", string(imageID)),
			RefB:         common.MakeDocElementID("", string(binID)),
			Relationship: common.TypeRelationshipContains,
		})
		deps := append([]*debug.Module{{Path: "stdlib", Version: info.GoVersion}}, info.Deps...)
		for _, m := range deps {
			if m.Replace != nil {
				m = m.Replace
			}
			key := m.Path + "@" + m.Version
			pkg, ok := modules[key]
			if !ok {
				pkg = modulePackage(m)
				modules[key] = pkg
			}
			doc.Relationships = append(doc.Relationships, &spdx.Relationship{
				RefA:         common.MakeDocElementID("", string(binID)),
				RefB:         common.MakeDocElementID("", string(pkg.PackageSPDXIdentifier)),
				Relationship: common.TypeRelationshipDependsOn,
			})
		}
	}
	keys := make([]string, 0, len(modules))
	for k := range modules {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		doc.Packages = append(doc.Packages, modules[k])
	}
	var out bytes.Buffer
	if err := spdxjson.Write(doc, &out, spdxjson.Indent("  ")); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// modulePackage is the SPDX package of one Go module a binary links.
func modulePackage(m *debug.Module) *spdx.Package {
	purl := "pkg:golang/" + m.Path + "@" + m.Version
	if m.Path == "stdlib" {
		purl = "pkg:golang/stdlib@" + strings.TrimPrefix(m.Version, "go")
	}
	p := &spdx.Package{
		PackageName:             m.Path,
		PackageSPDXIdentifier:   common.ElementID("Go-" + spdxID(m.Path+"@"+m.Version)),
		PackageVersion:          m.Version,
		PackageDownloadLocation: "NOASSERTION",
		PackageExternalReferences: []*spdx.PackageExternalReference{{
			Category: "PACKAGE-MANAGER", RefType: "purl", Locator: purl,
		}},
		PrimaryPackagePurpose: "LIBRARY",
	}
	if m.Sum != "" {
		// go.sum's h1: hash (a SHA-256 of the module's file list), which
		// SPDX has no checksum algorithm for.
		p.PackageComment = "go.sum " + m.Sum
	}
	return p
}

// settings are the build settings that make the binary what it is: the
// architecture level, the flags and the source revision.
func settings(info *buildinfo.BuildInfo) string {
	var s []string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GORISCV64", "CGO_ENABLED", "-trimpath", "-ldflags", "-tags", "vcs.revision", "vcs.modified":
			s = append(s, kv.Key+"="+kv.Value)
		}
	}
	return strings.Join(s, " ")
}

// spdxID turns s into the characters an SPDX identifier may hold
// (letters, digits, '.' and '-').
func spdxID(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '-'
	}, s)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
