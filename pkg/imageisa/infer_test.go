package imageisa

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

type inferWant struct {
	Path, Raw, Entrypoint string
	Layers                int // layer streams opened
	Err                   error
}

func TestInfer(t *testing.T) {
	imfd := fixture(t, "riscv64-rv64imfd")
	imfdv := fixture(t, "riscv64-rv64imfdv")
	gc := fixture(t, "riscv64-rv64gc")
	rawIMFD := "rv64i2p1_m2p0_f2p2_d2p2_zicsr2p0_zmmul1p0"
	rawIMFDV := "rv64i2p1_m2p0_f2p2_d2p2_v1p0_zicsr2p0_zmmul1p0_zve32f1p0_zve32x1p0_zve64d1p0_zve64f1p0_zve64x1p0_zvl128b1p0_zvl32b1p0_zvl64b1p0"
	rawGC := "rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_zicsr2p0_zifencei2p0_zmmul1p0"
	base := func(t *testing.T) v1.Layer { return debianLike(t, gc, 20, 1000) }
	cases := []struct {
		name   string
		cfg    v1.Config
		layers func(t *testing.T) []v1.Layer // bottom first
		lim    Limits
		want   inferWant
	}{{
		name: "absolute entrypoint in the top layer: the base is never opened",
		cfg:  v1.Config{Entrypoint: []string{"/usr/local/bin/app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, reg("usr/local/bin/app", imfd))}
		},
		want: inferWant{Path: "/usr/local/bin/app", Raw: rawIMFD, Entrypoint: "/usr/local/bin/app", Layers: 1},
	}, {
		name: "bare name through the config's PATH, Cmd without Entrypoint",
		cfg:  v1.Config{Cmd: []string{"app", "--serve"}, Env: []string{"HOME=/", "PATH=/opt/app/bin:/usr/bin"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, reg("opt/app/bin/app", imfdv), reg("usr/local/bin/app", imfd))}
		},
		want: inferWant{Path: "/opt/app/bin/app", Raw: rawIMFDV, Entrypoint: "app", Layers: 1},
	}, {
		name: "bare name with the default PATH",
		cfg:  v1.Config{Entrypoint: []string{"app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, reg("usr/local/bin/app", imfd))}
		},
		want: inferWant{Path: "/usr/local/bin/app", Raw: rawIMFD, Entrypoint: "app", Layers: 1},
	}, {
		name: "relative symlink in the top layer to a file in the base, through the base's /bin symlink",
		cfg:  v1.Config{Entrypoint: []string{"/usr/local/bin/app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, symlink("usr/local/bin/app", "../../../bin/sh"))}
		},
		want: inferWant{Path: "/usr/bin/dash", Raw: rawGC, Entrypoint: "/usr/local/bin/app", Layers: 2},
	}, {
		name: "absolute symlink across layers",
		cfg:  v1.Config{Entrypoint: []string{"/app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, reg("opt/v2/app", imfdv)), layer(t, symlink("app", "/opt/v2/app"))}
		},
		want: inferWant{Path: "/opt/v2/app", Raw: rawIMFDV, Entrypoint: "/app", Layers: 2},
	}, {
		name: "file streamed before the symlink that leads to it: its layer is read again",
		cfg:  v1.Config{Entrypoint: []string{"/app/run"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, reg("opt/real/run", imfd), symlink("app", "opt/real"))}
		},
		want: inferWant{Path: "/opt/real/run", Raw: rawIMFD, Entrypoint: "/app/run", Layers: 2},
	}, {
		name: "hard link in the same directory (busybox): read as it streamed past",
		cfg:  v1.Config{Entrypoint: []string{"/bin/app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, dir("bin"), reg("bin/busybox", imfdv), hardlink("bin/app", "bin/busybox"))}
		},
		want: inferWant{Path: "/bin/app", Raw: rawIMFDV, Entrypoint: "/bin/app", Layers: 1},
	}, {
		name: "hard link to another directory: the layer is read again",
		cfg:  v1.Config{Entrypoint: []string{"/bin/app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, reg("opt/app/real", imfdv), hardlink("bin/app", "opt/app/real"))}
		},
		want: inferWant{Path: "/bin/app", Raw: rawIMFDV, Entrypoint: "/bin/app", Layers: 2},
	}, {
		name: "an upper layer replaces the binary",
		cfg:  v1.Config{Entrypoint: []string{"/usr/bin/app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, reg("usr/bin/app", imfd)), layer(t, reg("usr/bin/app", imfdv))}
		},
		want: inferWant{Path: "/usr/bin/app", Raw: rawIMFDV, Entrypoint: "/usr/bin/app", Layers: 1},
	}, {
		name: "a whiteout hides the binary of a lower layer",
		cfg:  v1.Config{Entrypoint: []string{"/usr/bin/app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, reg("usr/bin/app", imfd)), layer(t, whiteout("usr/bin", "app"))}
		},
		want: inferWant{Entrypoint: "/usr/bin/app", Layers: 1, Err: ErrNotFound},
	}, {
		name: "a whited-out binary found again through PATH in a lower layer",
		cfg:  v1.Config{Entrypoint: []string{"app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, reg("usr/local/bin/app", imfd), reg("usr/bin/app", imfdv)), layer(t, whiteout("usr/local/bin", "app"))}
		},
		want: inferWant{Path: "/usr/bin/app", Raw: rawIMFDV, Entrypoint: "app", Layers: 2},
	}, {
		name: "an opaque directory hides the lower layer's contents",
		cfg:  v1.Config{Entrypoint: []string{"/opt/app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, reg("opt/app", imfd)), layer(t, opaque("opt"), reg("opt/other", imfdv))}
		},
		want: inferWant{Entrypoint: "/opt/app", Layers: 1, Err: ErrNotFound},
	}, {
		name: "an upper directory hides a lower /bin symlink",
		cfg:  v1.Config{Entrypoint: []string{"/bin/sh"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, dir("bin"), reg("bin/tool", imfd))}
		},
		want: inferWant{Entrypoint: "/bin/sh", Layers: 2, Err: ErrNotFound},
	}, {
		name: "shell form: the first word of the command",
		cfg:  v1.Config{Entrypoint: []string{"/bin/sh", "-c", "exec GOMAXPROCS=2 /srv/app --port 80"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, reg("srv/app", imfdv))}
		},
		want: inferWant{Path: "/srv/app", Raw: rawIMFDV, Entrypoint: "/srv/app", Layers: 1},
	}, {
		name: "shell form with a pipeline: the shell itself",
		cfg:  v1.Config{Cmd: []string{"/bin/sh", "-c", "$APP | tee log"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, reg("srv/app", imfdv))}
		},
		want: inferWant{Path: "/usr/bin/dash", Raw: rawGC, Entrypoint: "/bin/sh", Layers: 2},
	}, {
		name: "wrapper script: its argument is read",
		cfg:  v1.Config{Entrypoint: []string{"docker-entrypoint.sh"}, Cmd: []string{"server"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, script("usr/local/bin/docker-entrypoint.sh", "#!/bin/sh"), reg("usr/local/bin/server", imfd))}
		},
		want: inferWant{Path: "/usr/local/bin/server", Raw: rawIMFD, Entrypoint: "server", Layers: 2},
	}, {
		name: "a script with no program argument is not ELF",
		cfg:  v1.Config{Entrypoint: []string{"/entry.sh"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, script("entry.sh", "#!/bin/bash"))}
		},
		want: inferWant{Entrypoint: "/entry.sh", Path: "/entry.sh", Layers: 1, Err: ErrNotELF},
	}, {
		name: "binary without attributes: no requirement",
		cfg:  v1.Config{Entrypoint: []string{"/app"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, fixtureFile("app", "riscv64-noattr", t))}
		},
		want: inferWant{Path: "/app", Entrypoint: "/app", Layers: 1},
	}, {
		name: "entrypoint that does not exist",
		cfg:  v1.Config{Entrypoint: []string{"/nope"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{base(t), layer(t, reg("app", imfd))}
		},
		want: inferWant{Entrypoint: "/nope", Layers: 2, Err: ErrNotFound},
	}, {
		name: "no entrypoint and no cmd",
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, reg("app", imfd))}
		},
		want: inferWant{Err: ErrNoEntrypoint},
	}, {
		name: "symlink loop",
		cfg:  v1.Config{Entrypoint: []string{"/a"}},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, symlink("a", "b"), symlink("b", "/a"))}
		},
		want: inferWant{Entrypoint: "/a", Layers: 1, Err: ErrLimit},
	}, {
		name: "a layer over the byte cap (a tar bomb of zeros, small compressed)",
		cfg:  v1.Config{Entrypoint: []string{"/app"}},
		lim:  Limits{MaxBytes: 1 << 20},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, reg("app", imfd)), layer(t, zeros("bomb", 8<<20), reg("other", nil))}
		},
		want: inferWant{Entrypoint: "/app", Layers: 1, Err: ErrLimit},
	}, {
		name: "too many tar entries",
		cfg:  v1.Config{Entrypoint: []string{"/app"}},
		lim:  Limits{MaxEntries: 10},
		layers: func(t *testing.T) []v1.Layer {
			return []v1.Layer{layer(t, reg("app", imfd)), base(t)}
		},
		want: inferWant{Entrypoint: "/app", Layers: 1, Err: ErrLimit},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := image(t, "riscv64", tc.cfg, tc.layers(t)...)
			res, err := Infer(t.Context(), img, tc.lim)
			got := inferWant{Path: res.Path, Raw: res.Raw, Entrypoint: res.Entrypoint, Layers: res.Work.Layers}
			if err != nil {
				got.Err = tc.want.Err
				if !errors.Is(err, tc.want.Err) {
					t.Errorf("error %v, want %v", err, tc.want.Err)
				}
				t.Logf("error: %v", err)
			} else if tc.want.Err != nil {
				t.Errorf("no error, want %v", tc.want.Err)
			}
			// The very sentinel is wanted, not one wrapping it.
			if d := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b error) bool { return a == b })); d != "" { //nolint:errorlint // identity on purpose
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestInferArchMismatch(t *testing.T) {
	img := image(t, "amd64", v1.Config{Entrypoint: []string{"/app"}}, layer(t, fixtureFile("app", "riscv64-rv64imfd", t)))
	if _, err := Infer(t.Context(), img, Limits{}); !errors.Is(err, ErrArchMismatch) {
		t.Fatalf("error %v, want ErrArchMismatch", err)
	}
}

func TestInferX86(t *testing.T) {
	img := image(t, "amd64", v1.Config{Entrypoint: []string{"/app"}}, layer(t, fixtureFile("app", "amd64-v3-used", t)))
	res, err := Infer(t.Context(), img, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ISA == nil || res.ISA.Short() != "x86-64-v3" || res.Source() != "ELF of /app" {
		t.Fatalf("got ISA %v source %q, want x86-64-v3 from ELF of /app", res.ISA, res.Source())
	}
}
