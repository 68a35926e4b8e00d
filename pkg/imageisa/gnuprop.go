package imageisa

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// GNU property note constants (binutils include/elf/common.h and the x86-64
// psABI, "Program Property").
const (
	ntGNUPropertyType0 = 5
	// gnuPropertyX86ISA1Needed is the ISA level the object declares it needs
	// (linker -z x86-64-vN; OR-merged across inputs). glibc's loader refuses
	// to run a binary whose needed level the CPU lacks.
	gnuPropertyX86ISA1Needed = 0xc0008002
	// gnuPropertyX86ISA1Used is the ISA level of the instructions the
	// assembler saw (-mx86-used-note=yes); the linker drops it unless every
	// input has it. Read for information only (see x86Note).
	gnuPropertyX86ISA1Used = 0xc0010002
)

// x86 ISA_1 bits.
const (
	x86ISA1Baseline = 1 << iota
	x86ISA1V2
	x86ISA1V3
	x86ISA1V4
)

var errNote = errors.New("malformed ELF note")

// x86Note is what a .note.gnu.property section says about x86-64 levels.
type x86Note struct {
	// Needed and Used are the ISA_1 bitmasks; HasNeeded and HasUsed say
	// whether the property was present at all.
	Needed, Used       uint32
	HasNeeded, HasUsed bool
}

// x86Level turns an ISA_1 bitmask into the psABI level it requires: the
// highest bit set (1..4), or 0 for none.
func x86Level(mask uint32) int {
	switch {
	case mask&x86ISA1V4 != 0:
		return 4
	case mask&x86ISA1V3 != 0:
		return 3
	case mask&x86ISA1V2 != 0:
		return 2
	case mask&x86ISA1Baseline != 0:
		return 1
	}
	return 0
}

// parseGNUProperties reads the notes of a .note.gnu.property section (or a
// PT_GNU_PROPERTY / PT_NOTE segment) and collects the x86 ISA_1 properties.
// Notes of other owners or types are skipped by their sizes; every size is
// checked against what remains. align is 8 for ELFCLASS64, 4 for ELFCLASS32.
func parseGNUProperties(data []byte, bo binary.ByteOrder, align int) (x86Note, error) {
	var out x86Note
	for len(data) > 0 {
		if len(data) < 12 {
			return out, fmt.Errorf("%w: header truncated (%d bytes)", errNote, len(data))
		}
		namesz, descsz, typ := uint64(bo.Uint32(data)), uint64(bo.Uint32(data[4:])), bo.Uint32(data[8:])
		nameEnd := 12 + namesz
		descOff := alignUp(nameEnd, 4)
		descEnd := descOff + descsz
		if descEnd > uint64(len(data)) {
			return out, fmt.Errorf("%w: name %d + desc %d bytes, %d left", errNote, namesz, descsz, len(data)-12)
		}
		name := data[12:nameEnd]
		desc := data[descOff:descEnd]
		next := alignUp(descEnd, uint64(align))
		if next > uint64(len(data)) {
			next = uint64(len(data))
		}
		data = data[next:]
		if typ != ntGNUPropertyType0 || string(name) != "GNU\x00" {
			continue
		}
		if err := parseX86Props(desc, bo, align, &out); err != nil {
			return out, err
		}
	}
	return out, nil
}

func parseX86Props(desc []byte, bo binary.ByteOrder, align int, out *x86Note) error {
	for len(desc) > 0 {
		if len(desc) < 8 {
			return fmt.Errorf("%w: property header truncated", errNote)
		}
		typ, sz := bo.Uint32(desc), uint64(bo.Uint32(desc[4:]))
		if 8+sz > uint64(len(desc)) {
			return fmt.Errorf("%w: property 0x%x of %d bytes, %d left", errNote, typ, sz, len(desc)-8)
		}
		val := desc[8 : 8+sz]
		next := alignUp(8+sz, uint64(align))
		if next > uint64(len(desc)) {
			next = uint64(len(desc))
		}
		desc = desc[next:]
		switch typ {
		case gnuPropertyX86ISA1Needed, gnuPropertyX86ISA1Used:
			if sz != 4 {
				return fmt.Errorf("%w: ISA_1 property 0x%x has %d bytes, want 4", errNote, typ, sz)
			}
			if typ == gnuPropertyX86ISA1Needed {
				out.Needed, out.HasNeeded = out.Needed|bo.Uint32(val), true
			} else {
				out.Used, out.HasUsed = out.Used|bo.Uint32(val), true
			}
		}
	}
	return nil
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }
