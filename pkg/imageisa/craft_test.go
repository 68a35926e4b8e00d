package imageisa

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Crafted hostile inputs: ELF files and tar streams that cost a reader far
// more than their size.

// elf64 returns an x86-64 ELF header of a file with phnum program headers
// at 64 and shnum section headers at shoff.
func elf64(phnum, shnum, shstrndx int, shoff uint64) []byte {
	le := binary.LittleEndian
	h := make([]byte, 64)
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	le.PutUint16(h[16:], uint16(elf.ET_EXEC))
	le.PutUint16(h[18:], uint16(elf.EM_X86_64))
	le.PutUint32(h[20:], 1)
	if phnum > 0 {
		le.PutUint64(h[32:], 64)
	}
	le.PutUint64(h[40:], shoff)
	le.PutUint16(h[52:], 64)
	le.PutUint16(h[54:], 56)
	le.PutUint16(h[56:], uint16(phnum))
	le.PutUint16(h[58:], 64)
	le.PutUint16(h[60:], uint16(shnum))
	le.PutUint16(h[62:], uint16(shstrndx))
	return h
}

// prog64 is one ELF64 program header.
func prog64(typ elf.ProgType, off, filesz uint64) []byte {
	le := binary.LittleEndian
	p := make([]byte, 56)
	le.PutUint32(p, uint32(typ))
	le.PutUint64(p[8:], off)
	le.PutUint64(p[32:], filesz)
	le.PutUint64(p[40:], filesz)
	return p
}

// manyNotesELF is a file over MaxELFInMemory (so it is streamed) whose head
// holds n PT_NOTE program headers, each naming the whole 64 KiB head.
func manyNotesELF(n int) []byte {
	b := elf64(n, 0, 0, 0)
	for range n {
		b = append(b, prog64(elf.PT_NOTE, 0, elfHeadBytes)...)
	}
	return append(b, make([]byte, int(DefaultLimits.MaxELFInMemory)+1<<20-len(b))...)
}

// manySectionsELF is a file read whole (under MaxELFInMemory) with n
// .note.gnu.property sections, each naming the same 64 KiB of notes.
func manySectionsELF(n int) []byte {
	le := binary.LittleEndian
	strtab := "\x00.note.gnu.property\x00.shstrtab\x00"
	const notesOff, notesLen = 128, 64 << 10
	shoff := uint64(notesOff + notesLen)
	b := elf64(0, n, 1, shoff)
	b = append(b, strtab...)
	b = append(b, make([]byte, int(shoff)-len(b))...)
	sh := func(name, typ uint32, off, size uint64) []byte {
		s := make([]byte, 64)
		le.PutUint32(s, name)
		le.PutUint32(s[4:], typ)
		le.PutUint64(s[24:], off)
		le.PutUint64(s[32:], size)
		return s
	}
	b = append(b, make([]byte, 64)...)                                        // SHN_UNDEF
	b = append(b, sh(20, uint32(elf.SHT_STRTAB), 64, uint64(len(strtab)))...) // .shstrtab
	for range n - 2 {
		b = append(b, sh(1, uint32(elf.SHT_NOTE), notesOff, notesLen)...)
	}
	return b
}

// ustar returns a tar header block.
func ustar(name string, typ byte, size int64) []byte {
	b := make([]byte, 512)
	copy(b, name)
	copy(b[100:], "0000755\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], "00000000000\x00")
	b[156] = typ
	copy(b[257:], "ustar\x0000")
	copy(b[148:], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

func pad512(b []byte) []byte { return append(b, make([]byte, (512-len(b)%512)%512)...) }

// paxRecord formats one PAX record, its length counting itself.
func paxRecord(k, v string) string {
	s := " " + k + "=" + v + "\n"
	n := len(s) + 1
	for len(fmt.Sprint(n))+len(s) != n {
		n++
	}
	return fmt.Sprint(n) + s
}

// sparseTar is a tar stream holding one PAX sparse 1.0 file at name: its
// logical size is realSize, its stored bytes only the head and tail
// regions given.
func sparseTar(name string, realSize int64, head, tail []byte) []byte {
	recs := paxRecord("GNU.sparse.major", "1") + paxRecord("GNU.sparse.minor", "0") +
		paxRecord("GNU.sparse.name", name) + paxRecord("GNU.sparse.realsize", fmt.Sprint(realSize))
	var out []byte
	out = append(out, ustar("PaxHeaders/x", 'x', int64(len(recs)))...)
	out = append(out, pad512([]byte(recs))...)
	sparseMap := pad512(fmt.Appendf(nil, "2\n0\n%d\n%d\n%d\n", len(head), realSize-int64(len(tail)), len(tail)))
	data := append(append(sparseMap, head...), tail...)
	out = append(out, ustar("GNUSparseFile.0/x", '0', int64(len(data)))...)
	out = append(out, pad512(data)...)
	return append(out, make([]byte, 1024)...)
}

// rawLayer is a gzip layer of the tar stream b, as it is.
func rawLayer(t testing.TB, b []byte) v1.Layer {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	z := gz.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(z)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// deepPath is an absolute path of depth directories named "a", then app.
func deepPath(depth int) string { return "/" + strings.Repeat("a/", depth) + "app" }
