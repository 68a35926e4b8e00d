package imageisa

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"testing"
)

// attrSection builds a .riscv.attributes payload around one Tag_File list.
func attrSection(attrs []byte) []byte {
	le := binary.LittleEndian
	sub := []byte{attrTagFile, 0, 0, 0, 0}
	sub = append(sub, attrs...)
	le.PutUint32(sub[1:], uint32(len(sub)))
	body := append([]byte("riscv\x00"), sub...)
	out := []byte{'A', 0, 0, 0, 0}
	out = append(out, body...)
	le.PutUint32(out[1:], uint32(4+len(body)))
	return out
}

func TestParseRISCVAttributes(t *testing.T) {
	arch := append([]byte{attrTagRISCVArch}, "rv64i2p1_m2p0\x00"...)
	ok := attrSection(append([]byte{4, 16}, arch...)) // Tag_RISCV_stack_align=16, then the arch
	cases := []struct {
		name    string
		data    []byte
		want    string
		wantErr bool
	}{
		{name: "stack_align then arch", data: ok, want: "rv64i2p1_m2p0"},
		{name: "no arch tag", data: attrSection([]byte{4, 16}), want: ""},
		{name: "other vendor skipped", data: append(append([]byte{'A'}, 11, 0, 0, 0, 'g', 'n', 'u', 0, 1, 2, 3)[:12], ok[1:]...), want: "rv64i2p1_m2p0"},
		{name: "empty", data: nil, wantErr: true},
		{name: "wrong format version", data: append([]byte{'B'}, ok[1:]...), wantErr: true},
		{name: "subsection length past the end", data: append([]byte{'A', 0xff, 0xff, 0xff, 0xff}, ok[5:]...), wantErr: true},
		{name: "subsection length zero", data: []byte{'A', 0, 0, 0, 0, 'r'}, wantErr: true},
		{name: "subsection length truncated", data: []byte{'A', 5, 0}, wantErr: true},
		{name: "vendor not terminated", data: []byte{'A', 9, 0, 0, 0, 'r', 'i', 's', 'c'}, wantErr: true},
		{name: "sub-subsection length past the end", data: attrSectionRaw([]byte{attrTagFile, 0xff, 0xff, 0xff, 0x7f}), wantErr: true},
		{name: "sub-subsection length shorter than its header", data: attrSectionRaw([]byte{attrTagFile, 2, 0, 0, 0}), wantErr: true},
		{name: "ULEB128 tag that never ends", data: attrSection(bytes.Repeat([]byte{0x80}, 64)), wantErr: true},
		{name: "ULEB128 value overflowing 64 bits", data: attrSection(append([]byte{4}, append(bytes.Repeat([]byte{0xff}, 9), 0x7f)...)), wantErr: true},
		{name: "arch string not terminated", data: attrSection([]byte{attrTagRISCVArch, 'r', 'v', '6', '4'}), wantErr: true},
		{name: "arch string over the limit", data: attrSection(append(append([]byte{attrTagRISCVArch}, bytes.Repeat([]byte{'x'}, maxArchStringLen+1)...), 0)), wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRISCVAttributes(tc.data, binary.LittleEndian)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("arch %q, want %q", got, tc.want)
			}
		})
	}
}

// attrSectionRaw wraps a raw riscv vendor body.
func attrSectionRaw(body []byte) []byte {
	b := append([]byte("riscv\x00"), body...)
	out := []byte{'A', 0, 0, 0, 0}
	out = append(out, b...)
	binary.LittleEndian.PutUint32(out[1:], uint32(4+len(b)))
	return out
}

func TestParseGNUProperties(t *testing.T) {
	le := binary.LittleEndian
	note := func(namesz, descsz uint32, name string, desc []byte) []byte {
		b := make([]byte, 12)
		le.PutUint32(b, namesz)
		le.PutUint32(b[4:], descsz)
		le.PutUint32(b[8:], ntGNUPropertyType0)
		b = append(b, name...)
		return append(b, desc...)
	}
	prop := func(typ, sz, val uint32) []byte {
		b := make([]byte, 16)
		le.PutUint32(b, typ)
		le.PutUint32(b[4:], sz)
		le.PutUint32(b[8:], val)
		return b
	}
	cases := []struct {
		name    string
		data    []byte
		want    x86Note
		wantErr bool
	}{
		{name: "needed v3", data: note(4, 16, "GNU\x00", prop(gnuPropertyX86ISA1Needed, 4, x86ISA1V3)), want: x86Note{Needed: x86ISA1V3, HasNeeded: true}},
		{name: "other owner skipped", data: note(4, 16, "XYZ\x00", prop(gnuPropertyX86ISA1Needed, 4, x86ISA1V3))},
		{name: "name size past the end", data: note(0xffffffff, 0, "GNU\x00", nil), wantErr: true},
		{name: "desc size past the end", data: note(4, 0xfffffff0, "GNU\x00", prop(gnuPropertyX86ISA1Needed, 4, 4)), wantErr: true},
		{name: "property size past the end", data: note(4, 16, "GNU\x00", prop(gnuPropertyX86ISA1Needed, 0xffffffff, 4)), wantErr: true},
		{name: "ISA_1 of the wrong size", data: note(4, 16, "GNU\x00", prop(gnuPropertyX86ISA1Needed, 8, 4)), wantErr: true},
		{name: "header truncated", data: []byte{4, 0, 0}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseGNUProperties(tc.data, le, 8)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// patch returns a copy of data with a little-endian uint64 at off.
func patch(data []byte, off int, v uint64) []byte {
	b := bytes.Clone(data)
	binary.LittleEndian.PutUint64(b[off:], v)
	return b
}

func TestReadELFHostile(t *testing.T) {
	good := fixture(t, "riscv64-rv64imfd")
	f, err := elf.NewFile(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	var shoff, phoff int
	for i, s := range f.Sections {
		if s.Name == ".riscv.attributes" {
			shoff = int(binary.LittleEndian.Uint64(good[0x28:])) + i*64 + 32 // sh_size
		}
	}
	for i, p := range f.Progs {
		if p.Type == ptRISCVAttributes {
			phoff = 64 + i*56 + 32 // p_filesz
		}
	}
	cases := []struct {
		name     string
		data     []byte
		inMemory int64
		want     error
	}{
		{name: "truncated header, whole", data: good[:30], inMemory: 1 << 20, want: ErrMalformed},
		{name: "truncated header, streamed", data: good[:30], want: ErrMalformed},
		{name: "truncated before the section headers", data: good[:200], inMemory: 1 << 20, want: ErrMalformed},
		{name: "huge section size", data: patch(good, shoff, 1<<62), inMemory: 1 << 20, want: ErrMalformed},
		{name: "section size just over the limit", data: patch(good, shoff, 64<<10+1), inMemory: 1 << 20, want: ErrMalformed},
		{name: "huge segment size, streamed", data: patch(good, phoff, 1<<62), want: ErrMalformed},
		{name: "segment past the end, streamed", data: patch(good, phoff, 60000), want: ErrMalformed},
		{name: "program headers past the head, streamed", data: patch(good, 0x20, 1<<40), want: ErrMalformed},
		{name: "empty file", data: []byte{}, inMemory: 1 << 20, want: ErrNotELF},
		{name: "a script", data: []byte("#!/bin/sh\necho hi\n"), inMemory: 1 << 20, want: ErrNotELF},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info, err := readELF(bytes.NewReader(tc.data), int64(len(tc.data)), tc.inMemory, DefaultLimits.MaxSection)
			if err == nil {
				_, err = finish(Result{Path: "/app"}, info, "")
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}
