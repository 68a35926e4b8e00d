package imageisa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Errors Infer returns, for errors.Is. Each is wrapped with the path or value
// it concerns.
var (
	// ErrNoEntrypoint: the config has neither Entrypoint nor Cmd.
	ErrNoEntrypoint = errors.New("image config has no entrypoint or cmd")
	// ErrNotFound: the entrypoint does not exist in the image's layers (or
	// a path component is not a directory).
	ErrNotFound = errors.New("entrypoint not found in the image")
	// ErrNotELF: the entrypoint is a script or some other non-ELF file.
	ErrNotELF = errors.New("entrypoint is not an ELF file")
	// ErrMalformed: the ELF file or its attributes are malformed.
	ErrMalformed = errors.New("malformed ELF file")
	// ErrArchMismatch: the ELF machine is not the config's architecture.
	ErrArchMismatch = errors.New("entrypoint architecture differs from the image's")
	// ErrLimit: a limit (bytes, entries, symlink hops) was reached first.
	ErrLimit = errors.New("image scan limit reached")
)

// Limits bound the work of one Infer call. Zero fields take the defaults of
// [DefaultLimits].
type Limits struct {
	// MaxBytes caps the uncompressed layer bytes read per image, across
	// every layer and every re-read (default 64 MiB).
	MaxBytes int64
	// Timeout caps the wall time per image (default 10 s).
	Timeout time.Duration
	// MaxELFInMemory is the largest ELF file read whole into memory and
	// parsed by section names; larger files are streamed and only their
	// program headers' segments are kept (default 8 MiB).
	MaxELFInMemory int64
	// MaxSection caps an attributes section or note segment (default 64 KiB).
	MaxSection int64
	// MaxEntries caps the tar entries indexed per image (default 200000).
	MaxEntries int
	// MaxSymlinks caps symlink hops while resolving a path (default 40, as
	// Linux's MAXSYMLINKS).
	MaxSymlinks int
	// MaxMemory caps the memory one scan holds by estimate: its tar
	// indexes (names and link targets plus a fixed cost per entry) and an
	// ELF file read whole, counted twice (default 16 MiB).
	MaxMemory int64
}

// DefaultLimits are the limits a zero Limits means.
var DefaultLimits = Limits{
	MaxBytes:       64 << 20,
	Timeout:        10 * time.Second,
	MaxELFInMemory: 8 << 20,
	MaxSection:     64 << 10,
	MaxEntries:     200000,
	MaxSymlinks:    40,
	MaxMemory:      16 << 20,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxBytes > 0 {
		d.MaxBytes = l.MaxBytes
	}
	if l.Timeout > 0 {
		d.Timeout = l.Timeout
	}
	if l.MaxELFInMemory > 0 {
		d.MaxELFInMemory = l.MaxELFInMemory
	}
	if l.MaxSection > 0 {
		d.MaxSection = l.MaxSection
	}
	if l.MaxEntries > 0 {
		d.MaxEntries = l.MaxEntries
	}
	if l.MaxSymlinks > 0 {
		d.MaxSymlinks = l.MaxSymlinks
	}
	if l.MaxMemory > 0 {
		d.MaxMemory = l.MaxMemory
	}
	return d
}

// Result is what the entrypoint binary of one platform image says.
type Result struct {
	// Entrypoint is the program the config names (argv[0], or the program a
	// shell-form command runs), as written there.
	Entrypoint string
	// Path is the file that was read, resolved through PATH and symlinks.
	Path string
	// Arch is the architecture of the ELF header.
	Arch isa.Arch
	// ISA is the requirement the binary records, nil when it records none
	// (no .riscv.attributes, no ISA_1_NEEDED, or arm64): the caller then
	// treats the platform as it would without inference.
	ISA *isa.ISA
	// Raw is the recorded value: the Tag_RISCV_arch string, or
	// "x86-64-vN" from ISA_1_NEEDED; "" when none.
	Raw string
	// From names the ELF part read: ".riscv.attributes",
	// "PT_RISCV_ATTRIBUTES", ".note.gnu.property", "PT_GNU_PROPERTY",
	// "PT_NOTE"; "" when none.
	From string
	// Note explains a choice the caller may want to show, e.g. that the
	// shell of a shell-form command was read, or that the x86 ISA_1_USED
	// property was present but not used.
	Note string
	// Work is what the scan cost.
	Work Work
}

// Source is the short provenance for a decision: "ELF of /usr/bin/app".
func (r Result) Source() string { return "ELF of " + r.Path }

// Work counts what one Infer call read.
type Work struct {
	// Layers is the number of layer streams opened (a layer re-read to
	// fetch a file passed over earlier counts twice).
	Layers int
	// Bytes is the uncompressed layer bytes read.
	Bytes int64
	// Entries is the number of tar entries seen.
	Entries int
	// FileBytes is the file content handed to the ELF reader, as tar
	// gives it: the holes of sparse files count by their size.
	FileBytes int64
	// Drained is the bytes read past what the scan needed, to the end of
	// layer streams, so that their digests are checked.
	Drained int64
	// Unverified counts the layer streams left before their end (the
	// drain's budget or the time limit ran out): their digests were not
	// checked.
	Unverified int
}

