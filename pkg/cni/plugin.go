// Package cni is ovnk's CNI plugin (cmd/ovnk-cni), which the container runtime runs on
// a node to wire each pod sandbox: ADD asks the node's agent for the pod's plan
// (package podnet) on the agent's unix socket, makes a veth per interface with the
// pod's end in the sandbox's network namespace, plugs the host end into br-int as a pod
// port (PortOwner's) with the logical switch port's external_ids and waits until
// ovn-controller has installed it, all within one deadline; DEL removes what ADD made,
// by container id, without the agent; CHECK compares the sandbox with ADD's result.
// docs/agent.md ("CNI") has the protocol between plugin and agent.
package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/host/vswitch"
	"github.com/ovnk/ovnk/pkg/podnet"
)

// DefaultAddTimeout bounds a whole ADD, asking the agent and waiting for
// ovn-controller included. kubelet gives the runtime 2 minutes for a sandbox
// (--runtime-request-timeout), after which containerd's libcni kills the plugin with
// SIGKILL, which no handler sees: ADD stops by itself before that, and undoes its work
// within undoTimeout more.
const DefaultAddTimeout = 100 * time.Second

// undoTimeout bounds removing what a failed ADD made; with DefaultAddTimeout it stays
// under kubelet's 2 minutes.
const undoTimeout = 15 * time.Second

// Plugin carries out CNI commands. The zero value is the plugin as the runtime runs
// it; tests set the fields.
type Plugin struct {
	// HostNetns is the namespace that holds the host ends of the veths and in which
	// ovs-vswitchd runs: "" for the one the process runs in (the node's), or a path or
	// name under /run/netns.
	HostNetns string
	// Log receives a line per step; nil logs to the configuration's logFile, else to
	// stderr (which containerd copies into its own log).
	Log *log.Logger
	// HTTP asks the agent; nil dials the configuration's agentSocket.
	HTTP *http.Client
	// AddTimeout bounds a whole ADD; 0 means DefaultAddTimeout.
	AddTimeout time.Duration
}

// Run carries out the command of the environment (getenv) with the configuration on
// stdin, prints the result or the CNI error on stdout and returns the exit status: 0,
// or 1 after an error.
func (p *Plugin) Run(ctx context.Context, getenv func(string) string, stdin io.Reader, stdout io.Writer) int {
	cniVersion := SpecVersion
	fail := func(err error) int {
		var e *types.Error
		if !errors.As(err, &e) {
			e = types.NewError(CodeDataplane, err.Error(), "")
		}
		_ = json.NewEncoder(stdout).Encode(errorOutput{CNIVersion: cniVersion, Error: e})
		if p.Log != nil {
			p.Log.Printf("failed: %v", e)
		}
		return 1
	}
	a, err := ParseArgs(getenv)
	if err != nil {
		return fail(err)
	}
	if a.Command == "VERSION" {
		if err := version.PluginSupports(SupportedVersions...).Encode(stdout); err != nil {
			return fail(err)
		}
		return 0
	}
	input, err := io.ReadAll(stdin)
	if err != nil {
		return fail(types.NewError(CodeDecodingFailure, "read the network configuration from stdin", err.Error()))
	}
	c, err := ParseConfig(input)
	if err != nil {
		return fail(err)
	}
	cniVersion = c.CNIVersion
	if p.Log == nil {
		out := io.Writer(os.Stderr)
		if c.LogFile != "" {
			f, err := os.OpenFile(c.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return fail(errorf(CodeInvalidConfig, "network %q: logFile %s: %v", c.Name, c.LogFile, err))
			}
			defer f.Close()
			out = f
		}
		p.Log = log.New(out, fmt.Sprintf("ovnk-cni %s pod %s container %.12s: ", a.Command, a.Pod(), a.ContainerID), log.LstdFlags|log.Lmicroseconds)
	}
	switch a.Command {
	case "ADD":
		res, err := p.Add(ctx, a, c)
		if err != nil {
			return fail(err)
		}
		out, err := res.GetAsVersion(c.CNIVersion)
		if err != nil {
			return fail(err)
		}
		if err := out.PrintTo(stdout); err != nil {
			return fail(err)
		}
	case "DEL":
		if err := p.Del(ctx, a, c); err != nil {
			return fail(err)
		}
	case "CHECK":
		if err := p.Check(ctx, a, c); err != nil {
			return fail(err)
		}
	}
	return 0
}

