// Package isa is the pure core of isamatch: it parses and normalises
// instruction-set descriptions (RISC-V ISA strings and profiles, x86-64 levels
// and feature flags, arm64 features, OCI platform variants), decides whether a
// node's ISA satisfies a request, ranks fits, and encodes both as Kubernetes
// label keys and node-selector requirements without importing Kubernetes.
//
// The entry points are [ParseRequest] for what users type (strict), the
// node-side parsers [ParseCPUInfoRISCV], [ParseX86Flags] and
// [ParseARM64Features] (tolerant of what real kernels print), [Satisfies] and
// [Affinity] for matching and ranking, and [NodeLabels] / [Requirements] for
// the label schema.
//
// # Model
//
// An [ISA] is an architecture plus the set of extensions it has, closed under
// implication, stored as a fixed bitset ([ExtSet]) so that [Satisfies] is a
// handful of AND-NOTs with no allocation. Bit i is the i-th entry of the
// architecture family's table, and table order is canonical print order.
//
// # RISC-V
//
// [ParseRISCV] follows LLVM's RISCVISAInfo::parseArchString (newest LLVM, as
// llvm-mc runs it, experimental extensions enabled and requiring their exact
// version). The extension table (names, default versions, experimental flag,
// direct implications) is generated from LLVM's RISCVFeatures.td as tabulated
// in testdata/implied.tsv (go generate; see internal/gen); the closure is
// computed here and LLVM's procedural rules are applied: 'g' = imafd + zicsr +
// zifencei, i is added when neither i nor e is given, C+D gives Zcd, C+F gives
// Zcf on RV32, Zce+F gives Zcf on RV32, Zca gives C when the F/D conditions
// hold (GCC PR119122), the umbrellas zk zkn zks zvkn zvknc zvkng zvks zvksc
// zvksg zce are added when all their parts are present, and dependency
// violations are errors with LLVM's text ("'zcmp' and 'zcd' extensions are
// incompatible", "'zcf' is only supported for 'rv32'", ...). Versions are
// validated but not stored: String prints default versions, exactly as
// LLVM's toString. All 458 rows of LLVM's own tests (testdata/llvm_cases.tsv)
// are checked; six attribute-arch rows are from an LLVM tree where six
// experimental extensions were at 0.19 (this table: 0.20) and are checked with
// the version changed (see versionDrift in llvm_test.go).
//
// Deviations from LLVM, all outside ParseRISCV except the first:
//   - xtheadvector (T-Head's pre-ratification vector 0.7.1, GCC's name) is in
//     the table although LLVM lacks it; it conflicts with v/zve*.
//   - [Parse] lower-cases first (the paper writes RV64IMFDV); ParseRISCV
//     rejects upper case as LLVM does.
//   - Every entry point but ParseRISCV adds B when Zba, Zbb and Zbs are all
//     present (kernels print the three, profiles and users say B).
//
// Requests may also name the bare architecture as kubernetes.io/arch spells
// it: "riscv64" is rv64i and "riscv32" rv32i, the base every node of the
// architecture has (as "amd64" is x86-64 and "arm64" fp+asimd). Spellings
// Parse does not take ("riscv", "rv64", "riscv64gc", "x86", "i386", "arm",
// "armv8.2-a", ...) get a ParseError whose hint says what to write.
//
// Profiles (rvi20u32/64, rva20u64, rva22u64, rva23u64, rvb23u64, the S-mode
// ones and LLVM's experimental rvm23u32, rva23p1s64, rvb23p1s64) expand to
// LLVM's lists; extra extensions follow after '_' ("rva23u64_zvbc").
//
// Unobservable extensions: kernels never report ziccif ziccrse ziccamoa
// zicclsm za64rs za128rs zic64b ziccamoc zama16b supm (memory-system
// guarantees with no user-visible trace). [Satisfies], [Missing], [Affinity]
// and [Requirements] ignore them in the request (they stay in the ISA's
// extension list for display), so a real RVA23 board matches rva23u64.
//
// Node side, [ParseCPUInfoRISCV] tolerates what kernels print: 's'/'u' misa
// letters are dropped, letters and multi-letter extensions come in any order,
// versions anywhere ("rv64i2p0m2p0..."; i2p0 means ISA spec 2.2, whose I
// contained zicsr and zifencei), duplicates, vendor tokens ("xv5-0p0") and
// unknown words ("ime") go to Unknown. Kernels before 6.4 printed only single
// letters (or a few newer multi-letter extensions, like SpacemiT's 6.1) while
// their base I meant Zicsr, Zifencei and the counters: when the string has no
// standard multi-letter extension, or names none of zicsr, zifencei and
// zicntr, all three are added. On a T-Head core with the pre-1.0 vector
// ([Hints]: mvendorid 0x5b7 with marchid 0 or a thead,c906/c910/c920 uarch,
// or a cpu-vector line "0.x") a bare 'v' means xtheadvector: v is dropped and
// xtheadvector set; xtheadvector never satisfies a v request. Without such
// hints (e.g. a Milk-V Duo vendor kernel that prints no vendor ids) 'v' is
// taken at face value: the probe must pass what it knows. [ParseGCCMarch]
// accepts GCC spellings the same tolerant way; [ParseRISCVAttribute] reads
// the normalised strings of ELF attributes.
//
// # x86-64
//
// Features use GCC/LLVM names (sse3, lzcnt, sahf, cx16, avx512vnni, amx-tile);
// [ParseX86Flags] maps the kernel's spellings (pni, abm, lahf_lm, avx512_vnni,
// amx_tile, sha_ni, ...) and ignores flags that are not ISA features. The
// baseline (x86-64-v1) is always present. Levels follow the psABI and glibc:
// v2 adds cx16 sahf popcnt sse3 ssse3 sse4.1 sse4.2; v3 avx avx2 bmi bmi2 f16c
// fma lzcnt movbe xsave; v4 avx512f/bw/cd/dq/vl. Requests: "x86-64",
// "x86-64-v2".."-v4", "amd64", "x86_64", each with optional "+feature".
//
// # arm64
//
// Features use the /proc/cpuinfo Features names (asimd, atomics, sve2, i8mm,
// ...); fp and asimd are always present; evtstrm and cpuid are not
// instructions and are ignored. Requests: "arm64" or "aarch64" with optional
// "+feature". OCI variants map to the mandatory user-visible features of the
// version (HINT-space features such as paca/pacg and bti are not required):
//
//	v8 (= "", v8.0)  fp asimd
//	v8.1  + crc32 atomics asimdrdm      v8.2  + dcpop
//	v8.3  + jscvt fcma lrcpc            v8.4  + dit uscat ilrcpc flagm asimddp
//	v8.5  + sb ssbs flagm2 frint dcpodp v8.6  + bf16 i8mm
//	v8.7  + afp wfxt                    v8.8  + mops hbc
//	v8.9  + cssc                        v9.N  = v8.(N+5) + sve sve2 (v9.5..v9.7 = v9.4)
//
// # Platforms
//
// [FromPlatform]: linux/riscv64 with no variant is the rv64gc baseline
// distributions build for (rv64imafdc_zicsr_zifencei); rva20u64, rva22u64,
// rva23u64 are the profiles; linux/amd64 ""/v1..v4 the level; linux/arm64 the
// table above. Anything else (arm, 386, other OSes, unknown variants) returns
// an error wrapping [ErrUnsupportedPlatform]; callers treat it as "no ISA
// constraint beyond the architecture".
//
// # Matching and ranking
//
// [Satisfies](node, req): same architecture (and so XLEN) and req ⊆ node.
// A [Request] lists alternatives separated by '|'. [Affinity] is the paper's
// instruction affinity |req| / |node| over the closed sets (unobservable
// extensions counted on neither side), 0 when the node does not satisfy the
// request: a request for RV64IMFD scores 1 on an IMFD node and less on an
// IMFDV node.
//
// # Labels
//
// [NodeLabels] writes, under [NativePrefix] (isa.isamatch.io/): arch, one
// "<fam>.<ext>=true" per extension (fam is rv, x86 or arm64), one
// "rv.<bundle>=true" per bundle the node has whole (g, rva20u64, rva22u64,
// rva23u64, rvb23u64), x86-64-level
// (amd64), ext-count and group ([GroupID]: the first 10 hex characters of the
// SHA-256 of String()). Emulation/cross capabilities go under [EmuPrefix]
// (qemu.isamatch.io/): "<arch>=true", "<fam>.<ext>=true",
// "ext-count.<arch>", and x86-64-level for amd64. riscv32 and riscv64 share
// the rv. keys. [Requirements] turns a request into ANDed node-selector
// requirements (arch In, then Exists for each bundle the request contains,
// largest first, and for a minimal generating set of the rest; an amd64
// level becomes "x86-64-level Gt N-1") that hold exactly on nodes whose labels
// satisfy it; [NodeFromLabels] reads labels back.
package isa
