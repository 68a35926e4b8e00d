package isa_test

import (
	"fmt"

	"github.com/isamatch/isamatch/pkg/isa"
)

func ExampleParse() {
	i, err := isa.Parse("RV64IMFD")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(i.Arch, i.Short())
	fmt.Println(i.String())

	_, err = isa.Parse("rv64gc_zbx")
	fmt.Println(err != nil)
	// Output:
	// riscv64 rv64imfd_zicsr_zmmul
	// rv64i2p1_m2p0_f2p2_d2p2_zicsr2p0_zmmul1p0
	// true
}

func ExampleSatisfies() {
	req, _ := isa.Parse("RV64IMFD")
	imfd, _ := isa.Parse("RV64IMFD")
	imfdv, _ := isa.Parse("RV64IMFDV")
	// A T-Head C910 whose kernel prints the pre-ratification vector as "v".
	th1520, _ := isa.ParseCPUInfoRISCV("rv64imafdcvsu", isa.Hints{VectorVersion: "0.7.1"})
	v, _ := isa.Parse("rv64gcv")

	fmt.Println(isa.Satisfies(imfd, req), isa.Satisfies(imfdv, req))
	fmt.Println(isa.Affinity(imfd, req) > isa.Affinity(imfdv, req))
	fmt.Println(isa.Satisfies(th1520, v), isa.Missing(th1520, v)[0])
	// Output:
	// true true
	// true
	// false v
}

func ExampleRequirements() {
	req, _ := isa.Parse("x86-64-v2+avx512vnni")
	for _, r := range isa.Requirements(req, false) {
		fmt.Println(r.Key, r.Operator, r.Values)
	}
	// Output:
	// isa.isamatch.io/arch In [amd64]
	// isa.isamatch.io/x86-64-level Gt [1]
	// isa.isamatch.io/x86.avx512vnni Exists []
}
