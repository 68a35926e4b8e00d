package imageisa

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BenchmarkInfer measures Infer on a realistic image held in memory: a
// Debian-like merged-/usr base of 2000 files (~32 MiB uncompressed), a
// config layer and the application layer. "top" finds the binary in the
// top layer; "base" follows /bin/sh into the base; "absent" reads every
// layer to the end (capped at the default 64 MiB). Figures are per image:
// layer bytes read and streams opened are reported as metrics.
func BenchmarkInfer(b *testing.B) {
	base := debianLike(b, fixture(b, "riscv64-rv64gc"), 2000, 16<<10)
	mid := layer(b, reg("etc/app.conf", []byte("x=1\n")))
	top := layer(b, reg("usr/local/bin/app", fixture(b, "riscv64-rv64gcv_zba_zbb")))
	for _, bc := range []struct{ name, entrypoint string }{
		{"top", "app"},
		{"base", "/bin/sh"},
		{"absent", "/nope"},
	} {
		img := image(b, "riscv64", v1.Config{Entrypoint: []string{bc.entrypoint}}, base, mid, top)
		b.Run(bc.name, func(b *testing.B) {
			var w Work
			for b.Loop() {
				res, _ := Infer(b.Context(), img, Limits{})
				w = res.Work
			}
			b.ReportMetric(float64(w.Bytes), "bytes/op-read")
			b.ReportMetric(float64(w.Layers), "streams/op")
		})
	}
}
