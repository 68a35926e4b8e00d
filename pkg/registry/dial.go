package registry

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

// dialGuard dials registries, refusing after DNS resolution (in the
// dialer's Control hook, before connect) any address that is not public
// unless the registry is allowed: image references are chosen by pod
// creators, who must not make the webhook reach its own metrics port,
// cloud metadata or cluster-internal services.
type dialGuard struct {
	hosts map[string]bool // "host" or "host:port", lower case
	nets  []netip.Prefix
	// cluster holds the cluster's pod and Service CIDRs: refused even
	// when public, unless allowed in nets.
	cluster []netip.Prefix
	dialer  net.Dialer // with the Control check
	plain   net.Dialer // for allowed hosts
}

func newDialGuard(c *config) *dialGuard {
	g := &dialGuard{hosts: map[string]bool{}, nets: c.allowNets, cluster: c.clusterNets}
	for h := range c.allowHosts {
		g.hosts[h] = true
	}
	for h := range c.insecure {
		g.hosts[strings.ToLower(h)] = true
	}
	// Mirrors are named by the operator, like insecure registries.
	for _, h := range c.mirrors {
		g.hosts[strings.ToLower(h)] = true
	}
	// An HTTP(S) proxy from the environment is dialled instead of the
	// registry; the operator chose it, and it applies its own egress rules.
	for _, v := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		if u, err := url.Parse(os.Getenv(v)); err == nil && u.Host != "" {
			g.hosts[strings.ToLower(u.Host)] = true
		}
	}
	g.plain = net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	g.dialer = g.plain
	g.dialer.Control = g.control
	return g
}

// DialContext dials addr ("host:port" of the request URL, or of a
// redirect's target).
func (g *dialGuard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.hostAllowed(addr) {
		return g.plain.DialContext(ctx, network, addr)
	}
	return g.dialer.DialContext(ctx, network, addr)
}

func (g *dialGuard) hostAllowed(addr string) bool {
	addr = strings.ToLower(addr)
	if g.hosts[addr] {
		return true
	}
	host, _, err := net.SplitHostPort(addr)
	return err == nil && g.hosts[host]
}

// control runs after DNS resolution with the address about to be
// connected to.
func (g *dialGuard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check address %q", errRefused, address)
	}
	ip := ap.Addr().Unmap()
	// Metadata services first: no allowed CIDR reaches them.
	if name := inBlocks(ip, metadataAddresses); name != "" {
		return fmt.Errorf("%w: %s is the %s address, never a registry", errRefused, ip, name)
	}
	for _, p := range g.nets {
		if p.Contains(ip) {
			return nil
		}
	}
	for _, p := range g.cluster {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is in the cluster network %s; --allow-registry allows a registry there", errRefused, ip, p)
		}
	}
	if name := nonPublic(ip); name != "" {
		return fmt.Errorf("%w: %s is in %s; --allow-registry allows a registry there", errRefused, ip, name)
	}
	return nil
}

// CheckAllowed reports the first entry [WithAllowedRegistries] would
// reject, for checking flags up front.
func CheckAllowed(entries ...string) error {
	_, _, err := parseAllowed(entries)
	return err
}

// parseAllowed splits --allow-registry values into CIDRs (an IP alone is
// a one-address CIDR) and host names ("host" or "host:port").
func parseAllowed(entries []string) (hosts map[string]bool, nets []netip.Prefix, err error) {
	hosts = map[string]bool{}
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
			return nil, nil, fmt.Errorf("allowed registry: empty entry; want a host, host:port, IP or CIDR")
		case strings.Contains(e, "/"):
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, nil, fmt.Errorf("allowed registry %q: not a CIDR (want e.g. 10.0.0.0/8): %w", e, err)
			}
			nets = append(nets, p.Masked())
		default:
			if ip, err := netip.ParseAddr(e); err == nil {
				nets = append(nets, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
				continue
			}
			hosts[e] = true
		}
	}
	return hosts, nets, nil
}
