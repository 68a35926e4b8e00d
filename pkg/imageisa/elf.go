package imageisa

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Section and segment types debug/elf does not name.
const (
	shtRISCVAttributes = elf.SectionType(0x70000003)
	ptRISCVAttributes  = elf.ProgType(0x70000003)
	ptGNUProperty      = elf.ProgType(0x6474e553)
	// elfHeadBytes is how much of a large ELF file is kept to find its
	// program headers and the notes near the start.
	elfHeadBytes = 64 << 10
	// maxKeptSegments caps the segments a streamed file keeps; linker
	// output has one PT_GNU_PROPERTY or PT_RISCV_ATTRIBUTES and a few
	// PT_NOTEs. Their total is capped by maxSection as one section is.
	maxKeptSegments = 16
	// maxSections and maxProgs cap the section and program headers of a
	// file parsed whole, checked before debug/elf reads them; executables
	// have tens of each.
	maxSections = 1024
	maxProgs    = 256
)

// elfInfo is what one ELF file says about the ISA it needs.
type elfInfo struct {
	Machine elf.Machine
	Class   elf.Class
	// Arch is the architecture of Machine and Class ("" when isamatch does
	// not model it, e.g. EM_386).
	Arch isa.Arch
	// RISCVArch is Tag_RISCV_arch of .riscv.attributes ("" when absent).
	RISCVArch string
	// X86 holds the ISA_1 properties of .note.gnu.property.
	X86 x86Note
	// From names where the requirement was read: ".riscv.attributes",
	// "PT_RISCV_ATTRIBUTES", ".note.gnu.property" or "PT_GNU_PROPERTY".
	From string
}

// notELFError says the entrypoint is not an ELF file; Script is the "#!"
// line when it is a script.
type notELFError struct{ Script string }

func (e *notELFError) Error() string {
	if e.Script != "" {
		return fmt.Sprintf("not an ELF file: a script (%s)", e.Script)
	}
	return "not an ELF file"
}

func (e *notELFError) Is(target error) bool { return target == ErrNotELF }

// readELF reads an ELF file of the given size from r. A file of at most
// inMemory bytes is read whole and parsed with debug/elf, sections by name
// first; a larger one is streamed: its head gives the program headers and
// only the PT_RISCV_ATTRIBUTES and PT_GNU_PROPERTY (or PT_NOTE) segments are
// kept, reading stops after the last of them. Segments and sections over
// maxSection bytes are an error.
func readELF(r io.Reader, size, inMemory, maxSection int64) (elfInfo, error) {
	if size <= inMemory {
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return elfInfo{}, fmt.Errorf("read ELF: %w", err)
		}
		if err := checkMagic(data); err != nil {
			return elfInfo{}, err
		}
		if err := checkCounts(data); err != nil {
			return elfInfo{}, err
		}
		return parseELFFile(data, maxSection)
	}
	return streamELF(r, size, maxSection)
}

func checkMagic(head []byte) error {
	if bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
		return nil
	}
	if bytes.HasPrefix(head, []byte("#!")) {
		line, _, _ := bytes.Cut(head, []byte("\n"))
		if len(line) > 128 {
			line = line[:128]
		}
		return &notELFError{Script: sanitize(string(line))}
	}
	return &notELFError{}
}

// parseELFFile parses a whole ELF file with debug/elf. debug/elf has had
// panics on hostile input; one is turned into an error here.
func parseELFFile(data []byte, maxSection int64) (info elfInfo, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: debug/elf: %v", ErrMalformed, p)
		}
	}()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return elfInfo{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	info = elfInfo{Machine: f.Machine, Class: f.Class, Arch: archOf(f.Machine, f.Class)}
	var attrs, notes []byte
	var attrFrom, noteFrom string
	for _, s := range f.Sections {
		switch {
		// The first of each is read: a file naming thousands must not
		// cost thousands of reads.
		case attrFrom == "" && (s.Type == shtRISCVAttributes || s.Name == ".riscv.attributes"):
			attrs, err = sectionData(s, maxSection)
			attrFrom = ".riscv.attributes"
		case noteFrom == "" && s.Name == ".note.gnu.property":
			notes, err = sectionData(s, maxSection)
			noteFrom = ".note.gnu.property"
		}
		if err != nil {
			return elfInfo{}, err
		}
	}
	for _, p := range f.Progs {
		switch {
		case p.Type == ptRISCVAttributes && attrs == nil:
			attrs, err = segmentData(p, maxSection)
			attrFrom = "PT_RISCV_ATTRIBUTES"
		case p.Type == ptGNUProperty && notes == nil:
			notes, err = segmentData(p, maxSection)
			noteFrom = "PT_GNU_PROPERTY"
		}
		if err != nil {
			return elfInfo{}, err
		}
	}
	return decide(info, f.ByteOrder, attrs, attrFrom, notes, noteFrom)
}

