// Package imageisa infers the instruction set an image needs from its
// entrypoint binary. The entry point is [Infer] (one platform image, explicit
// [Limits]), or an [Inferrer] from [NewInferrer] that adds a [Cache] by image
// digest and [Metrics].
//
// # What is read
//
// The program is the config's Entrypoint[0], or Cmd[0] when there is no
// Entrypoint; a bare name is looked up in the config's PATH (the runtime's
// default PATH when the config sets none), a relative one under WorkingDir.
// A shell form (sh -c "cmd ...") reads the first word of the command when it
// is a plain word (after "exec" and VAR=value), else the shell. When the
// program is a script ("#!") and the next argument is not an option, that
// argument is read instead (docker-entrypoint.sh "$@").
//
// Layers are streamed top first (tar over the decompressed stream) and each
// one is indexed (names, kinds, link targets; no content) only until the
// path can be decided: symlinks (absolute, relative, ".." stopping at the
// root; at most MaxSymlinks hops), hard links, whiteouts (.wh.name) and
// opaque directories (.wh..wh..opq) are followed as overlayfs would merge
// the layers. The file's ELF records are read as its entry streams past; a
// file met before the symlink that leads to it, a hard link's target, or a
// file in a layer already read is fetched by streaming that layer again. For
// a bare name, the topmost layer holding it in any PATH directory wins, then
// PATH order (execvp would read every layer to be sure; this stops early).
//
// # ELF records
//
// The ELF header gives the machine and class (EM_RISCV, EM_X86_64,
// EM_AARCH64). RISC-V: Tag_RISCV_arch of .riscv.attributes (or the
// PT_RISCV_ATTRIBUTES segment) is parsed with [isa.ParseRISCVAttribute]. It
// is what the compiler and linker recorded: the union of the -march of every
// object linked, so a program linked with a libc built for rv64gc records at
// least rv64gc. x86-64: GNU_PROPERTY_X86_ISA_1_NEEDED of .note.gnu.property
// (or PT_GNU_PROPERTY), the level glibc's loader enforces, written by the
// linker's -z x86-64-vN; ISA_1_USED (the assembler's -mx86-used-note) is
// the level of the instructions assembled, including code behind runtime
// dispatch, and is dropped by the linker unless every input has it, so it is
// reported in [Result.Note] but never taken as a requirement. arm64 has no
// ISA note (GNU_PROPERTY_AARCH64_FEATURE_1_AND holds only BTI/PAC, which run
// as no-ops on older cores): the architecture alone is reported. A binary
// that records nothing gives a Result with a nil ISA.
//
// Files up to MaxELFInMemory are parsed whole with debug/elf, by section
// name; larger ones are streamed and only the segments their program headers
// name are kept, stopping after the last one. Every length in the attribute
// and note formats is checked against what remains: a malformed or hostile
// file is an [ErrMalformed] error, never a panic or an unbounded loop.
//
// # Limits
//
// Per image: MaxBytes of uncompressed layer data (64 MiB), Timeout (10 s),
// MaxEntries tar entries indexed (200000), MaxSection bytes per section
// (64 KiB). A limit reached is an [ErrLimit] error: the caller treats the
// image as it would without inference.
//
// # Caching
//
// Outcomes that are a property of the image are cached by image digest for
// good (content-addressed), least recently used evicted past
// Options.CacheBytes. A read by [Platforms.Infer] that fails for a passing
// reason (its own time limit, a registry or transport error) is remembered
// for Options.RetryAfter ([DefaultRetryAfter], one minute; at most 4096
// digests): until then [Platforms.Cached] answers an [ErrFailedRecently]
// error without reading, so callers go on without the image, and after it
// one read tries again. A cancelled context is never remembered.
package imageisa