// Infer finds the entrypoint binary of img (one platform image, not an
// index), reads its ELF header and ISA records, and returns what it needs.
// It reads layers top first, stops as soon as the file is found, and stays
// within lim. Errors wrap one of the Err* values; a Result with a nil ISA
// and a nil error means the binary says nothing. The Work of a failed call is
// in the returned Result too.
func Infer(ctx context.Context, img v1.Image, lim Limits) (Result, error) {
	return infer(ctx, img, lim, false)
}

// maxLayers caps the layers of an image read: each is a stream, and a
// lookup walks every one indexed. Container runtimes refuse images past
// about 125 layers (overlayfs stacking).
const maxLayers = 256

// infer is Infer; with verify, every layer stream is read to its end so
// that go-containerregistry checks its digest (scanner.drain).
func infer(ctx context.Context, img v1.Image, lim Limits, verify bool) (Result, error) {
	lim = lim.withDefaults()
	ctx, cancel := context.WithTimeoutCause(ctx, lim.Timeout, errTimeout)
	defer cancel()
	cf, err := img.ConfigFile()
	if err != nil {
		return Result{}, fmt.Errorf("read image config: %w", err)
	}
	if cf == nil {
		return Result{}, fmt.Errorf("read image config: %w", ErrNoEntrypoint)
	}
	progs, err := programs(cf.Config)
	if err != nil {
		return Result{}, err
	}
	layers, err := img.Layers()
	if err != nil {
		return Result{}, fmt.Errorf("list layers: %w", err)
	}
	if len(layers) > maxLayers {
		return Result{}, fmt.Errorf("%w: %d layers, limit %d", ErrLimit, len(layers), maxLayers)
	}
	sc := newScanner(ctx, layers, lim, verify)
	var res Result
	for k, p := range progs {
		res = Result{Entrypoint: p.name, Note: p.note}
		var info elfInfo
		res.Path, info, err = sc.find(p.candidates)
		res.Work = sc.work
		var ne *notELFError
		if errors.As(err, &ne) && ne.Script != "" && k+1 < len(progs) {
			// A wrapper script (docker-entrypoint.sh "$@"): try the
			// program it is given.
			continue
		}
		if err != nil {
			return res, fmt.Errorf("entrypoint %q: %w", sanitize(p.name), err)
		}
		return finish(res, info, cf.Architecture)
	}
	return res, fmt.Errorf("entrypoint %q: %w", sanitize(progs[len(progs)-1].name), err)
}

// finish turns the ELF records into the Result's requirement.
func finish(res Result, info elfInfo, configArch string) (Result, error) {
	res.Arch = info.Arch
	if info.Arch == "" {
		return res, fmt.Errorf("%s: %w: ELF machine %s (%s) is not modelled", res.Path, ErrArchMismatch, info.Machine, info.Class)
	}
	if configArch != "" && normalArch(configArch) != info.Arch {
		return res, fmt.Errorf("%s: %w: ELF is %s, config says %s", res.Path, ErrArchMismatch, info.Arch, sanitize(configArch))
	}
	switch info.Arch {
	case isa.RISCV64, isa.RISCV32:
		if info.RISCVArch == "" {
			return res, nil
		}
		i, err := isa.ParseRISCVAttribute(info.RISCVArch)
		if err != nil {
			return res, fmt.Errorf("%s: %w: Tag_RISCV_arch: %w", res.Path, ErrMalformed, err)
		}
		if i.Arch != info.Arch {
			return res, fmt.Errorf("%s: %w: Tag_RISCV_arch %q in a %s file", res.Path, ErrMalformed, sanitize(info.RISCVArch), info.Class)
		}
		res.ISA, res.Raw, res.From = &i, info.RISCVArch, info.From
	case isa.AMD64:
		if info.X86.HasUsed {
			res.Note = joinNote(res.Note, fmt.Sprintf("ISA_1_USED x86-64-v%d ignored (instructions assembled, not a requirement)", max(1, x86Level(info.X86.Used))))
		}
		lvl := x86Level(info.X86.Needed)
		if !info.X86.HasNeeded || lvl == 0 {
			return res, nil
		}
		raw := "x86-64"
		if lvl > 1 {
			raw = fmt.Sprintf("x86-64-v%d", lvl)
		}
		i, err := isa.Parse(raw)
		if err != nil {
			return res, fmt.Errorf("%s: parse %s: %w", res.Path, raw, err)
		}
		res.ISA, res.Raw, res.From = &i, raw, info.From
	}
	return res, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// normalArch maps a config's architecture to isamatch's names.
func normalArch(a string) isa.Arch {
	switch a {
	case "x86_64", "x86-64":
		return isa.AMD64
	case "aarch64":
		return isa.ARM64
	}
	return isa.Arch(a)
}

// sanitize bounds and cleans a value taken from an image before it goes
// into an error or a note.
func sanitize(s string) string {
	const max = 256
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
