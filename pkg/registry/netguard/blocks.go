package netguard

import (
	"fmt"
	"net/netip"
	"strings"
)

// addressBlock is one block of addresses a registry is never dialled at
// unless an operator allows it, with the name its registry gives it.
type addressBlock struct {
	prefix netip.Prefix
	name   string
}

func block(cidr, name string) addressBlock {
	return addressBlock{prefix: netip.MustParsePrefix(cidr), name: name}
}

// metadataAddresses are the cloud instance metadata and platform services:
// they hand out node credentials to whoever reaches them, so they are
// refused even inside a CIDR an operator allowed. Some are public
// addresses (Azure's WireServer), which no special-purpose block covers.
var metadataAddresses = []addressBlock{
	block("169.254.169.254/32", "cloud instance metadata (AWS, GCP, Azure, OCI, OpenStack)"),
	block("169.254.170.2/32", "AWS ECS task metadata"),
	block("169.254.169.253/32", "AWS VPC DNS"),
	block("169.254.169.123/32", "AWS Time Sync"),
	block("fd00:ec2::254/128", "AWS EC2 instance metadata (IPv6)"),
	block("fd00:ec2::23/128", "AWS EC2 ECS task metadata (IPv6)"),
	block("fd20:ce::254/128", "Google Compute Engine metadata (IPv6)"),
	block("168.63.129.16/32", "Azure platform WireServer metadata"),
	block("100.100.100.200/32", "Alibaba Cloud instance metadata"),
	block("192.0.0.192/32", "Oracle Cloud Classic metadata"),
}

