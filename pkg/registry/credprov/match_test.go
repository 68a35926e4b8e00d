package credprov

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
)

func TestImageMatches(t *testing.T) {
	tests := []struct {
		pattern, image string
		want           bool
	}{
		{"*.dkr.ecr.*.amazonaws.com", "123456789012.dkr.ecr.us-east-1.amazonaws.com/team/app", true},
		{"*.dkr.ecr.*.amazonaws.com", "123456789012.dkr.ecr.us-east-1.amazonaws.com.cn/app", false},
		{"*.dkr.ecr.*.amazonaws.com.cn", "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/app", true},
		{"*.azurecr.io", "contoso.azurecr.io/app", true},
		{"*.azurecr.io", "azurecr.io/app", false},
		{"gcr.io", "gcr.io/project/app", true},
		{"*.gcr.io", "gcr.io/project/app", false},
		{"*-docker.pkg.dev", "europe-west1-docker.pkg.dev/project/repo/app", true},
		{"*", "localhost/app", true},
		{"*", "registry.example/app", false},
		{"registry.example:5000", "registry.example/app", false},
		{"registry.example:5000", "registry.example:5000/app", true},
		{"registry.example", "registry.example:5000/app", false},
		{"registry.example/team", "registry.example/team/app", true},
		{"registry.example/team", "registry.example/other/app", false},
		{"registry.example/team/app", "registry.example/team", false},
		{"127.0.0.1:5000", "127.0.0.1:5000/private/app", true},
		{"[", "registry.example/app", false},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.image, func(t *testing.T) {
			if got := imageMatches(tc.pattern, tc.image); got != tc.want {
				t.Errorf("imageMatches(%q, %q) = %v, want %v", tc.pattern, tc.image, got, tc.want)
			}
		})
	}
}

func TestImageOfResource(t *testing.T) {
	tests := []struct{ ref, want string }{
		{"nginx", "docker.io/library/nginx"},
		{"index.docker.io/team/app:1", "docker.io/team/app"},
		{"gcr.io/project/app:v1", "gcr.io/project/app"},
		{"127.0.0.1:5000/private/app@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "127.0.0.1:5000/private/app"},
	}
	for _, tc := range tests {
		t.Run(tc.ref, func(t *testing.T) {
			ref, err := name.ParseReference(tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			if got := imageOfResource(ref.Context()); got != tc.want {
				t.Errorf("imageOfResource(%s) = %q, want %q", tc.ref, got, tc.want)
			}
		})
	}
}

func TestPickAuth(t *testing.T) {
	entries := func(keys ...string) []authEntry {
		var out []authEntry
		for _, k := range keys {
			out = append(out, authEntry{key: authKey(k), username: k})
		}
		return out
	}
	tests := []struct {
		name    string
		image   string
		entries []authEntry
		want    string // username of the chosen entry; "" means none
	}{
		{name: "most specific path first", image: "r.example/team/app",
			entries: entries("r.example", "r.example/team/app", "r.example/team"), want: "r.example/team/app"},
		{name: "path prefix", image: "r.example/team/other",
			entries: entries("r.example", "r.example/team/app", "r.example/team"), want: "r.example/team"},
		{name: "scheme and API prefix dropped", image: "r.example/app",
			entries: entries("https://r.example/v2/"), want: "https://r.example/v2/"},
		{name: "glob key", image: "eu.r.example/app", entries: entries("*.r.example"), want: "*.r.example"},
		{name: "no match", image: "other.example/app", entries: entries("r.example"), want: ""},
		{name: "docker hub under its index name", image: "docker.io/library/nginx",
			entries: entries("https://index.docker.io/v1/"), want: "https://index.docker.io/v1/"},
		{name: "index name is Docker Hub only", image: "r.example/library/nginx",
			entries: entries("https://index.docker.io/v1/"), want: ""},
		{name: "first provider wins a tie", image: "r.example/app",
			entries: []authEntry{{key: "r.example", username: "first"}, {key: "r.example", username: "second"}}, want: "first"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := pickAuth(tc.image, tc.entries)
			if diff := cmp.Diff(tc.want, got.username); diff != "" {
				t.Errorf("pickAuth(%q) (-want +got):\n%s", tc.image, diff)
			}
		})
	}
}