func (p *Plugin) logf(format string, args ...any) {
	if p.Log != nil {
		p.Log.Printf(format, args...)
	}
}

func (p *Plugin) httpClient(c Config) *http.Client {
	if p.HTTP != nil {
		return p.HTTP
	}
	return agentClient(c.AgentSocket)
}

// dataplaneError is a failure to wire, unwire or check the pod, naming it.
func dataplaneError(a Args, err error) *types.Error {
	return types.NewError(CodeDataplane, fmt.Sprintf("%s of pod %s (container %s)", strings.ToLower(a.Command), a.Pod(), a.ContainerID), err.Error())
}

// Add wires the pod: it asks the agent for the plan, removes whatever an earlier ADD of
// the same container left (so a repeated ADD, or one after a plugin that died half-way,
// starts afresh), makes the interfaces and ports and waits for ovn-controller, all
// within AddTimeout. On any failure, the deadline included, it removes what it made
// before returning the error.
func (p *Plugin) Add(ctx context.Context, a Args, c Config) (*types100.Result, error) {
	timeout := p.AddTimeout
	if timeout <= 0 {
		timeout = DefaultAddTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	plan, err := fetchPlan(ctx, p.httpClient(c), c.AgentSocket, a, c.agentTimeout, p.logf)
	if err != nil {
		return nil, err
	}
	if a.PodUID != "" && plan.UID != a.PodUID {
		return nil, errorf(CodeAgentRefused, "pod %s: the agent planned UID %s, the sandbox is for UID %s", a.Pod(), plan.UID, a.PodUID)
	}
	// The first interface is the runtime's to name.
	plan.Interfaces = slices.Clone(plan.Interfaces)
	if len(plan.Interfaces) > 0 {
		plan.Interfaces[0].Name = a.IfName
	}
	if err := plan.Validate(); err != nil {
		return nil, types.NewError(CodeAgentRefused, fmt.Sprintf("the agent's plan of pod %s cannot be wired", a.Pod()), err.Error())
	}
	host, pod, ovs, err := p.open(ctx, a, c)
	if err != nil {
		return nil, dataplaneError(a, err)
	}
	defer host.Close()
	defer pod.Close()
	defer ovs.Close()
	if err := p.cleanup(ctx, host, ovs, c.Bridge, a.ContainerID); err != nil {
		return nil, dataplaneError(a, fmt.Errorf("remove an earlier wiring: %w", err))
	}
	res, ports, err := p.wire(ctx, host, pod, ovs, a, c, plan)
	if err == nil && c.installedTimeout > 0 {
		if err = waitInstalled(ctx, ovs, ports, c.installedTimeout); err != nil {
			err = types.NewError(CodeTryAgainLater, fmt.Sprintf("pod %s: ovn-controller has not installed its ports", a.Pod()), err.Error())
		}
	}
	if err != nil {
		// Undo with a context of its own: the caller's may be what ran out.
		undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		if cerr := p.cleanup(undo, host, ovs, c.Bridge, a.ContainerID); cerr != nil {
			p.logf("undo: %v", cerr)
		}
		var e *types.Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, dataplaneError(a, err)
	}
	p.logf("wired %d interfaces: %s", len(plan.Interfaces), strings.Join(ports, ", "))
	return res, nil
}

// open opens the host's and the pod's namespaces and connects to OVS.
func (p *Plugin) open(ctx context.Context, a Args, c Config) (host, pod *netconf.Namespace, ovs *vswitch.Client, err error) {
	if host, err = netconf.OpenNamespace(p.HostNetns); err != nil {
		return nil, nil, nil, err
	}
	if pod, err = netconf.OpenNamespace(a.Netns); err != nil {
		host.Close()
		return nil, nil, nil, err
	}
	if ovs, err = connectOVS(ctx, c.OVSAddress); err != nil {
		host.Close()
		pod.Close()
		return nil, nil, nil, err
	}
	return host, pod, ovs, nil
}

// wire makes every interface of the plan and returns the result and the ports.
func (p *Plugin) wire(ctx context.Context, host, pod *netconf.Namespace, ovs *vswitch.Client, a Args, c Config, plan podnet.Plan) (*types100.Result, []string, error) {
	var done []wired
	var ports []string
	for i, ifc := range plan.Interfaces {
		hostName := podnet.HostInterfaceName(a.ContainerID, i)
		hostMAC, err := createInterface(host, pod, hostName, ifc.Name, ifc)
		if err != nil {
			return nil, nil, err
		}
		if err := plugPort(ctx, ovs, c.Bridge, hostName, portIDs(plan, ifc, a.ContainerID)); err != nil {
			return nil, nil, err
		}
		ports = append(ports, hostName)
		done = append(done, wired{Interface: ifc, hostName: hostName, hostMAC: hostMAC})
		p.logf("interface %s (network %s, port %s): %s", ifc.Name, ifc.Network, ifc.IfaceID, hostName)
	}
	// Routes last: one through an interface may need another's subnet.
	for _, ifc := range plan.Interfaces {
		if err := addRoutes(pod, ifc.Name, ifc.Routes); err != nil {
			return nil, nil, err
		}
	}
	return resultOf(c.CNIVersion, a.Netns, done), ports, nil
}

// cleanup removes the sandbox's ports (unless ovs is nil) and host ends, found by
// container id.
func (p *Plugin) cleanup(ctx context.Context, host *netconf.Namespace, ovs *vswitch.Client, bridge, containerID string) error {
	var errs []error
	var ports []string
	if ovs != nil {
		var err error
		ports, err = unplugPorts(ctx, ovs, bridge, containerID)
		errs = append(errs, err)
	}
	links, err := removeHostEnds(host, containerID)
	errs = append(errs, err)
	if len(ports)+len(links) > 0 {
		p.logf("removed ports [%s] and veths [%s]", strings.Join(ports, " "), strings.Join(links, " "))
	}
	return errors.Join(errs...)
}

// Del removes the sandbox's ports and veths. It needs neither the agent nor the pod's
// namespace (which may be gone, taking the pod ends with it), and succeeds when there
// is nothing to remove, however often it is called. With the OVS database down it
// still removes the veths, and fails for the runtime to call again.
func (p *Plugin) Del(ctx context.Context, a Args, c Config) error {
	host, err := netconf.OpenNamespace(p.HostNetns)
	if err != nil {
		return dataplaneError(a, err)
	}
	defer host.Close()
	ovs, ovsErr := connectOVS(ctx, c.OVSAddress)
	if ovsErr == nil {
		defer ovs.Close()
	}
	if err := errors.Join(p.cleanup(ctx, host, ovs, c.Bridge, a.ContainerID), ovsErr); err != nil {
		return dataplaneError(a, err)
	}
	return nil
}

// Check compares the sandbox with the result of its ADD (prevResult): every pod
// interface is in the pod's namespace with its MAC and addresses, and every host end
// exists and is a pod port of the bridge tagged with the container id.
func (p *Plugin) Check(ctx context.Context, a Args, c Config) error {
	prev, err := c.previous()
	if err != nil {
		return types.NewError(CodeDecodingFailure, fmt.Sprintf("check of pod %s (container %s): prevResult", a.Pod(), a.ContainerID), err.Error())
	}
	if prev == nil {
		return errorf(CodeInvalidConfig, "check of pod %s (container %s): no prevResult to check against", a.Pod(), a.ContainerID)
	}
	host, pod, ovs, err := p.open(ctx, a, c)
	if err != nil {
		return dataplaneError(a, err)
	}
	defer host.Close()
	defer pod.Close()
	defer ovs.Close()
	ports, err := sandboxPorts(ctx, ovs, c.Bridge, a.ContainerID)
	if err != nil {
		return dataplaneError(a, err)
	}
	for i, ifc := range prev.Interfaces {
		if ifc.Sandbox == "" {
			if _, err := host.Handle.LinkByName(ifc.Name); err != nil {
				return dataplaneError(a, fmt.Errorf("host end %s in %s: %w", ifc.Name, host, err))
			}
			if !slices.Contains(ports, ifc.Name) {
				return dataplaneError(a, fmt.Errorf("host end %s is not a port of %s tagged %s=%s", ifc.Name, c.Bridge, sandboxKey, a.ContainerID))
			}
			continue
		}
		if ifc.Sandbox != a.Netns {
			return dataplaneError(a, fmt.Errorf("interface %s is in sandbox %s, not %s", ifc.Name, ifc.Sandbox, a.Netns))
		}
		var addrs []netip.Prefix
		for _, ip := range prev.IPs {
			if ip.Interface != nil && *ip.Interface == i {
				if pfx, ok := netconf.PrefixOf(&ip.Address); ok {
					addrs = append(addrs, pfx)
				}
			}
		}
		if err := checkInterface(pod, ifc.Name, ifc.Mac, addrs); err != nil {
			return dataplaneError(a, err)
		}
	}
	return nil
}
