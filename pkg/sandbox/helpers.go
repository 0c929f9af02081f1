package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/procutil"
)

// The sandbox's own daemons are ovnk-sandbox itself, through hidden subcommands: the
// forwarder and the outside world's who-am-i server. Each command
// line names the sandbox directory, which is how their pids are recognised.

// helperTimeout bounds the start of one of the sandbox's own daemons.
const helperTimeout = 30 * time.Second

func (s *Sandbox) forwarder() *daemon { return daemonAt(s.Dir, "forwarder", "forwarder") }
func (s *Sandbox) whoami() *daemon    { return daemonAt(s.Dir, "who-am-i server", "whoami") }

// startWhoAmI starts the who-am-i server inside the outside world's namespace.
func (s *Sandbox) startWhoAmI(ctx context.Context, helper string) error {
	d := s.whoami()
	argv := nsenterArgv(s.Outside, helper, "whoami", "--dir", s.Dir, "--listen", whoAmIAddr)
	if err := d.startDetached(s.Dir, nil, argv...); err != nil {
		return err
	}
	return waitStarted(ctx, d, helperTimeout, "the who-am-i server in "+s.Outside, dialsIn(s.Outside, whoAmIAddr))
}

// forwards lists what the forwarder carries: into each node, the API server on the
// node's 127.0.0.1:6443; out of each node, the agent's HTTP endpoint on a host port.
func (s *Sandbox) forwards() []Forward {
	api := strings.TrimPrefix(s.APIServer, "https://")
	var out []Forward
	for _, n := range s.Nodes {
		out = append(out,
			Forward{ListenNetns: n.Netns, Listen: nodeAPIServer, Dial: api},
			Forward{Listen: n.HTTPAddress, DialNetns: n.Netns, Dial: nodeAgentHTTP})
	}
	return out
}

// proxy is the API server's way into the nodes: a node's address through its own
// namespace (its kubelet), the pods' addresses through the first node's, whose
// management port routes the cluster subnet as every node's does.
func (s *Sandbox) proxy() *Proxy {
	p := &Proxy{Socket: s.proxySocket()}
	for _, n := range s.Nodes {
		addr := netip.MustParsePrefix(n.Address).Addr()
		p.Routes = append(p.Routes, ProxyRoute{Prefix: netip.PrefixFrom(addr, addr.BitLen()), Netns: n.Netns})
	}
	p.Routes = append(p.Routes, ProxyRoute{Prefix: defaultSubnet.CIDR, Netns: s.Nodes[0].Netns})
	return p
}

// forwarderReady checks that every listener of the forwarder accepts connections.
func (s *Sandbox) forwarderReady(ctx context.Context) error {
	for _, f := range s.forwards() {
		if err := dialsIn(f.ListenNetns, f.Listen)(ctx); err != nil {
			return err
		}
	}
	return poll.Dials("unix", s.proxySocket())(ctx)
}

// startForwarder picks a free host port for each agent's HTTP endpoint, writes the
// forwarder's configuration and starts it; a port taken meanwhile means new ports.
func (s *Sandbox) startForwarder(ctx context.Context, helper string) error {
	config := filepath.Join(s.Dir, forwardFile)
	return retryOnPortClash(func() (*daemon, error) {
		for i := range s.Nodes {
			port, err := procutil.FreePort()
			if err != nil {
				return nil, err
			}
			s.Nodes[i].HTTPAddress = "127.0.0.1:" + strconv.Itoa(port)
		}
		data, err := json.MarshalIndent(ForwarderConfig{Forwards: s.forwards(), Proxy: s.proxy()}, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode the forwarder's configuration: %w", err)
		}
		if err := os.WriteFile(config, append(data, '\n'), 0o644); err != nil {
			return nil, fmt.Errorf("write the forwarder's configuration: %w", err)
		}
		d := s.forwarder()
		if err := d.startDetached(s.Dir, nil, helper, "forward", "--config", config); err != nil {
			return nil, err
		}
		return d, waitStarted(ctx, d, helperTimeout, "the forwarder to listen", s.forwarderReady)
	})
}
