package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestSpecialPurposeAddressesRefused: every address an image reference may
// not make the webhook connect to, one or two per block of the IANA
// special-purpose registries and each known cloud metadata address, is
// refused with the name of its block.
func TestSpecialPurposeAddressesRefused(t *testing.T) {
	tests := []struct {
		addr string
		text string // in the error
	}{
		{addr: "240.0.0.1", text: "Reserved"},
		{addr: "255.255.255.254", text: "Reserved"},
		{addr: "198.18.0.1", text: "Benchmarking"},
		{addr: "198.19.255.255", text: "Benchmarking"},
		{addr: "192.0.0.1", text: "IETF Protocol Assignments"},
		{addr: "192.0.2.1", text: "Documentation"},
		{addr: "198.51.100.7", text: "Documentation"},
		{addr: "203.0.113.9", text: "Documentation"},
		{addr: "192.88.99.1", text: "6to4 Relay Anycast"},
		{addr: "192.31.196.1", text: "AS112"},
		{addr: "192.52.193.1", text: "AMT"},
		{addr: "192.175.48.1", text: "AS112"},
		{addr: "fec0::1", text: "Site-Local"},
		{addr: "64:ff9b::a00:1", text: "IPv4-IPv6 Translation"},
		{addr: "64:ff9b:1::1", text: "IPv4-IPv6 Translation"},
		{addr: "100::1", text: "Discard-Only"},
		{addr: "2001::1", text: "TEREDO"},
		{addr: "2001:2::1", text: "Benchmarking"},
		{addr: "2001:db8::1", text: "Documentation"},
		{addr: "3fff::1", text: "Documentation"},
		{addr: "2002:a00:1::1", text: "6to4"},
		{addr: "5f00::1", text: "Segment Routing"},
		{addr: "2001:20::1", text: "ORCHIDv2"},
		{addr: "::a00:1", text: "IPv4-compatible"},
		{addr: "4000::1", text: "not global unicast"},
		{addr: "168.63.129.16", text: "Azure"},
		{addr: "100.100.100.200", text: "Alibaba"},
		{addr: "169.254.169.254", text: "metadata"},
		{addr: "169.254.170.2", text: "ECS"},
		{addr: "fd00:ec2::254", text: "EC2"},
		{addr: "fd20:ce::254", text: "Google"},
		{addr: "::ffff:169.254.169.254", text: "metadata"},
	}
	g := newGuard(t, Options{})
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			err := g.control("tcp", netip.AddrPortFrom(netip.MustParseAddr(tc.addr), 443).String(), nil)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("dialling %s: error %v, want it refused naming %q", tc.addr, err, tc.text)
			}
		})
	}
	for _, public := range []string{"8.8.8.8", "1.1.1.1", "151.101.1.1", "2606:4700::1111", "2a00:1450:4001:80b::200e"} {
		t.Run(public, func(t *testing.T) {
			if err := g.control("tcp", netip.AddrPortFrom(netip.MustParseAddr(public), 443).String(), nil); err != nil {
				t.Errorf("dialling public %s: %v, want allowed", public, err)
			}
		})
	}
}

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// TestEveryBlockRefused: the first and last address of every special-purpose
// block and every metadata address are refused, naming a block.
func TestEveryBlockRefused(t *testing.T) {
	g := newGuard(t, Options{})
	for _, b := range append(append([]addressBlock{}, specialPurpose...), metadataAddresses...) {
		for _, ip := range []netip.Addr{b.prefix.Addr(), lastAddr(b.prefix)} {
			t.Run(b.name+" "+ip.String(), func(t *testing.T) {
				err := g.control("tcp", netip.AddrPortFrom(ip, 443).String(), nil)
				if !errors.Is(err, ErrRefused) {
					t.Errorf("dialling %s (%s): %v, want refused", ip, b.name, err)
				}
			})
		}
	}
}

// TestClusterNetworks: the cluster's pod and Service CIDRs are refused even
// when public, unless an operator allows a registry there; a bad CIDR is
// named in the error.
func TestClusterNetworks(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		addr    string
		wantErr string // "" means allowed
	}{
		{name: "public pod CIDR refused", opts: Options{ClusterNetworks: []string{"34.118.224.0/20"}}, addr: "34.118.230.7", wantErr: "cluster network 34.118.224.0/20"},
		{name: "IPv6 Service CIDR refused", opts: Options{ClusterNetworks: []string{"2600:1900:4000::/108"}}, addr: "2600:1900:4000::10", wantErr: "cluster network 2600:1900:4000::/108"},
		{name: "outside the cluster networks", opts: Options{ClusterNetworks: []string{"34.118.224.0/20"}}, addr: "34.118.240.1"},
		{name: "allowed registry inside", opts: Options{ClusterNetworks: []string{"34.118.224.0/20"}, Allowed: []string{"34.118.230.7"}}, addr: "34.118.230.7"},
		{name: "metadata never allowed", opts: Options{Allowed: []string{"168.63.0.0/16"}}, addr: "168.63.129.16", wantErr: "Azure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := newGuard(t, tc.opts).control("tcp", netip.AddrPortFrom(netip.MustParseAddr(tc.addr), 443).String(), nil)
			if tc.wantErr == "" && err != nil {
				t.Errorf("dialling %s: %v, want allowed", tc.addr, err)
			}
			if tc.wantErr != "" && (!errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("dialling %s: %v, want refused naming %q", tc.addr, err, tc.wantErr)
			}
		})
	}
	for _, bad := range []struct{ cidr, want string }{
		{"10.96.0.0/33", `cluster network "10.96.0.0/33": not a CIDR`},
		{"10.96.0.1", `cluster network "10.96.0.1": not a CIDR`},
		{"0.0.0.0/0", `cluster network "0.0.0.0/0": a /0 blocks every address`},
	} {
		t.Run("bad "+bad.cidr, func(t *testing.T) {
			if _, err := New(Options{ClusterNetworks: []string{bad.cidr}}); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("New with cluster network %q: %v, want an error containing %q", bad.cidr, err, bad.want)
			}
		})
	}
}

// newGuard returns the Guard of o, failing the test on a bad option.
func newGuard(t *testing.T, o Options) *Guard {
	t.Helper()
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
