package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrRefused marks a connection the guard would not make; the error
// wrapping it names the address and why.
var ErrRefused = errors.New("refused")

// Options says which non-public registries a Guard dials. The zero value
// refuses every non-public address.
type Options struct {
	// Allowed are the operator's --allow-registry entries: a host or
	// host:port as written in image references (dialled whatever it
	// resolves to), or an IP address or CIDR (those addresses, for any
	// host name).
	Allowed []string
	// Hosts are further "host" or "host:port" entries dialled whatever
	// they resolve to: the registries the operator named otherwise
	// (insecure registries, mirrors).
	Hosts []string
	// ClusterNetworks are the cluster's pod and Service CIDRs: refused
	// even when public, unless an Allowed CIDR holds the address.
	ClusterNetworks []string
}

// Validate reports the first entry of Allowed or ClusterNetworks that does
// not parse, naming it and what is wanted.
func (o Options) Validate() error {
	if _, _, err := ParseAllowed(o.Allowed); err != nil {
		return err
	}
	_, err := ParseClusterNetworks(o.ClusterNetworks)
	return err
}

// Guard dials registries, refusing after DNS resolution (in the dialer's
// Control hook, before connect) any address that is not public unless the
// registry is allowed: image references are chosen by pod creators, who
// must not make the webhook reach its own metrics port, cloud metadata or
// cluster-internal services.
type Guard struct {
	hosts map[string]bool // "host" or "host:port", lower case
	nets  []netip.Prefix
	// cluster holds the cluster's pod and Service CIDRs: refused even
	// when public, unless allowed in nets.
	cluster []netip.Prefix
	dialer  net.Dialer // with the Control check
	plain   net.Dialer // for allowed hosts
}

// New returns the Guard of o, or o's first bad entry.
func New(o Options) (*Guard, error) {
	allowed, nets, err := ParseAllowed(o.Allowed)
	if err != nil {
		return nil, err
	}
	cluster, err := ParseClusterNetworks(o.ClusterNetworks)
	if err != nil {
		return nil, err
	}
	g := &Guard{hosts: allowed, nets: nets, cluster: cluster}
	for _, h := range o.Hosts {
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
	return g, nil
}

// DialContext dials addr ("host:port" of the request URL, or of a
// redirect's target).
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.hostAllowed(addr) {
		return g.plain.DialContext(ctx, network, addr)
	}
	return g.dialer.DialContext(ctx, network, addr)
}

func (g *Guard) hostAllowed(addr string) bool {
	addr = strings.ToLower(addr)
	if g.hosts[addr] {
		return true
	}
	host, _, err := net.SplitHostPort(addr)
	return err == nil && g.hosts[host]
}

// control runs after DNS resolution with the address about to be
// connected to.
func (g *Guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check address %q", ErrRefused, address)
	}
	ip := ap.Addr().Unmap()
	// Metadata services first: no allowed CIDR reaches them.
	if name := inBlocks(ip, metadataAddresses); name != "" {
		return fmt.Errorf("%w: %s is the %s address, never a registry", ErrRefused, ip, name)
	}
	for _, p := range g.nets {
		if p.Contains(ip) {
			return nil
		}
	}
	for _, p := range g.cluster {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is in the cluster network %s; --allow-registry allows a registry there", ErrRefused, ip, p)
		}
	}
	if name := nonPublic(ip); name != "" {
		return fmt.Errorf("%w: %s is in %s; --allow-registry allows a registry there", ErrRefused, ip, name)
	}
	return nil
}

// ParseAllowed splits --allow-registry values into CIDRs (an IP alone is
// a one-address CIDR) and host names ("host" or "host:port").
func ParseAllowed(entries []string) (hosts map[string]bool, nets []netip.Prefix, err error) {
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