func sectionData(s *elf.Section, maxSection int64) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if s.Size > uint64(maxSection) {
		return nil, fmt.Errorf("%w: section %s is %d bytes, limit %d", ErrMalformed, s.Name, s.Size, maxSection)
	}
	b, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("%w: section %s: %w", ErrMalformed, s.Name, err)
	}
	return b, nil
}

func segmentData(p *elf.Prog, maxSection int64) ([]byte, error) {
	if p.Filesz == 0 {
		// objcopy -R leaves the segment of a removed section, empty.
		return nil, nil
	}
	if p.Filesz > uint64(maxSection) {
		return nil, fmt.Errorf("%w: segment %s is %d bytes, limit %d", ErrMalformed, p.Type, p.Filesz, maxSection)
	}
	b := make([]byte, p.Filesz)
	if _, err := io.ReadFull(p.Open(), b); err != nil {
		return nil, fmt.Errorf("%w: segment %s: %w", ErrMalformed, p.Type, err)
	}
	return b, nil
}

// decide parses the attribute and note payloads for the machine at hand.
func decide(info elfInfo, bo binary.ByteOrder, attrs []byte, attrFrom string, notes []byte, noteFrom string) (elfInfo, error) {
	switch info.Machine {
	case elf.EM_RISCV:
		if attrs == nil {
			return info, nil
		}
		a, err := parseRISCVAttributes(attrs, bo)
		if err != nil {
			return elfInfo{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		info.RISCVArch, info.From = a, attrFrom
	case elf.EM_X86_64:
		if notes == nil {
			return info, nil
		}
		align := 8
		if info.Class == elf.ELFCLASS32 {
			align = 4
		}
		n, err := parseGNUProperties(notes, bo, align)
		if err != nil {
			return elfInfo{}, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		info.X86, info.From = n, noteFrom
	}
	return info, nil
}

// archOf maps an ELF machine and class to an isamatch architecture.
func archOf(m elf.Machine, c elf.Class) isa.Arch {
	switch {
	case m == elf.EM_RISCV && c == elf.ELFCLASS64:
		return isa.RISCV64
	case m == elf.EM_RISCV && c == elf.ELFCLASS32:
		return isa.RISCV32
	case m == elf.EM_X86_64 && c == elf.ELFCLASS64:
		return isa.AMD64
	case m == elf.EM_AARCH64 && c == elf.ELFCLASS64:
		return isa.ARM64
	}
	return ""
}

// span is a byte range of the file to keep.
type span struct {
	off, n uint64
	typ    elf.ProgType
	data   []byte
}

// streamELF reads a large ELF file without holding it: the head gives the
// header and program headers, then only the wanted segments are kept.
func streamELF(r io.Reader, size, maxSection int64) (elfInfo, error) {
	head := make([]byte, min(size, elfHeadBytes))
	if _, err := io.ReadFull(r, head); err != nil {
		return elfInfo{}, fmt.Errorf("read ELF: %w", err)
	}
	if err := checkMagic(head); err != nil {
		return elfInfo{}, err
	}
	hdr, err := parseHeader(head)
	if err != nil {
		return elfInfo{}, err
	}
	info := elfInfo{Machine: hdr.machine, Class: hdr.class, Arch: archOf(hdr.machine, hdr.class)}
	var spans []span
	var kept uint64
	haveProp := slices.ContainsFunc(hdr.progs, func(p span) bool { return p.typ == ptGNUProperty })
	for _, p := range hdr.progs {
		want := p.typ == ptRISCVAttributes || p.typ == ptGNUProperty || (p.typ == elf.PT_NOTE && !haveProp)
		if !want || p.n == 0 {
			continue
		}
		if p.n > uint64(maxSection) {
			return elfInfo{}, fmt.Errorf("%w: segment %s is %d bytes, limit %d", ErrMalformed, p.typ, p.n, maxSection)
		}
		if p.off > uint64(size) || p.n > uint64(size)-p.off {
			return elfInfo{}, fmt.Errorf("%w: segment %s at %d+%d beyond the file (%d bytes)", ErrMalformed, p.typ, p.off, p.n, size)
		}
		// Bounded before anything is allocated: many headers naming the
		// same bytes would otherwise cost a copy each.
		kept += p.n
		if len(spans) == maxKeptSegments || kept > uint64(maxSection) {
			return elfInfo{}, fmt.Errorf("%w: more than %d segments or %d bytes of segments to keep (limit %d, %d)", ErrMalformed, len(spans), kept, maxKeptSegments, maxSection)
		}
		spans = append(spans, p)
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.off, b.off) })
	pos := uint64(len(head))
	for i := range spans {
		s := &spans[i]
		s.data = make([]byte, s.n)
		// The part inside the head is copied, the rest read from r.
		k := uint64(0)
		if s.off < pos {
			k = uint64(copy(s.data, head[min(s.off, uint64(len(head))):]))
		}
		if k == s.n {
			continue
		}
		start := s.off + k
		if start > pos {
			if _, err := io.CopyN(io.Discard, r, int64(start-pos)); err != nil {
				return elfInfo{}, fmt.Errorf("read ELF: %w", err)
			}
			pos = start
		}
		// Overlapping segments: what was already consumed cannot be read
		// again; such a layout does not occur in linker output.
		if start < pos {
			return elfInfo{}, fmt.Errorf("%w: overlapping segments past the first %d bytes", ErrMalformed, elfHeadBytes)
		}
		if _, err := io.ReadFull(r, s.data[k:]); err != nil {
			return elfInfo{}, fmt.Errorf("read ELF: %w", err)
		}
		pos += s.n - k
	}
	var attrs, notes []byte
	var attrFrom, noteFrom string
	for _, s := range spans {
		switch s.typ {
		case ptRISCVAttributes:
			attrs, attrFrom = s.data, "PT_RISCV_ATTRIBUTES"
		case ptGNUProperty:
			notes, noteFrom = s.data, "PT_GNU_PROPERTY"
		case elf.PT_NOTE:
			notes, noteFrom = append(notes, s.data...), "PT_NOTE"
		}
	}
	return decide(info, hdr.bo, attrs, attrFrom, notes, noteFrom)
}

type elfHeader struct {
	class   elf.Class
	machine elf.Machine
	bo      binary.ByteOrder
	progs   []span
}

// parseHeader reads the ELF header and program headers from the head of a
// file; program headers past the head are an error.
func parseHeader(head []byte) (elfHeader, error) {
	if len(head) < elf.EI_NIDENT {
		return elfHeader{}, fmt.Errorf("%w: %d bytes", ErrMalformed, len(head))
	}
	var h elfHeader
	h.class = elf.Class(head[elf.EI_CLASS])
	switch elf.Data(head[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		h.bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		h.bo = binary.BigEndian
	default:
		return elfHeader{}, fmt.Errorf("%w: data encoding %d", ErrMalformed, head[elf.EI_DATA])
	}
	var phoff uint64
	var phentsize, phnum, want uint64
	rd := bytes.NewReader(head)
	switch h.class {
	case elf.ELFCLASS64:
		var eh elf.Header64
		if err := binary.Read(rd, h.bo, &eh); err != nil {
			return elfHeader{}, fmt.Errorf("%w: header: %w", ErrMalformed, err)
		}
		h.machine, phoff, phentsize, phnum = elf.Machine(eh.Machine), eh.Phoff, uint64(eh.Phentsize), uint64(eh.Phnum)
		want = uint64(binary.Size(elf.Prog64{}))
	case elf.ELFCLASS32:
		var eh elf.Header32
		if err := binary.Read(rd, h.bo, &eh); err != nil {
			return elfHeader{}, fmt.Errorf("%w: header: %w", ErrMalformed, err)
		}
		h.machine, phoff, phentsize, phnum = elf.Machine(eh.Machine), uint64(eh.Phoff), uint64(eh.Phentsize), uint64(eh.Phnum)
		want = uint64(binary.Size(elf.Prog32{}))
	default:
		return elfHeader{}, fmt.Errorf("%w: class %d", ErrMalformed, head[elf.EI_CLASS])
	}
	if phnum == 0 {
		return h, nil
	}
	if phentsize < want {
		return elfHeader{}, fmt.Errorf("%w: program header entry size %d, want %d", ErrMalformed, phentsize, want)
	}
	// phnum and phentsize are 16-bit, so the product cannot overflow.
	if phoff > uint64(len(head)) || phnum*phentsize > uint64(len(head))-phoff {
		return elfHeader{}, fmt.Errorf("%w: program headers at %d+%d beyond the first %d bytes", ErrMalformed, phoff, phnum*phentsize, len(head))
	}
	for i := range phnum {
		b := head[phoff+i*phentsize:]
		var p span
		if h.class == elf.ELFCLASS64 {
			var ph elf.Prog64
			_ = binary.Read(bytes.NewReader(b), h.bo, &ph)
			p = span{off: ph.Off, n: ph.Filesz, typ: elf.ProgType(ph.Type)}
		} else {
			var ph elf.Prog32
			_ = binary.Read(bytes.NewReader(b), h.bo, &ph)
			p = span{off: uint64(ph.Off), n: uint64(ph.Filesz), typ: elf.ProgType(ph.Type)}
		}
		h.progs = append(h.progs, p)
	}
	return h, nil
}
