package isa

// RISC-V profiles: the names Parse accepts and the extension strings LLVM
// expands them to.

import "strings"

// profile is one RISC-V profile and the extension string LLVM expands it to.
type profile struct {
	name         string
	march        string
	experimental bool
}

const (
	rva20u64Base = "rv64i_m_a_f_d_c_zicsr_zicntr_ziccif_ziccrse_ziccamoa_zicclsm"
	rva22u64     = rva20u64Base + "_za64rs_zihpm_zihintpause_b_zic64b_zicbom_zicbop_zicboz_zfhmin_zkt"
	rva23u64     = rva22u64 + "_v_zvfhmin_zvbb_zvkt_zihintntl_zicond_zimop_zcmop_zcb_zfa_zawrs_supm"
	rvb23u64     = rva20u64Base + "_zihpm_za64rs_zihintpause_b_zic64b_zicbom_zicbop_zicboz_zkt_zihintntl_zicond_zimop_zcmop_zcb_zfa_zawrs"
	rva20s64Base = "_zifencei_svbare_svade_ssccptr_sstvecd_sstvala"
	rva22s64Base = rva20s64Base + "_sscounterenw_svpbmt_svinval"
	rva23s64     = rva23u64 + rva22s64Base + "_svnapot_sstc_sscofpmf_ssnpm_ssu64xl_sha"
	rvb23s64     = rvb23u64 + "_zifencei_svnapot_svbare_svade_ssccptr_sstvecd_sstvala_sscounterenw_svpbmt_svinval_sstc_sscofpmf_ssu64xl"
)

// profiles follows LLVM RISCVProfiles.td (see testdata/profiles.txt).
var profiles = []profile{
	{name: "rvi20u32", march: "rv32i"},
	{name: "rvi20u64", march: "rv64i"},
	{name: "rva20u64", march: rva20u64Base + "_za128rs"},
	{name: "rva20s64", march: rva20u64Base + "_za128rs" + rva20s64Base},
	{name: "rva22u64", march: rva22u64},
	{name: "rva22s64", march: rva22u64 + rva22s64Base},
	{name: "rva23u64", march: rva23u64},
	{name: "rva23s64", march: rva23s64},
	{name: "rvb23u64", march: rvb23u64},
	{name: "rvb23s64", march: rvb23s64},
	{name: "rvm23u32", march: "rv32i_m_b_zicond_zihintpause_zihintntl_zce_zicbop_zimop_zcmop", experimental: true},
	{name: "rva23p1s64", march: rva23s64, experimental: true},
	{name: "rvb23p1s64", march: rvb23s64, experimental: true},
}

func findProfile(s string) (profile, bool) {
	for _, p := range profiles {
		if strings.HasPrefix(s, p.name) {
			return p, true
		}
	}
	return profile{}, false
}
