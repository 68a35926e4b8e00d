package imageisa

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Build-attribute constants of the RISC-V psABI ("RISC-V ELF attributes").
const (
	attrFormatVersion = 'A' // first byte of .riscv.attributes
	attrVendorRISCV   = "riscv"
	attrTagFile       = 1 // Tag_File: the sub-subsection applies to the whole object
	attrTagRISCVArch  = 5 // Tag_RISCV_arch: NTBS, the normalised ISA string
	maxArchStringLen  = 4096
)

var errAttr = errors.New("malformed .riscv.attributes")

// parseRISCVAttributes returns the Tag_RISCV_arch string of a
// .riscv.attributes section, or "" when the section has none. The format is
// the generic ELF build-attributes layout: 'A', then subsections
// <uint32 length><NTBS vendor><sub-subsections>, each sub-subsection
// <uleb128 tag><uint32 length><attributes>, each attribute <uleb128 tag> then
// an NTBS value for odd tags and a ULEB128 value for even ones (the psABI's
// rule for tags a reader does not know). Every length is checked against what
// remains and every step consumes at least one byte, so a hostile section
// ends in an error, never a panic or a loop; subsections of other vendors are
// skipped by their length.
func parseRISCVAttributes(data []byte, bo binary.ByteOrder) (string, error) {
	if len(data) == 0 {
		return "", fmt.Errorf("%w: empty section", errAttr)
	}
	if data[0] != attrFormatVersion {
		return "", fmt.Errorf("%w: format version %q, want 'A'", errAttr, data[0])
	}
	rest := data[1:]
	arch := ""
	for len(rest) > 0 {
		if len(rest) < 4 {
			return "", fmt.Errorf("%w: subsection length truncated", errAttr)
		}
		n := uint64(bo.Uint32(rest))
		if n < 4 || n > uint64(len(rest)) {
			return "", fmt.Errorf("%w: subsection length %d, %d bytes left", errAttr, n, len(rest))
		}
		sub := rest[4:n]
		rest = rest[n:]
		vendor, body, err := cstring(sub)
		if err != nil {
			return "", fmt.Errorf("%w: vendor name: %w", errAttr, err)
		}
		if vendor != attrVendorRISCV {
			continue
		}
		a, err := parseSubsection(body, bo)
		if err != nil {
			return "", err
		}
		if a != "" {
			arch = a
		}
	}
	return arch, nil
}

// parseSubsection walks the sub-subsections of the "riscv" vendor
// subsection and returns the Tag_RISCV_arch of the Tag_File one.
func parseSubsection(body []byte, bo binary.ByteOrder) (string, error) {
	arch := ""
	for len(body) > 0 {
		tag, k, err := uleb128(body)
		if err != nil {
			return "", fmt.Errorf("%w: sub-subsection tag: %w", errAttr, err)
		}
		if len(body) < k+4 {
			return "", fmt.Errorf("%w: sub-subsection length truncated", errAttr)
		}
		n := uint64(bo.Uint32(body[k:]))
		if n < uint64(k+4) || n > uint64(len(body)) {
			return "", fmt.Errorf("%w: sub-subsection length %d, %d bytes left", errAttr, n, len(body))
		}
		attrs := body[k+4 : n]
		body = body[n:]
		if tag != attrTagFile {
			// Tag_Section and Tag_Symbol lists describe parts of an object;
			// an executable's requirement is its Tag_File.
			continue
		}
		a, err := parseAttrs(attrs)
		if err != nil {
			return "", err
		}
		if a != "" {
			arch = a
		}
	}
	return arch, nil
}

func parseAttrs(attrs []byte) (string, error) {
	arch := ""
	for len(attrs) > 0 {
		tag, k, err := uleb128(attrs)
		if err != nil {
			return "", fmt.Errorf("%w: attribute tag: %w", errAttr, err)
		}
		attrs = attrs[k:]
		if tag%2 == 0 {
			if _, k, err = uleb128(attrs); err != nil {
				return "", fmt.Errorf("%w: value of tag %d: %w", errAttr, tag, err)
			}
			attrs = attrs[k:]
			continue
		}
		s, after, err := cstring(attrs)
		if err != nil {
			return "", fmt.Errorf("%w: value of tag %d: %w", errAttr, tag, err)
		}
		attrs = after
		if tag == attrTagRISCVArch {
			if len(s) > maxArchStringLen {
				return "", fmt.Errorf("%w: Tag_RISCV_arch is %d bytes, limit %d", errAttr, len(s), maxArchStringLen)
			}
			arch = s
		}
	}
	return arch, nil
}

// uleb128 decodes an unsigned LEB128 number of at most 64 bits and returns
// it with the number of bytes it used.
func uleb128(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		if i == 9 && c > 1 {
			return 0, 0, errors.New("ULEB128 overflows 64 bits")
		}
		v |= uint64(c&0x7f) << (7 * uint(i))
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	if len(b) >= 10 {
		return 0, 0, errors.New("ULEB128 longer than 10 bytes")
	}
	return 0, 0, errors.New("ULEB128 truncated")
}

// cstring splits a NUL-terminated string off b.
func cstring(b []byte) (string, []byte, error) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", nil, errors.New("string not NUL-terminated")
	}
	return string(b[:i]), b[i+1:], nil
}