// specialPurpose is the IANA IPv4 and IPv6 Special-Purpose Address
// Registries (iana-ipv4-special-registry, iana-ipv6-special-registry),
// every block, globally reachable or not: no registry an image names lives
// in any of them. Multicast, IPv6 site-local and the IPv4-compatible
// range, from the address space registries, are added. The most specific
// block comes first so the error names it.
var specialPurpose = []addressBlock{
	// IPv4.
	block("0.0.0.0/8", `"This network" (RFC 791)`),
	block("10.0.0.0/8", "Private-Use (RFC 1918)"),
	block("100.64.0.0/10", "Shared Address Space, CGNAT (RFC 6598)"),
	block("127.0.0.0/8", "Loopback (RFC 1122)"),
	block("169.254.0.0/16", "Link Local (RFC 3927)"),
	block("172.16.0.0/12", "Private-Use (RFC 1918)"),
	block("192.0.0.0/29", "IPv4 Service Continuity Prefix (RFC 7335), IETF Protocol Assignments"),
	block("192.0.0.8/32", "IPv4 dummy address (RFC 7600), IETF Protocol Assignments"),
	block("192.0.0.9/32", "Port Control Protocol Anycast (RFC 7723), IETF Protocol Assignments"),
	block("192.0.0.10/32", "Traversal Using Relays around NAT Anycast (RFC 8155), IETF Protocol Assignments"),
	block("192.0.0.170/31", "NAT64/DNS64 Discovery (RFC 8880), IETF Protocol Assignments"),
	block("192.0.0.0/24", "IETF Protocol Assignments (RFC 6890)"),
	block("192.0.2.0/24", "Documentation TEST-NET-1 (RFC 5737)"),
	block("192.31.196.0/24", "AS112-v4 (RFC 7535)"),
	block("192.52.193.0/24", "AMT (RFC 7450)"),
	block("192.88.99.0/24", "Deprecated 6to4 Relay Anycast (RFC 7526)"),
	block("192.168.0.0/16", "Private-Use (RFC 1918)"),
	block("192.175.48.0/24", "Direct Delegation AS112 Service (RFC 7534)"),
	block("198.18.0.0/15", "Benchmarking (RFC 2544)"),
	block("198.51.100.0/24", "Documentation TEST-NET-2 (RFC 5737)"),
	block("203.0.113.0/24", "Documentation TEST-NET-3 (RFC 5737)"),
	block("224.0.0.0/4", "Multicast (RFC 5771)"),
	block("255.255.255.255/32", "Limited Broadcast (RFC 8190)"),
	block("240.0.0.0/4", "Reserved (RFC 1112)"),
	// IPv6.
	block("::/128", "Unspecified Address (RFC 4291)"),
	block("::1/128", "Loopback Address (RFC 4291)"),
	block("::ffff:0:0/96", "IPv4-mapped Address (RFC 4291)"),
	block("::/96", "IPv4-compatible Address, deprecated (RFC 4291)"),
	block("64:ff9b::/96", "IPv4-IPv6 Translation, NAT64 (RFC 6052)"),
	block("64:ff9b:1::/48", "IPv4-IPv6 Translation, local use (RFC 8215)"),
	block("100::/64", "Discard-Only Address Block (RFC 6666)"),
	block("100:0:0:1::/64", "Dummy IPv6 Prefix (RFC 9780)"),
	block("2001:1::1/128", "Port Control Protocol Anycast (RFC 7723)"),
	block("2001:1::2/128", "Traversal Using Relays around NAT Anycast (RFC 8155)"),
	block("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast (RFC 9665)"),
	block("2001:2::/48", "Benchmarking (RFC 5180)"),
	block("2001:3::/32", "AMT (RFC 7450)"),
	block("2001:4:112::/48", "AS112-v6 (RFC 7535)"),
	block("2001:10::/28", "Deprecated ORCHID (RFC 4843)"),
	block("2001:20::/28", "ORCHIDv2 (RFC 7343)"),
	block("2001:30::/28", "Drone Remote ID Protocol Entity Tags (RFC 9374)"),
	block("2001::/32", "TEREDO (RFC 4380)"),
	block("2001::/23", "IETF Protocol Assignments (RFC 2928)"),
	block("2001:db8::/32", "Documentation (RFC 3849)"),
	block("2002::/16", "6to4 (RFC 3056)"),
	block("2620:4f:8000::/48", "Direct Delegation AS112 Service (RFC 7534)"),
	block("3fff::/20", "Documentation (RFC 9637)"),
	block("5f00::/16", "Segment Routing SIDs (RFC 9602)"),
	block("fc00::/7", "Unique-Local, private (RFC 4193)"),
	block("fe80::/10", "Link-Local Unicast (RFC 4291)"),
	block("fec0::/10", "Site-Local, deprecated (RFC 3879)"),
	block("ff00::/8", "Multicast (RFC 4291)"),
}

// globalUnicast is the only IPv6 space IANA allocates to registries: an
// address outside it is reserved.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// inBlocks names the block of ip in blocks ("" when in none).
func inBlocks(ip netip.Addr, blocks []addressBlock) string {
	for _, b := range blocks {
		if b.prefix.Contains(ip) {
			return b.name
		}
	}
	return ""
}

// nonPublic names the special-purpose block of a non-public address (""
// for a public one). ip is unmapped (an IPv4-mapped address is judged as
// the IPv4 address it maps).
func nonPublic(ip netip.Addr) string {
	if name := inBlocks(ip, specialPurpose); name != "" {
		return name
	}
	if ip.Is6() && !globalUnicast.Contains(ip) {
		return "reserved address, not global unicast (outside 2000::/3)"
	}
	return ""
}

// ParseClusterNetworks parses the cluster's pod and Service CIDRs.
func ParseClusterNetworks(cidrs []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, c := range cidrs {
		c = strings.TrimSpace(c)
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("cluster network %q: not a CIDR (want e.g. 10.96.0.0/12 or fd00:10:96::/108): %w", c, err)
		}
		if p.Bits() == 0 {
			return nil, fmt.Errorf("cluster network %q: a /0 blocks every address; give the pod or Service CIDR", c)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
