package cluster

import "testing"

func TestRegistrationOf(t *testing.T) {
	text := "disabled\ninterpreter /usr/libexec/qemu-binfmt/riscv64-binfmt-P\nflags: POCF\noffset 0\n" +
		"magic 7f454c460201010000000000000000000200f300\nmask ffffffffffffff00fffffffffffffffffeffffff\n"
	line, enabled := registrationOf("qemu-riscv64", text)
	want := `:qemu-riscv64:M:0:\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xf3\x00:` +
		`\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/libexec/qemu-binfmt/riscv64-binfmt-P:POCF`
	if line != want || enabled {
		t.Errorf("registrationOf() = %q, %v; want %q, false", line, enabled, want)
	}
}
