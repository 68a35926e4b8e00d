package imageisa

import (
	"context"
	"debug/elf"
	"errors"
	"runtime"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// hostileImage is one image built to exhaust the process that reads it.
type hostileImage struct {
	name string
	img  func(t testing.TB) v1.Image
	want error
}

// hostileImages are the images of TestScanCostBounded and
// TestManyHostileScansBounded: each costs a naive reader gigabytes of
// allocation or minutes of CPU from a layer of a few kilobytes.
var hostileImages = []hostileImage{
	{
		name: "PT_NOTE headers each naming the head",
		img: func(t testing.TB) v1.Image {
			return image(t, "amd64", v1.Config{Entrypoint: []string{"/app"}}, layer(t, reg("app", manyNotesELF(1100))))
		},
		want: ErrMalformed,
	},
	{
		name: "path 2000 directories deep",
		img: func(t testing.TB) v1.Image {
			p := deepPath(2000)
			var files []file
			for d := len("/a"); d < len(p)-len("/app"); d += len("/a") {
				files = append(files, dir(p[1:d]))
			}
			files = append(files, reg(p[1:], fixture(t, "amd64-v3")))
			return image(t, "amd64", v1.Config{Entrypoint: []string{p}}, layer(t, files...))
		},
		want: ErrLimit,
	},
	{
		name: "sparse file of 256 GiB",
		img: func(t testing.TB) v1.Image {
			const size = 256 << 30
			head := append(elf64(1, 0, 0, 0), prog64(elf.PT_NOTE, size-4096, 4096)...)
			return image(t, "amd64", v1.Config{Entrypoint: []string{"/app"}}, rawLayer(t, sparseTar("app", size, head, make([]byte, 4096))))
		},
		want: ErrLimit,
	},
	{
		name: "65000 .note.gnu.property sections",
		img: func(t testing.TB) v1.Image {
			return image(t, "amd64", v1.Config{Entrypoint: []string{"/app"}}, layer(t, reg("app", manySectionsELF(65000))))
		},
		want: ErrMalformed,
	},
}

// TestScanCostBounded serves each hostile image from an in-process
// registry and reads it with a 1 s time limit: the read ends in the
// expected error (not the time limit), allocates at most 32 MiB, and returns within 30 s (a
// bound far past the time limit, only so that a runaway read fails the
// test instead of hanging it).
func TestScanCostBounded(t *testing.T) {
	const maxAlloc = 32 << 20
	for _, tc := range hostileImages {
		t.Run(tc.name, func(t *testing.T) {
			rimg, _ := servedImage(t, tc.img(t))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			type outcome struct {
				r   Result
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				r, err := Infer(context.WithoutCancel(t.Context()), rimg, Limits{Timeout: time.Second})
				done <- outcome{r, err}
			}()
			var o outcome
			select {
			case o = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("read still running 30 s into a 1 s time limit")
			}
			runtime.ReadMemStats(&after)
			// The limit reached must be the one for the shape, long before
			// the time limit: CPU spent until then is spent for nothing.
			if !errors.Is(o.err, tc.want) || errors.Is(o.err, errTimeout) {
				t.Errorf("Infer: %s, %v; want %v", Outcome(o.r, o.err), o.err, tc.want)
			}
			if a := after.TotalAlloc - before.TotalAlloc; a > maxAlloc {
				t.Errorf("allocated %d MiB, limit %d MiB", a>>20, maxAlloc>>20)
			}
		})
	}
}
