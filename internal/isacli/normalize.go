package isacli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/isamatch/isamatch/pkg/isa"
)

// Normalized is the --json form of Normalize.
type Normalized struct {
	Canonical  string   `json:"canonical"`
	Short      string   `json:"short"`
	Arch       isa.Arch `json:"arch"`
	XLEN       int      `json:"xlen"`
	Extensions []string `json:"extensions"`
	Unknown    []string `json:"unknown,omitempty"`
	X86Level   int      `json:"x86Level,omitempty"`
}

func Normalize(args []string, stdout io.Writer) error {
	fs := NewFlags("normalize")
	asJSON := fs.Bool("json", false, "print JSON")
	from := fs.String("from", "user", "how to read STRING: user (strict), cpuinfo (a /proc/cpuinfo isa value), gcc (a -march value), elf (an ELF arch attribute)")
	rest, err := ParseFlags(fs, args, 1, "one STRING")
	if err != nil {
		return err
	}
	var i isa.ISA
	switch *from {
	case "user":
		i, err = isa.Parse(rest[0])
	case "cpuinfo":
		i, err = isa.ParseCPUInfoRISCV(rest[0], isa.Hints{})
	case "gcc":
		i, err = isa.ParseGCCMarch(rest[0])
	case "elf":
		i, err = isa.ParseRISCVAttribute(rest[0])
	default:
		return fmt.Errorf("%w: --from=%q: want user, cpuinfo, gcc or elf", ErrUsage, *from)
	}
	if err != nil {
		return err
	}
	n := Normalized{
		Canonical: i.String(), Short: i.Short(), Arch: i.Arch, XLEN: i.XLEN(),
		Extensions: i.Extensions(), Unknown: i.Unknown, X86Level: isa.X86Level(i),
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(n)
	}
	fmt.Fprintf(stdout, "canonical:  %s\n", n.Canonical)
	fmt.Fprintf(stdout, "short:      %s\n", n.Short)
	fmt.Fprintf(stdout, "arch:       %s\n", n.Arch)
	fmt.Fprintf(stdout, "xlen:       %d\n", n.XLEN)
	if n.X86Level > 0 {
		fmt.Fprintf(stdout, "x86-64 level: %d\n", n.X86Level)
	}
	fmt.Fprintf(stdout, "extensions: %s\n", strings.Join(n.Extensions, " "))
	if len(n.Unknown) > 0 {
		fmt.Fprintf(stdout, "unknown:    %s\n", strings.Join(n.Unknown, " "))
	}
	return nil
}
