package imageisa

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// checkCounts bounds the section and program header counts of a whole ELF
// file before debug/elf allocates a record for each and reads every
// section's name: 65535 sections in 4 MiB cost it seconds of CPU. With
// more than 0xff00 sections e_shnum is 0 and the count is section 0's
// sh_size (ELF gABI, "Extended Section Numbering"); that is read too.
func checkCounts(data []byte) error {
	if len(data) < 64 || (elf.Class(data[elf.EI_CLASS]) != elf.ELFCLASS32 && elf.Class(data[elf.EI_CLASS]) != elf.ELFCLASS64) {
		return nil // debug/elf reports the header
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(data[elf.EI_DATA]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	var shoff, shnum, phnum, shsize uint64
	if elf.Class(data[elf.EI_CLASS]) == elf.ELFCLASS64 {
		shoff, phnum, shnum = bo.Uint64(data[40:]), uint64(bo.Uint16(data[56:])), uint64(bo.Uint16(data[60:]))
		if shnum == 0 && shoff > 0 && shoff <= uint64(len(data)) && uint64(len(data))-shoff >= 40 {
			shsize = bo.Uint64(data[shoff+32:])
		}
	} else {
		shoff, phnum, shnum = uint64(bo.Uint32(data[32:])), uint64(bo.Uint16(data[44:])), uint64(bo.Uint16(data[48:]))
		if shnum == 0 && shoff > 0 && shoff <= uint64(len(data)) && uint64(len(data))-shoff >= 24 {
			shsize = uint64(bo.Uint32(data[shoff+20:]))
		}
	}
	if shnum == 0 {
		shnum = shsize
	}
	if shnum > maxSections {
		return fmt.Errorf("%w: %d section headers, limit %d", ErrMalformed, shnum, maxSections)
	}
	if phnum > maxProgs {
		return fmt.Errorf("%w: %d program headers, limit %d", ErrMalformed, phnum, maxProgs)
	}
	return nil
}
